/**
 * Attacks on the sandbox through the real pipeline (real git, real bubblewrap, real state), with a scripted
 * model: each attack runs as the task's check (agent-written code's usual way in) or as the setup of a
 * worktree rebuilt from an agent's branch. Each must fail to escape: host canaries survive, nothing lands,
 * the task ends failed.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { findRepo } from '../../src/commands/repo.js';
import { overnight } from '../../src/commands/overnight.js';
import { ExecaRunner } from '../../src/adapters/sandbox/execa-runner.js';
import { SimpleGitAdapter } from '../../src/adapters/git/simple-git.js';
import { backlogRepo, openFleet, reopen, runFleet } from '../helpers/fleet-harness.js';
import { sandboxSelfTest } from '../../src/adapters/sandbox/selftest.js';
import { UsageError } from '../../src/domain/errors.js';
import { FakeModel } from '../helpers/fake-model.js';
import type { FleetServices } from '../../src/core/fleet/fleet.js';
import { git, read } from '../helpers/git-repo.js';
import { readState } from '../helpers/state-file.js';
import { DIST as BUILT } from '../helpers/paths.js';

const available = await new ExecaRunner().sandboxAvailable();
const isRoot = process.getuid?.() === 0;

let cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.reverse()) await c();
  cleanups = [];
});

const repo = (front: string, items: string, files: Record<string, string> = {}) =>
  backlogRepo(cleanups, front, items, files);

/** A folder on the host outside every worktree and outside the host /tmp: /var/tmp. */
async function hostDir(): Promise<string> {
  const dir = await mkdtemp('/var/tmp/lf-attack-');
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

async function canary(dir: string, name = 'canary', content = 'host data\n'): Promise<string> {
  const file = path.join(dir, name);
  await writeFile(file, content);
  return file;
}

const writesDone = ({ role }: { role: string }) => (role === 'implementer' ? { edits: { 'done.txt': 'done\n' } } : {});
/** shell single quotes */
const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
/** a YAML scalar (JSON is YAML) */
const y = (s: string) => JSON.stringify(s);

describe.runIf(available)('attacks through the pipeline', () => {
  it('row 1: as root, remounting / writable to delete and write host files fails', async () => {
    const dir = await hostDir();
    const file = await canary(dir);
    const root = await repo(
      `check: ${y(`mount -o remount,rw / && rm -f ${file} && touch ${dir}/written`)}`,
      '- [ ] T-1 One\n  attempts: 1',
    );
    const { fleet } = await runFleet(root, writesDone);
    const t = fleet.task('T-1')!;
    expect(t.status).toBe('failed');
    expect(t.attempts[0]!.outcome).toBe('check-failed');
    expect(await readFile(file, 'utf8')).toBe('host data\n');
    expect(existsSync(path.join(dir, 'written'))).toBe(false);
  });

  it('row 2: a Unix socket on the host (path or abstract) cannot be reached', async () => {
    const dir = await hostDir();
    const sock = path.join(dir, 'agent.sock');
    const abstract = `\0lf-attack-${process.pid}-${Date.now()}`;
    const received: string[] = [];
    const servers = [sock, abstract].map((where) => {
      const server = net.createServer((s) => {
        s.on('data', (d) => received.push(d.toString()));
        s.on('error', () => undefined);
      });
      return new Promise<net.Server>((resolve) => server.listen(where, () => resolve(server)));
    });
    const listening = await Promise.all(servers);
    cleanups.push(async () => {
      for (const s of listening) s.close();
    });
    const probe = [
      `let left = 2, ok = false;`,
      `const done = () => { if (--left === 0) process.exit(ok ? 0 : 3); };`,
      `for (const p of [${JSON.stringify(sock)}, ${JSON.stringify(abstract)}]) {`,
      `  const c = require('net').connect(p);`,
      `  c.on('connect', () => { ok = true; c.end('stolen'); }).on('close', done).on('error', () => undefined);`,
      `}`,
    ].join(' ');
    const root = await repo(
      `check: ${y(`node -e 'process.exit(0)' || exit 99; node -e ${q(probe)}`)}`,
      '- [ ] T-1 One\n  attempts: 1',
    );
    const { fleet } = await runFleet(root, writesDone);
    const t = fleet.task('T-1')!;
    expect(t.status).toBe('failed');
    expect(t.attempts[0]!.reason).toMatch(/exited 3/);
    expect(received).toEqual([]);
  });

  it("row 3: a worktree rebuilt from the agent's branch does not run the agent's setup outside the sandbox", async () => {
    const dir = await hostDir();
    // files: lets the task change the script setup runs (the guard refuses it otherwise), so that the branch holds it.
    const root = await repo(
      'setup: sh setup.sh\ncheck: test -f never-there',
      '- [ ] T-1 One\n  attempts: 1\n  files: setup.sh',
      {
        'setup.sh': 'echo base setup\n',
      },
    );
    // The implementer rewrites the setup script (as a postinstall would be) in its first attempt.
    const evil = `touch ${dir}/pwned\n`;
    const first = await runFleet(root, ({ role }) => (role === 'implementer' ? { edits: { 'setup.sh': evil } } : {}));
    expect(first.fleet.task('T-1')!.status).toBe('failed');
    expect(await git(root, 'show', 'loop/T-1:setup.sh')).toBe(evil.trim());
    expect(existsSync(path.join(dir, 'pwned'))).toBe(false);

    // The worktree is deleted by hand, then the task is retried: it is rebuilt from loop/T-1.
    await rm(path.join(root, '.loop-worktrees', 'T-1'), { recursive: true, force: true });
    const h = await reopen(root, writesDone);
    await h.fleet.retry('T-1');
    h.fleet.start();
    await h.fleet.whenIdle();
    await h.session.close();
    expect(existsSync(path.join(dir, 'pwned'))).toBe(false);
    // With a sandbox, setup runs in it (and fails there); without one it is skipped, saying so.
    const attempt = h.fleet.task('T-1')!.attempts.at(-1)!;
    expect(attempt.n).toBe(2);
    expect(attempt.outcome).toBe('setup-failed');
    expect(attempt.reason).toMatch(/in the sandbox: the branch holds agent-written commits/);
  });

  it("row 3 without a sandbox: setup of a worktree rebuilt from the agent's branch is skipped, saying so", async () => {
    const dir = await hostDir();
    const root = await repo('setup: sh setup.sh\nreview: true', '- [ ] T-1 One\n  attempts: 1\n  files: setup.sh', {
      'setup.sh': 'echo base setup\n',
    });
    const noSandbox = { services: (s: FleetServices) => ({ ...s, sandboxed: false, shellAllowed: false }) };
    const veto = ({ role }: { role: string }) =>
      role === 'implementer'
        ? { edits: { 'setup.sh': `touch ${dir}/pwned\n` } }
        : role === 'verifier'
          ? { text: '{"pass":false,"reasons":["no"]}' }
          : {};
    const first = await runFleet(root, veto, noSandbox);
    expect(first.fleet.task('T-1')!.attempts[0]!.setup!.outputTail).toContain('base setup');
    await rm(path.join(root, '.loop-worktrees', 'T-1'), { recursive: true, force: true });
    const h = await openFleet(root, veto, noSandbox);
    const output: string[] = [];
    h.fleet.events.on('phase-output', (o) => output.push(o.chunk));
    await h.fleet.retry('T-1');
    h.fleet.start();
    await h.fleet.whenIdle();
    await h.session.close();
    expect(existsSync(path.join(dir, 'pwned'))).toBe(false);
    const attempt = h.fleet.task('T-1')!.attempts.at(-1)!;
    expect(attempt.n).toBe(2);
    expect(attempt.setup).toBeNull();
    expect(output.join('')).toMatch(
      /skipped: the worktree was rebuilt from loop\/T-1, which holds agent-written commits/,
    );
  });

  it("row 5: host variables do not reach the check, except those listed under env:; setup on the person's code gets them, minus loopfleet's keys", async () => {
    const leaked = {
      DATABASE_URL: 'postgres://u:pass@db/x',
      SENTRY_DSN: 'https://k@sentry/1',
      MY_APP_APIKEY: 'k1',
      SSH_AUTH_SOCK: '/run/ssh.sock',
      PASSED_ON: 'yes',
    };
    Object.assign(process.env, leaked);
    cleanups.push(async () => {
      for (const name of Object.keys(leaked)) delete process.env[name];
    });
    const names = 'DATABASE_URL|SENTRY_DSN|MY_APP_APIKEY|SSH_AUTH_SOCK';
    const root = await repo(
      [
        'env:\n  - PASSED_ON',
        `setup: ${y('env > .setup-env')}`,
        `check: ${y(`env > .check-env; test "$PASSED_ON" = yes || exit 5; ! grep -Eq '^(${names})=' .check-env`)}`,
      ].join('\n'),
      '- [ ] T-1 One\n  attempts: 1',
      { '.gitignore': '.setup-env\n.check-env\n' },
    );
    const { fleet } = await runFleet(root, writesDone);
    const setupEnv = await read(root, '.loop-worktrees/T-1/.setup-env');
    const checkEnv = await read(root, '.loop-worktrees/T-1/.check-env');
    for (const name of Object.keys(leaked).filter((n) => n !== 'PASSED_ON')) {
      // Setup on base runs as the person's own shell would (see setup-attacks.test.ts); the check never sees them.
      expect(setupEnv).toContain(`${name}=`);
      expect(checkEnv).not.toContain(`${name}=`);
    }
    expect(setupEnv).not.toMatch(/^ANTHROPIC_API_KEY=/m);
    expect(checkEnv).toContain('PASSED_ON=yes');
    expect(fleet.task('T-1')!.status).toBe('verified');
  });

  it('row 8: without bubblewrap, sandbox: auto refuses to run the check and the first line says what is unsandboxed', async () => {
    const dir = await hostDir();
    const root = await repo(`check: ${y(`touch ${dir}/check-ran`)}`, '- [ ] T-1 One\n  attempts: 1');
    const model = new FakeModel(writesDone);
    const lines: string[] = [];
    const code = await overnight(
      await findRepo(root),
      {
        overrides: {},
        autoMerge: false,
        watch: false,
        env: { ...process.env, ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: 'http://127.0.0.1:9' },
        services: (s) => ({ ...s, sandboxed: false, shellAllowed: false, model, cliModel: model }),
      },
      (line) => lines.push(line),
    );
    expect(code).toBe(1);
    expect(existsSync(path.join(dir, 'check-ran'))).toBe(false);
    expect(lines[0]).toMatch(/no sandbox/);
    expect(lines[0]).toMatch(/check/);
    expect(lines[0]).toMatch(/refused/);
    const t = (await readState(root)).tasks['T-1'];
    expect(t.status).toBe('failed');
    expect(t.attempts[0].reason).toMatch(/refused: .* no sandbox/);
    expect(model.calls).toHaveLength(0);
    const reports = await readdir(path.join(root, '.loop-worktrees', 'reports'));
    expect(await read(root, `.loop-worktrees/reports/${reports[0]}`)).toMatch(
      /\*\*Unsandboxed:\*\* no sandbox .* checks of agent-written code are refused/,
    );
  });

  it('row 9: with HOME set elsewhere, /root, /home/* and the passwd home stay hidden', async () => {
    const passwdHome = os.userInfo().homedir;
    const secret = `home secret ${process.pid}-${Date.now()}`;
    const homeCanary = path.join(passwdHome, `.lf-attack-${process.pid}`);
    await writeFile(homeCanary, secret);
    cleanups.push(() => rm(homeCanary, { force: true }));
    const otherHome = await mkdtemp('/home/lf-attack-').catch(() => null);
    if (otherHome !== null) {
      await writeFile(path.join(otherHome, 'secret'), secret);
      cleanups.push(() => rm(otherHome, { recursive: true, force: true }));
    }
    const elsewhere = await mkdtemp(path.join(os.tmpdir(), 'lf-home-elsewhere-'));
    cleanups.push(() => rm(elsewhere, { recursive: true, force: true }));
    const savedHome = process.env.HOME;
    process.env.HOME = elsewhere;
    cleanups.push(async () => {
      process.env.HOME = savedHome;
    });
    const reads = [homeCanary, ...(otherHome === null ? [] : [path.join(otherHome, 'secret')]), '/root/.bashrc'];
    const check = reads.map((f) => `cat ${f} >> stolen.txt 2>/dev/null`).join('; ') + '; test -s stolen.txt';
    const root = await repo(`check: ${y(check)}`, '- [ ] T-1 One\n  attempts: 1', { '.gitignore': 'stolen.txt\n' });
    const { fleet } = await runFleet(root, writesDone);
    expect(fleet.task('T-1')!.status).toBe('failed');
    const stolen = existsSync(path.join(root, '.loop-worktrees/T-1/stolen.txt'))
      ? await read(root, '.loop-worktrees/T-1/stolen.txt')
      : '';
    expect(stolen).toBe('');
    expect(await readFile(homeCanary, 'utf8')).toBe(secret);
  });
});

describe.runIf(available)('row 2 inside the repository', () => {
  it("cannot reach a socket git keeps in the repository's .git (the fsmonitor daemon's)", async () => {
    const root = await repo('check: "true"', '- [ ] T-1 One');
    const git = new SimpleGitAdapter(root);
    const worktree = path.join(root, '.loop-worktrees', 'T-1');
    await git.addWorktree(worktree, 'loop/T-1', 'main');
    let connections = 0;
    const server = net.createServer((s) => {
      connections++;
      s.destroy();
    });
    await new Promise<void>((resolve) => server.listen(path.join(root, '.git', 'fsmonitor--daemon.ipc'), resolve));
    cleanups.push(async () => void server.close());
    const probe = `require('net').connect(${JSON.stringify(path.join(root, '.git', 'fsmonitor--daemon.ipc'))}).on('connect', () => process.exit(0)).on('error', () => process.exit(3))`;
    const r = await new ExecaRunner().run(`node -e 'process.exit(0)' || exit 99; node -e ${q(probe)}`, {
      cwd: worktree,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      timeoutMs: 10_000,
      sandbox: { writable: [worktree] },
    });
    expect(r.exitCode).toBe(3);
    expect(connections).toBe(0);
  });
});

describe.runIf(available && isRoot)('row 1 under root: the sandbox holds no capability', () => {
  it('has CapEff 0 and an unprivileged uid inside, cannot read /etc/shadow, and writes files owned by the host user', async () => {
    const root = await repo('check: "true"', '- [ ] T-1 One');
    const wt = await mkdtemp(path.join(root, 'wt-'));
    const r = await new ExecaRunner().run(
      'grep -E "^CapEff" /proc/self/status; id -u; mkdir -p sub && echo x > sub/made; echo "shadow $(cat /etc/shadow | wc -c)"; for d in /run /var /srv /mnt /home; do test -e $d || echo "absent $d"; done',
      {
        cwd: wt,
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
        timeoutMs: 10_000,
        sandbox: { writable: [wt] },
      },
    );
    expect(r.output).toMatch(/^CapEff:\s*0+$/m);
    expect(r.output).not.toMatch(/^0$/m);
    expect(await readFile(path.join(wt, 'sub', 'made'), 'utf8')).toBe('x\n');
    expect((await stat(path.join(wt, 'sub', 'made'))).uid).toBe(process.getuid?.());
    // Files only root may read on the host are empty inside, although the sandbox's uid maps to root.
    if (existsSync('/etc/shadow')) expect(r.output).toMatch(/^shadow 0$/m);
    // Folders that gather sockets and homes are not there at all.
    for (const d of ['/run', '/var', '/srv', '/mnt', '/home']) expect(r.output).toContain(`absent ${d}`);
  });
});

/** Removes an option and the values that follow it from bwrap arguments. */
function without(args: string[], option: string, values: number): string[] {
  const at = args.indexOf(option);
  return at < 0 ? args : [...args.slice(0, at), ...args.slice(at + 1 + values)];
}

describe.runIf(available)('the self-test before a fleet starts', () => {
  it('passes on the real sandbox', async () => {
    expect(await sandboxSelfTest(new ExecaRunner())).toEqual([]);
  });

  it.runIf(isRoot)(
    'refuses to start (exit 2, nothing written) when capabilities are kept, naming what failed',
    async () => {
      const weak = new ExecaRunner({
        alterSandboxArgs: (args) =>
          without(without(without(without(args, '--unshare-user', 0), '--uid', 1), '--gid', 1), '--cap-drop', 1),
      });
      const root = await repo('check: "true"', '- [ ] T-1 One');
      const error = await openFleet(root, writesDone, { services: (s) => ({ ...s, runner: weak }) }).catch(
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(UsageError);
      expect((error as UsageError).exitCode).toBe(2);
      expect((error as Error).message).toMatch(/capabilities/);
      expect((error as Error).message).toMatch(/uid 0/);
      expect((error as Error).message).toMatch(/remount/);
      expect(existsSync(path.join(root, '.loop-worktrees'))).toBe(false);
    },
  );

  it('refuses a sandbox that shows a host folder with a socket in it', async () => {
    const weak = new ExecaRunner({
      alterSandboxArgs: (args) => {
        const at = args.indexOf('--remount-ro');
        return [...args.slice(0, at), '--bind', '/var/tmp', '/var/tmp', ...args.slice(at)];
      },
    });
    const failures = await sandboxSelfTest(weak);
    expect(failures.join('\n')).toMatch(/socket .* is visible/);
    expect(failures.join('\n')).toMatch(/accepted a connection/);
    expect(failures.join('\n')).toMatch(/wrote to \/var\/tmp/);
  });
});

/** The built runner (dist/, `npm run build` first), run as an ordinary user through setpriv. */
const DIST = path.join(BUILT, 'adapters', 'sandbox');
const setpriv = ['/usr/bin/setpriv', '/bin/setpriv'].find((p) => existsSync(p));

it('runs the ordinary-user case against the built runner (`npm run build` first)', () => {
  expect(existsSync(path.join(DIST, 'execa-runner.js'))).toBe(true);
  expect(existsSync(path.join(DIST, 'selftest.js'))).toBe(true);
});

describe.runIf(available && isRoot && setpriv !== undefined)('as an ordinary user', () => {
  it('the same sandbox works and passes its self-test', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'lf-user-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const { chown } = await import('node:fs/promises');
    await chown(dir, 65534, 65534);
    const script = [
      `import { ExecaRunner } from ${JSON.stringify(path.join(DIST, 'execa-runner.js'))};`,
      `import { sandboxSelfTest } from ${JSON.stringify(path.join(DIST, 'selftest.js'))};`,
      'const r = new ExecaRunner();',
      'const escapes = await sandboxSelfTest(r);',
      `const x = await r.run('grep CapEff /proc/self/status; echo ok > made', { cwd: ${JSON.stringify(dir)}, env: { PATH: '/usr/bin:/bin' }, timeoutMs: 10000, sandbox: { writable: [${JSON.stringify(dir)}] } });`,
      'console.log(JSON.stringify({ escapes, output: x.output }));',
    ].join('\n');
    const { execa } = await import('execa');
    const r = await execa(
      setpriv!,
      ['--reuid', '65534', '--regid', '65534', '--clear-groups', process.execPath, '--input-type=module', '-e', script],
      {
        cwd: dir,
        env: { PATH: '/usr/bin:/bin', HOME: dir },
        extendEnv: false,
        reject: false,
      },
    );
    expect(r.stderr).toBe('');
    const result = JSON.parse(r.stdout) as { escapes: string[]; output: string };
    expect(result.escapes).toEqual([]);
    expect(result.output).toMatch(/^CapEff:\s*0+$/m);
    expect(await readFile(path.join(dir, 'made'), 'utf8')).toBe('ok\n');
  });
});
