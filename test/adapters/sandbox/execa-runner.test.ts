import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExecaRunner, OutputTail } from '../../../src/adapters/sandbox/execa-runner.js';
import { SimpleGitAdapter } from '../../../src/adapters/git/simple-git.js';

const run = promisify(execFile);
const runner = new ExecaRunner();
const PATH = process.env.PATH ?? '/usr/bin:/bin';
const baseEnv = { PATH, LANG: 'C' };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const temps: string[] = [];
async function tempDir(prefix = 'lf-proc-'): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  temps.push(dir);
  return dir;
}
afterAll(async () => {
  for (const dir of temps) await rm(dir, { recursive: true, force: true });
});

/** Alive and not a zombie (a reaped-later zombie is dead for our purposes). */
async function alive(pid: number): Promise<boolean> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    return !/^\d+ \(.*\) [ZX] /.test(stat);
  } catch {
    return false;
  }
}

async function eventually(check: () => Promise<boolean>, ms = 3000): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (await check()) return true;
    await sleep(25);
  }
  return check();
}

describe('ExecaRunner', () => {
  it('returns the exit code and interleaved output without throwing', async () => {
    const cwd = await tempDir();
    const r = await runner.run('echo one; echo two >&2; echo three; exit 3', { cwd, env: baseEnv, timeoutMs: 10_000 });
    expect(r).toMatchObject({ exitCode: 3, signal: null, timedOut: false, aborted: false, truncated: false });
    expect(r.output).toBe('one\ntwo\nthree\n');
    expect(r.durationMs).toBeGreaterThanOrEqual(0);
  });

  it('runs in cwd and writes input to stdin', async () => {
    const cwd = await tempDir();
    const r = await runner.run('pwd; cat', { cwd, env: baseEnv, timeoutMs: 10_000, input: 'hello\n' });
    expect(r.output).toBe(`${cwd}\nhello\n`);
  });

  it('gives the child exactly the environment passed, nothing inherited', async () => {
    process.env.LOOPFLEET_TEST_LEAK = 'leaked';
    const cwd = await tempDir();
    const r = await runner.run('env', { cwd, env: { PATH, ONLY: 'this' }, timeoutMs: 10_000 });
    const names = r.output
      .split('\n')
      .filter(Boolean)
      .map((line) => line.split('=')[0]);
    expect(names).toContain('ONLY');
    expect(names).not.toContain('LOOPFLEET_TEST_LEAK');
    expect(names).not.toContain('HOME');
    delete process.env.LOOPFLEET_TEST_LEAK;
  });

  it('kills the whole process group on timeout', async () => {
    const cwd = await tempDir();
    const t0 = Date.now();
    const r = await runner.run('sleep 1000 & echo $! > child.pid; sleep 1000', { cwd, env: baseEnv, timeoutMs: 300 });
    expect(r.timedOut).toBe(true);
    expect(r.exitCode).toBeNull();
    expect(Date.now() - t0).toBeLessThan(5000);
    const pid = Number(await readFile(path.join(cwd, 'child.pid'), 'utf8'));
    expect(await eventually(async () => !(await alive(pid)))).toBe(true);
  });

  it('does not wait for, nor leave behind, a background child of a finished command', async () => {
    const cwd = await tempDir();
    const t0 = Date.now();
    const r = await runner.run('sleep 1000 & echo $! > child.pid; echo done', { cwd, env: baseEnv, timeoutMs: 20_000 });
    expect(r).toMatchObject({ exitCode: 0, timedOut: false });
    expect(r.output).toBe('done\n');
    expect(Date.now() - t0).toBeLessThan(3000);
    const pid = Number(await readFile(path.join(cwd, 'child.pid'), 'utf8'));
    expect(await eventually(async () => !(await alive(pid)))).toBe(true);
  });

  it('does not wait on a process that left the group and holds the output open', async () => {
    const cwd = await tempDir();
    const t0 = Date.now();
    const r = await runner.run('setsid sleep 30 & echo $! > escaped.pid; echo hi', {
      cwd,
      env: baseEnv,
      timeoutMs: 20_000,
    });
    const pid = Number(await readFile(path.join(cwd, 'escaped.pid'), 'utf8'));
    try {
      expect(r).toMatchObject({ exitCode: 0, timedOut: false, output: 'hi\n' });
      expect(Date.now() - t0).toBeLessThan(3000);
    } finally {
      if (await alive(pid)) process.kill(pid, 'SIGKILL');
    }
  });

  it('reports an abort that happened before the start', async () => {
    const cwd = await tempDir();
    const r = await runner.run('sleep 5', { cwd, env: baseEnv, timeoutMs: 20_000, signal: AbortSignal.abort() });
    expect(r.aborted).toBe(true);
  });

  it('stops on abort', async () => {
    const cwd = await tempDir();
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    const t0 = Date.now();
    const r = await runner.run('sleep 1000 & echo $! > child.pid; sleep 1000', {
      cwd,
      env: baseEnv,
      timeoutMs: 60_000,
      signal: controller.signal,
    });
    expect(r.aborted).toBe(true);
    expect(r.timedOut).toBe(false);
    expect(Date.now() - t0).toBeLessThan(5000);
    const pid = Number(await readFile(path.join(cwd, 'child.pid'), 'utf8'));
    expect(await eventually(async () => !(await alive(pid)))).toBe(true);
  });

  it('keeps only a bounded tail of the output and streams all of it', async () => {
    const cwd = await tempDir();
    let streamed = 0;
    const r = await runner.run("head -c 1000000 /dev/zero | tr '\\0' a; echo END", {
      cwd,
      env: baseEnv,
      timeoutMs: 20_000,
      maxOutputBytes: 1000,
      onOutput: (chunk) => (streamed += chunk.length),
    });
    expect(r.truncated).toBe(true);
    expect(r.output.length).toBe(1000);
    expect(r.output.endsWith('aaaaEND\n')).toBe(true);
    expect(streamed).toBe(1_000_000 + 4);
  });

  it('defaults to a 64 KiB tail', async () => {
    const cwd = await tempDir();
    const r = await runner.run("head -c 200000 /dev/zero | tr '\\0' b", { cwd, env: baseEnv, timeoutMs: 20_000 });
    expect(r.output.length).toBe(64 * 1024);
    expect(r.truncated).toBe(true);
  });

  it('never cuts a character in half at the start of the tail', () => {
    const tail = new OutputTail(5);
    tail.push(Buffer.from('ééé', 'utf8')); // 6 bytes: the first é is cut
    expect(tail.text()).toBe('éé');
    expect(tail.truncated).toBe(true);
  });

  it('throws when the command cannot be started', async () => {
    await expect(runner.run('true', { cwd: '/nonexistent/folder', env: baseEnv, timeoutMs: 1000 })).rejects.toThrow(
      /nonexistent/,
    );
  });
});

