/**
 * The kept self-test ({@link cachedSelfTest}) attacked: a pass is skipped only for the very sandbox it was
 * measured on, from a file only loopfleet writes. An agent's file in its worktree, an entry for another
 * key, a file others may write or reached through a link, a write from inside the sandbox, a weakened
 * sandbox and another bubblewrap binary each leave the self-test to run (and a weak sandbox to refuse).
 */
import { chmod, copyFile, mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExecaRunner } from '../../src/adapters/sandbox/execa-runner.js';
import {
  SELF_TEST_CACHE_FILE,
  cachedSelfTest,
  selfTestCacheDir,
  type SelfTestCache,
} from '../../src/adapters/sandbox/selftest-cache.js';
import type { ProcessRunner, RunOptions, RunResult } from '../../src/ports/process.js';

// Only bubblewrap's self-test is kept: on macOS Seatbelt is attacked at every start (a runner there has no
// sandbox identity), so the macOS job does not run this file.
const bubblewrap = process.platform === 'linux' && (await new ExecaRunner().sandboxAvailable());

/** The real runner, counting the commands it runs: the self-test is one sandboxed command. */
class Counting implements ProcessRunner {
  runs = 0;
  constructor(readonly inner: ExecaRunner = new ExecaRunner()) {}
  run(command: string, options: RunOptions): Promise<RunResult> {
    this.runs++;
    return this.inner.run(command, options);
  }
  sandboxAvailable(): Promise<boolean> {
    return this.inner.sandboxAvailable();
  }
  sandboxIdentity(): Promise<string | null> {
    return this.inner.sandboxIdentity();
  }
}

