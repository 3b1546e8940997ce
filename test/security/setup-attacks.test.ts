/**
 * Where setup runs, through the real pipeline (real git, real bubblewrap, real state, real npm), with a
 * scripted model: on the person's code it runs on the host as their shell would (their HOME, CA bundle,
 * minus loopfleet's credentials); once an agent's work has landed on base, in the sandbox.
 */
import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ExecaRunner } from '../../src/adapters/sandbox/execa-runner.js';
import { backlogRepo, runFleet } from '../helpers/fleet-harness.js';
import { read } from '../helpers/git-repo.js';
import { privateCaServer } from '../helpers/private-ca.js';

const available = await new ExecaRunner().sandboxAvailable();

let cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.reverse()) await c();
  cleanups = [];
});

const repo = (front: string, items: string, files: Record<string, string> = {}) =>
  backlogRepo(cleanups, front, items, files);

/**
 * Sets host variables for one test, as the person's shell would have them: without the npm_config_* that
 * `npx vitest` adds (npm_config_userconfig would hide ~/.npmrc).
 */
function hostEnv(vars: Record<string, string>): void {
  const npmVars = Object.keys(process.env).filter((k) => /^npm_config_/i.test(k));
  const before = Object.fromEntries([...Object.keys(vars), ...npmVars].map((k) => [k, process.env[k]]));
  for (const k of npmVars) delete process.env[k];
  Object.assign(process.env, vars);
  cleanups.push(async () => {
    for (const [k, v] of Object.entries(before)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  });
}

/** shell single quotes */
const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

describe.runIf(available)('setup', () => {
  it('after an auto-merge, the next task runs the setup script an agent rewrote in the sandbox: the host canary stays empty', async () => {
    const dir = await mkdtemp('/var/tmp/lf-setup-');
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const canary = path.join(dir, 'canary');
    const root = await repo(
      'setup: sh scripts/setup.sh\ncheck: test -f done.txt',
      // The guard refuses a change to the file setup runs unless the task's files: allow it; allowed here, so
      // that what is tested is the second line of defence: where setup runs once such a change has landed.
      '- [ ] T-1 One\n  attempts: 1\n  files: scripts/setup.sh\n- [ ] T-2 Two\n  after: T-1\n  attempts: 1',
      { 'scripts/setup.sh': 'echo base setup\n' },
    );
    const edits: Record<string, Record<string, string>> = {
      'T-1': { 'scripts/setup.sh': `echo pwned >> ${canary}\n`, 'done.txt': 'done\n' },
      'T-2': { 'done.txt': 'two\n' },
    };
    const h = await runFleet(root, ({ task, role }) => (role === 'implementer' ? { edits: edits[task] ?? {} } : {}), {
      autoMerge: true,
    });
    expect(h.fleet.task('T-1')!.status).toBe('merged');
    expect(h.fleet.task('T-1')!.attempts[0]!.setup!.outputTail).toContain('base setup');
    expect(existsSync(canary)).toBe(false);
    const t2 = h.fleet.task('T-2')!.attempts[0]!;
    expect(t2.outcome).toBe('setup-failed');
    expect(t2.reason).toMatch(/\(in the sandbox: main holds agent-written code that landed during this run\)/);
  });

  it("on the person's code, setup runs as their shell would: their HOME and ~/.npmrc, a private CA named by NODE_EXTRA_CA_CERTS, no model key", async () => {
    const server = await privateCaServer();
    cleanups.push(() => server.close());
    const home = await mkdtemp(path.join(os.tmpdir(), 'lf-home-'));
    cleanups.push(() => rm(home, { recursive: true, force: true }));
    await writeFile(path.join(home, '.npmrc'), `registry=${server.url}\nupdate-notifier=false\nfetch-retries=0\n`);
    hostEnv({
      HOME: home,
      NODE_EXTRA_CA_CERTS: server.caFile,
      OPENAI_API_KEY: 'sk-openai',
      GEMINI_API_KEY: 'g-key',
      GITHUB_TOKEN: 'ghp-x',
      GITLAB_TOKEN: 'glpat-x',
      CLAUDE_CODE_OAUTH_TOKEN: 'oauth',
    });
    const root = await repo('setup: "npm ping && env > .setup-env"\nreview: true', '- [ ] T-1 One\n  attempts: 1', {
      '.gitignore': '.setup-env\n',
    });
    const h = await runFleet(root, ({ role }) => (role === 'implementer' ? { edits: { 'done.txt': 'done\n' } } : {}));
    const attempt = h.fleet.task('T-1')!.attempts[0]!;
    expect(attempt.setup?.exitCode, attempt.setup?.outputTail).toBe(0);
    expect(server.requests, attempt.setup?.outputTail).toEqual(
      expect.arrayContaining([expect.stringMatching(/^\/-\/ping/)]),
    );
    const env = await read(root, '.loop-worktrees/T-1/.setup-env');
    expect(env).toContain(`HOME=${home}\n`);
    for (const name of [
      'ANTHROPIC_API_KEY',
      'ANTHROPIC_BASE_URL',
      'OPENAI_API_KEY',
      'GEMINI_API_KEY',
      'GITHUB_TOKEN',
      'GITLAB_TOKEN',
      'CLAUDE_CODE_OAUTH_TOKEN',
    ]) {
      expect(env).not.toMatch(new RegExp(`^${name}=`, 'm'));
    }
  });

  it('in the sandbox after a landing, setup reaches the network: hosts through the egress proxy, with the CA file bound in, and no other host', async () => {
    const registry = await privateCaServer();
    cleanups.push(() => registry.close());
    const other: string[] = [];
    const otherServer = createServer((req, res) => (other.push(req.url ?? ''), res.end('x\n')));
    await new Promise<void>((resolve) => otherServer.listen(0, '127.0.0.1', () => resolve()));
    cleanups.push(() => new Promise<void>((resolve) => otherServer.close(() => resolve())));
    const otherUrl = `http://127.0.0.1:${(otherServer.address() as AddressInfo).port}/leak`;
    hostEnv({ NODE_EXTRA_CA_CERTS: registry.caFile });
    const probe = `(async () => { const out = []; for (const u of ${JSON.stringify([`${registry.url}pkg`, otherUrl])}) { try { out.push(u + ' ' + (await fetch(u)).status); } catch (e) { out.push(u + ' refused'); } } console.log(out.join(' | ')); })()`;
    const root = await repo(
      [
        `network:\n  - 127.0.0.1:${registry.port}`,
        `setup: ${JSON.stringify(`[ "$LOOPFLEET_TASK_ID" != T-2 ] || node -e ${q(probe)}`)}`,
        'check: test -f done.txt',
      ].join('\n'),
      // The guard refuses a change to the file setup runs unless the task's files: allow it; allowed here, so
      // that what is tested is the second line of defence: where setup runs once such a change has landed.
      '- [ ] T-1 One\n  attempts: 1\n  files: scripts/setup.sh\n- [ ] T-2 Two\n  after: T-1\n  attempts: 1',
    );
    const h = await runFleet(
      root,
      ({ role, task }) => (role === 'implementer' ? { edits: { 'done.txt': `${task}\n` } } : {}),
      { autoMerge: true },
    );
    const t2 = h.fleet.task('T-2')!.attempts[0]!;
    expect(t2.setup?.exitCode, t2.setup?.outputTail).toBe(0);
    expect(t2.setup?.outputTail).toContain(`${registry.url}pkg 200 | ${otherUrl} refused`);
    expect(registry.requests).toEqual(['/pkg']);
    expect(other).toEqual([]);
  });
});