describe('ExecaRunner sandbox', async () => {
  const available = await runner.sandboxAvailable();
  let root = '';
  let worktree = '';
  let git: SimpleGitAdapter;
  const gitEnv = {
    ...process.env,
    GIT_AUTHOR_NAME: 't',
    GIT_AUTHOR_EMAIL: 't@t',
    GIT_COMMITTER_NAME: 't',
    GIT_COMMITTER_EMAIL: 't@t',
  };

  beforeAll(async () => {
    if (!available) return;
    root = await tempDir('lf-sbx-');
    await run('git', ['init', '-q', '-b', 'main', root]);
    await writeFile(path.join(root, 'a.txt'), 'a\n');
    await run('git', ['add', '-A'], { cwd: root, env: gitEnv });
    await run('git', ['commit', '-qm', 'init'], { cwd: root, env: gitEnv });
    git = new SimpleGitAdapter(root);
    worktree = path.join(git.root, '.loop-worktrees', 'T-1');
    await git.addWorktree(worktree, 'loop/T-1', 'main');
  });

  const sandboxed = (command: string, extra: Partial<Parameters<ExecaRunner['run']>[1]> = {}) =>
    runner.run(command, {
      cwd: worktree,
      env: { ...baseEnv, HOME: '/nonexistent' },
      timeoutMs: 20_000,
      sandbox: { writable: [worktree] },
      ...extra,
    });

  it.runIf(available)('writes inside the worktree, nowhere else', async () => {
    const marker = `lf-host-tmp-${process.pid}-${Date.now()}`;
    const r = await sandboxed(
      `echo hi > inside.txt && echo ok1; echo x > ${git.root}/escape.txt; echo x > /tmp/${marker} && echo tmpok; touch /usr/lf-escape; echo done`,
    );
    expect(r.output).toContain('ok1');
    expect(r.output).toContain('tmpok'); // a private /tmp
    expect(await readFile(path.join(worktree, 'inside.txt'), 'utf8')).toBe('hi\n');
    expect(existsSync(path.join(git.root, 'escape.txt'))).toBe(false);
    expect(existsSync(path.join('/tmp', marker))).toBe(false);
    expect(existsSync('/usr/lf-escape')).toBe(false);
  });

  it.runIf(available)('has no network, not even to the host loopback', async () => {
    const server = net.createServer((socket) => {
      socket.on('error', () => undefined); // the probe hangs up without reading
      socket.end('hello');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as net.AddressInfo).port;
    const probe = `${process.execPath} -e "require('net').connect(${port},'127.0.0.1').on('connect',()=>{console.log('CONNECTED');process.exit(0)}).on('error',(e)=>{console.log('FAILED',e.code);process.exit(1)})"`;
    try {
      const outside = await runner.run(probe, { cwd: worktree, env: baseEnv, timeoutMs: 10_000 });
      expect(outside.output).toContain('CONNECTED');
      const inside = await sandboxed(probe);
      expect(inside.output).toContain('FAILED');
      expect(inside.exitCode).toBe(1);
    } finally {
      server.close();
    }
  });

  it.runIf(available)('hides home folders, except the tools on PATH', async () => {
    const home = await tempDir('lf-home-');
    await writeFile(path.join(home, '.npmrc'), 'secret');
    const hostHome = os.homedir();
    const r = await sandboxed(
      `ls -A "$HOME" | wc -l; cat "$HOME/.npmrc" || echo unreadable; echo ---; ls -A ${hostHome}`,
      {
        env: { ...baseEnv, HOME: home },
      },
    );
    const [counts, listing = ''] = r.output.split('---\n');
    expect(counts?.trim().split('\n')[0]?.trim()).toBe('0');
    expect(r.output).toContain('unreadable');
    expect(r.output).not.toContain('secret');
    // What remains of the user's home are the folders leading to PATH entries (~/.cargo/bin...), nothing else.
    const onPath = new Set(
      PATH.split(':')
        .filter((entry) => entry.startsWith(`${hostHome}/`))
        .map((entry) => entry.slice(hostHome.length + 1).split('/')[0]),
    );
    for (const name of listing.split('\n').filter(Boolean)) expect(onPath.has(name)).toBe(true);
  });

  it.runIf(available)('lets git status and git add work, but not branches, hooks or the .git file', async () => {
    await writeFile(path.join(worktree, 'a.txt'), 'changed\n');
    const common = path.join(git.root, '.git');
    const r = await sandboxed(
      [
        'echo new > b.txt',
        'git status --porcelain && echo STATUS_OK',
        'git add -A && echo ADD_OK',
        'git diff --cached --name-only',
        'git branch evil 2>/dev/null && echo BRANCH_WRITTEN',
        'git commit -qm x 2>/dev/null && echo COMMITTED',
        `echo boom > ${common}/hooks/pre-commit 2>/dev/null && echo HOOK_WRITTEN`,
        `echo '[core]' >> ${common}/config 2>/dev/null && echo CONFIG_WRITTEN`,
        'echo "gitdir: /tmp" > .git 2>/dev/null && echo DOTGIT_WRITTEN',
        `echo "ref: refs/heads/main" > ${common}/worktrees/T-1/HEAD 2>/dev/null && echo HEAD_WRITTEN`,
        `echo /tmp > ${common}/worktrees/T-1/commondir 2>/dev/null && echo COMMONDIR_WRITTEN`,
        `echo '[core]' > ${common}/worktrees/T-1/config.worktree 2>/dev/null && echo WTCONFIG_WRITTEN`,
        `rm -rf ${common}/objects/* 2>/dev/null; ls ${common}/objects | grep -q pack || echo OBJECTS_REMOVED`,
        'true',
      ].join('; '),
      { env: { ...gitEnv, ...baseEnv, HOME: '/nonexistent' } as Record<string, string> },
    );
    expect(r.output).toContain('STATUS_OK');
    expect(r.output).toContain('ADD_OK');
    expect(r.output).toMatch(/a\.txt\nb\.txt/);
    const refused = [
      'BRANCH_WRITTEN',
      'COMMITTED',
      'HOOK_WRITTEN',
      'CONFIG_WRITTEN',
      'DOTGIT_WRITTEN',
      'HEAD_WRITTEN',
      'COMMONDIR_WRITTEN',
    ];
    for (const written of [...refused, 'WTCONFIG_WRITTEN', 'OBJECTS_REMOVED']) {
      expect(r.output).not.toContain(written);
    }
    expect(await git.branchExists('evil')).toBe(false);
    expect(await git.revParse('loop/T-1')).toBe(await git.revParse('main'));

    // Outside, the committer re-stages from the files: the commit holds both changes.
    const commit = (await git.commitSnapshot(worktree, 'T-1: work', [])).commit;
    expect(commit).toMatch(/^[0-9a-f]{40}$/);
    const { stdout } = await run('git', ['show', '--name-only', '--format=', commit ?? ''], { cwd: root });
    expect(stdout.trim().split('\n')).toEqual(expect.arrayContaining(['a.txt', 'b.txt']));
    const { stdout: fsck } = await run('git', ['fsck', '--connectivity-only'], { cwd: root });
    expect(fsck).not.toMatch(/missing/);
  });

  it.runIf(available)('kills everything the sandboxed command started on timeout', async () => {
    const beat = path.join(worktree, 'beat');
    const r = await sandboxed('(while true; do date +%s%N > beat; sleep 0.05; done) & sleep 1000', { timeoutMs: 500 });
    expect(r.timedOut).toBe(true);
    await sleep(200);
    const before = await readFile(beat, 'utf8');
    await sleep(400);
    expect(await readFile(beat, 'utf8')).toBe(before);
  });

  it.runIf(available)('refuses a writable folder that does not exist', async () => {
    await expect(sandboxed('true', { sandbox: { writable: ['/nonexistent/x'] } })).rejects.toThrow(/does not exist/);
  });
});