describe.runIf(bubblewrap)('the kept sandbox self-test', () => {
  let scratch: string;
  let repo: string;
  let cache: SelfTestCache;
  let passing: string;

  beforeAll(async () => {
    scratch = await mkdtemp(path.join(os.tmpdir(), 'lf-selftest-cache-'));
    repo = path.join(scratch, 'repo');
    await mkdir(path.join(repo, '.loop-worktrees', 'T-1'), { recursive: true });
    cache = { dir: path.join(scratch, 'home', '.cache', 'loopfleet'), untrusted: [repo] };
    // One real pass, kept: every attack below starts from the file it wrote.
    const first = new Counting();
    expect(await cachedSelfTest(first, cache)).toEqual([]);
    expect(first.runs).toBe(1);
    passing = await readFile(path.join(cache.dir, SELF_TEST_CACHE_FILE), 'utf8');
  });
  afterAll(async () => {
    await rm(scratch, { recursive: true, force: true });
  });

  async function restore(): Promise<void> {
    await mkdir(cache.dir, { recursive: true, mode: 0o700 });
    await chmod(cache.dir, 0o700);
    await rm(path.join(cache.dir, SELF_TEST_CACHE_FILE), { force: true });
    await writeFile(path.join(cache.dir, SELF_TEST_CACHE_FILE), passing, { mode: 0o600 });
  }

  it('is kept for the same sandbox: a new runner (a new session) does not attack it again', async () => {
    await restore();
    const again = new Counting();
    expect(await cachedSelfTest(again, cache)).toEqual([]);
    expect(again.runs).toBe(0);
    expect((await stat(path.join(cache.dir, SELF_TEST_CACHE_FILE))).mode & 0o777).toBe(0o600);
  });

  it("does not read an agent's passing file in its worktree (a cache folder inside the repository)", async () => {
    const planted = path.join(repo, '.loop-worktrees', 'T-1', '.cache', 'loopfleet');
    await mkdir(planted, { recursive: true, mode: 0o700 });
    await writeFile(path.join(planted, SELF_TEST_CACHE_FILE), passing, { mode: 0o600 });
    const runner = new Counting();
    expect(await cachedSelfTest(runner, { dir: planted, untrusted: [repo] })).toEqual([]);
    expect(runner.runs).toBe(1);
    // Nor does it write its pass there.
    expect(await readFile(path.join(planted, SELF_TEST_CACHE_FILE), 'utf8')).toBe(passing);
  });

  it('does not count an entry planted for another key', async () => {
    await restore();
    const forged = JSON.stringify({ format: 1, passed: ['0'.repeat(64), 'f'.repeat(64)] });
    await writeFile(path.join(cache.dir, SELF_TEST_CACHE_FILE), forged);
    const runner = new Counting();
    expect(await cachedSelfTest(runner, cache)).toEqual([]);
    expect(runner.runs).toBe(1);
  });

  it('does not trust a file others may write, a writable folder, or a link to a passing file', async () => {
    await restore();
    await chmod(path.join(cache.dir, SELF_TEST_CACHE_FILE), 0o666);
    const loose = new Counting();
    await cachedSelfTest(loose, cache);
    expect(loose.runs).toBe(1);

    await restore();
    await chmod(cache.dir, 0o777);
    const open = new Counting();
    await cachedSelfTest(open, cache);
    expect(open.runs).toBe(1);

    await restore();
    const elsewhere = path.join(scratch, 'elsewhere.json');
    await writeFile(elsewhere, passing, { mode: 0o600 });
    await rm(path.join(cache.dir, SELF_TEST_CACHE_FILE));
    await symlink(elsewhere, path.join(cache.dir, SELF_TEST_CACHE_FILE));
    const linked = new Counting();
    await cachedSelfTest(linked, cache);
    expect(linked.runs).toBe(1);
  });

  it('cannot be written from inside the sandbox, where agent-written code runs', async () => {
    await rm(path.join(cache.dir, SELF_TEST_CACHE_FILE), { force: true });
    const worktree = path.join(repo, '.loop-worktrees', 'T-1');
    const file = path.join(cache.dir, SELF_TEST_CACHE_FILE);
    const r = await new ExecaRunner().run(
      `mkdir -p '${cache.dir}' && printf '%s' '${passing.trim()}' > '${file}'; echo done`,
      {
        cwd: worktree,
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
        timeoutMs: 10_000,
        sandbox: { writable: [worktree] },
      },
    );
    expect(r.output).toContain('done');
    expect(existsSync(file)).toBe(false);
    const runner = new Counting();
    expect(await cachedSelfTest(runner, cache)).toEqual([]);
    expect(runner.runs).toBe(1);
  });

  it('never serves a weakened sandbox from the cache: it is attacked and refused', async () => {
    await restore();
    const weak = new Counting(
      new ExecaRunner({
        alterSandboxArgs: (args) => {
          const at = args.indexOf('--remount-ro');
          return [...args.slice(0, at), '--bind', '/var/tmp', '/var/tmp', ...args.slice(at)];
        },
      }),
    );
    const failures = await cachedSelfTest(weak, cache);
    expect(weak.runs).toBe(1);
    expect(failures.join('\n')).toMatch(/wrote to \/var\/tmp/);
  });

  it('attacks again with another bubblewrap binary (an upgrade, a replacement)', async () => {
    await restore();
    const bin = path.join(scratch, 'bin');
    await mkdir(bin, { recursive: true });
    const installed = (JSON.parse((await new ExecaRunner().sandboxIdentity()) ?? '{}') as { path: string }).path;
    await copyFile(installed, path.join(bin, 'bwrap'));
    await chmod(path.join(bin, 'bwrap'), 0o755);
    const saved = process.env.PATH;
    process.env.PATH = `${bin}:${saved ?? '/usr/bin:/bin'}`;
    try {
      const other = new Counting();
      expect(await other.sandboxIdentity()).toContain(path.join(bin, 'bwrap'));
      expect(await cachedSelfTest(other, cache)).toEqual([]);
      expect(other.runs).toBe(1);
    } finally {
      process.env.PATH = saved;
    }
  });

  it("lives in the person's cache: $XDG_CACHE_HOME when absolute, else ~/.cache", () => {
    expect(selfTestCacheDir({ XDG_CACHE_HOME: '/c', HOME: '/h' })).toBe('/c/loopfleet');
    expect(selfTestCacheDir({ XDG_CACHE_HOME: 'rel', HOME: '/h' })).toBe('/h/.cache/loopfleet');
  });
});
