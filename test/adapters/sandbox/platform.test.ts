/**
 * The enforcer follows the platform, which is passed in: bubblewrap on Linux, sandbox-runtime (Seatbelt)
 * on macOS. On this Linux machine the macOS path runs end to end with srt's Linux backend (bubblewrap
 * under srt) standing in for Seatbelt: the runner, the policy, the settings file, the srt process and
 * the egress proxy are the ones macOS uses. On a Mac the same tests run with the real Seatbelt.
 */
import { access, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ExecaRunner } from '../../../src/adapters/sandbox/execa-runner.js';
import { git, makeRepo } from '../../helpers/git-repo.js';
import { cleanupsAfterEach, loopbackService } from '../../helpers/loopback-service.js';

const onMac = process.platform === 'darwin';
const srtTools =
  onMac ||
  (
    await Promise.all(
      ['/usr/bin/bwrap', '/usr/bin/socat', '/usr/bin/rg'].map((p) =>
        access(p).then(
          () => true,
          () => false,
        ),
      ),
    )
  ).every(Boolean);
/** The macOS path: for real on a Mac; elsewhere srt's Linux backend with this machine's facts. */
const darwinRunner = () =>
  onMac ? new ExecaRunner() : new ExecaRunner({ platform: 'darwin', facts: {}, enforcerWorks: async () => true });
const bwrapWorks = await new ExecaRunner({ platform: 'linux' }).sandboxAvailable();

const cleanups = cleanupsAfterEach();

async function worktree(): Promise<string> {
  const repo = await makeRepo({ 'README.md': 'hi\n' });
  cleanups.push(repo.cleanup);
  const wt = path.join(repo.root, '.loop-worktrees', 'T-1');
  await git(repo.root, 'worktree', 'add', '--quiet', '-b', 'loop/T-1', wt);
  return wt;
}

const serve = (hits: string[]) => loopbackService(cleanups, (url) => hits.push(url), 'served');

const ENV = { PATH: `${path.dirname(process.execPath)}:/usr/bin:/bin`, LANG: 'C.UTF-8' };
const RUN = { timeoutMs: 60_000 };

function fetchLine(url: string): string {
  const js = `fetch(${JSON.stringify(url)}).then(async (r) => console.log("FETCH", r.status, await r.text()), (e) => console.log("FETCH error", String(e.cause?.message ?? e.message)))`;
  return `${process.execPath} -e '${js}'`;
}

describe('the enforcer is chosen by the platform passed in', () => {
  it.runIf(!onMac)(
    'darwin without Seatbelt (this machine has no sandbox-exec): unavailable, and a sandboxed run says why',
    async () => {
      const runner = new ExecaRunner({ platform: 'darwin' });
      expect(await runner.sandboxAvailable()).toBe(false);
      const cwd = await mkdtemp(path.join(os.tmpdir(), 'loopfleet-darwin-'));
      cleanups.push(() => rm(cwd, { recursive: true, force: true }));
      await expect(runner.run('true', { cwd, env: ENV, ...RUN, sandbox: { writable: [] } })).rejects.toThrow(
        /Seatbelt \(sandbox-exec\) with @anthropic-ai\/sandbox-runtime cannot run here/,
      );
    },
  );

  it.runIf(bwrapWorks)('linux: bubblewrap, as nobody, no sandbox-runtime', async () => {
    const cwd = await worktree();
    const r = await new ExecaRunner({ platform: 'linux' }).run('id -u; echo "srt=${SANDBOX_RUNTIME-none}"', {
      cwd,
      env: ENV,
      ...RUN,
      sandbox: { writable: [] },
    });
    expect(r.output).toBe('65534\nsrt=none\n');
  });

  it.runIf(srtTools)(
    'darwin: the command runs under srt with the policy, its own TMPDIR and HOME, writes only the worktree',
    async () => {
      const cwd = await worktree();
      const outside = await mkdtemp(path.join(os.tmpdir(), 'loopfleet-darwin-outside-'));
      cleanups.push(() => rm(outside, { recursive: true, force: true }));
      const runner = darwinRunner();
      expect(await runner.sandboxAvailable()).toBe(true);
      const script = [
        'echo "srt=$SANDBOX_RUNTIME"',
        'echo made > inside.txt && echo WROTE inside',
        `(echo x > ${outside}/f) 2>/dev/null && echo WROTE outside || echo REFUSED outside`,
        'echo "home=$HOME tmp=$TMPDIR"',
        'touch "$TMPDIR/scratch" && echo TMP writable',
      ].join('\n');
      const r = await runner.run(script, { cwd, env: ENV, ...RUN, sandbox: { writable: [] } });
      expect(r.exitCode, r.output).toBe(0);
      expect(r.output).toContain('srt=1');
      expect(r.output).toContain('WROTE inside');
      expect(await readFile(path.join(cwd, 'inside.txt'), 'utf8')).toBe('made\n');
      expect(r.output).toContain('REFUSED outside');
      expect(await readdir(outside)).toEqual([]);
      expect(r.output).toMatch(/home=\/\S*loopfleet-srt-\S+\/tmp\/home tmp=\/\S*loopfleet-srt-\S+\/tmp\n/);
      expect(r.output).toContain('TMP writable');
      // The command's own folder is gone once it has ended.
      const tmp = /tmp=(\S+)/.exec(r.output)![1]!;
      await expect(access(tmp)).rejects.toThrow(/ENOENT/);
    },
    90_000,
  );

  it.runIf(srtTools)(
    'darwin: `network:` hosts through an egress proxy of the run, nothing else; no hosts: nothing at all',
    async () => {
      const cwd = await worktree();
      const hits: string[] = [];
      const allowed = await serve(hits);
      const other = await serve(hits);
      const runner = darwinRunner();
      const script = `${fetchLine(`http://127.0.0.1:${allowed}/yes`)}\n${fetchLine(`http://127.0.0.1:${other}/no`)}`;
      const withHosts = await runner.run(script, {
        cwd,
        env: ENV,
        ...RUN,
        sandbox: { writable: [], network: [`http://127.0.0.1:${allowed}`] },
      });
      expect(withHosts.output).toContain('FETCH 200 served');
      expect(withHosts.output).toMatch(/FETCH (403|error)/);
      expect(hits).toEqual(['/yes']);

      const none = await runner.run(`NODE_USE_ENV_PROXY=1 ${script}`, {
        cwd,
        env: ENV,
        ...RUN,
        sandbox: { writable: [] },
      });
      expect(none.output).not.toContain('FETCH 200');
      expect(hits).toEqual(['/yes']);
    },
    90_000,
  );
});
