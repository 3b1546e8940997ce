import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { doctor } from '../../src/commands/doctor.js';
import { findRepo } from '../../src/commands/repo.js';
import { claudeCodeRole } from '../../src/demo/claude-code-script.js';
import { startModelServer, type RunningModelServer } from '../../src/demo/model-server.js';
import { byRole } from '../../src/demo/script-kit.js';
import { backlog } from '../helpers/fleet-harness.js';
import { git, makeRepo } from '../helpers/git-repo.js';

const CLAUDE = path.resolve('node_modules/.bin/claude');
const KEY = 'sk-ant-doctor-key-0000000000';
let cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.reverse()) await c();
  cleanups = [];
});

async function setup(bin: string) {
  const server: RunningModelServer = await startModelServer({
    apiKeys: [KEY],
    script: byRole({
      explorer: claudeCodeRole({ steps: [], final: 'OK' }),
      implementer: claudeCodeRole({
        steps: [{ tool: 'Write', path: 'loopfleet-doctor.txt', content: 'ok\n' }],
        final: 'OK',
      }),
    }),
  });
  cleanups.push(() => server.close());
  const home = await mkdtemp(path.join(os.tmpdir(), 'lf-doctor-home-'));
  cleanups.push(() => rm(home, { recursive: true, force: true }));
  const role = (r: string) =>
    `---\nagent: claude-code\nbin: ${bin}\nmodel: claude-sonnet-5-5\n---\nYou are the ${r}.\n`;
  const r = await makeRepo({
    'BACKLOG.md': backlog('check: "true"\nreview: false', '- [ ] T-1 One'),
    'agents/explorer.md': role('explorer'),
    'agents/implementer.md': role('implementer'),
  });
  cleanups.push(r.cleanup);
  return {
    repo: await findRepo(r.root),
    env: {
      PATH: process.env.PATH,
      HOME: home,
      ANTHROPIC_BASE_URL: server.url,
      ANTHROPIC_API_KEY: KEY,
    } as NodeJS.ProcessEnv,
  };
}

async function run(repo: Awaited<ReturnType<typeof setup>>['repo'], env: NodeJS.ProcessEnv) {
  const lines: string[] = [];
  const code = await doctor(repo, env, (l) => lines.push(l));
  return { code, lines };
}

describe('loopfleet doctor', () => {
  it('passes a working setup: the real Claude Code, keyed, reaching the loopback model from the sandbox, writing a file', async () => {
    const { repo, env } = await setup(CLAUDE);
    const { code, lines } = await run(repo, env);
    expect(lines.join('\n')).not.toContain('FAIL');
    expect(code).toBe(0);
    expect(lines).toEqual([
      'ok   fleet: sandbox: bubblewrap works',
      // as root here: a pids cgroup of its own per sandboxed command; elsewhere doctor says it is unbounded
      expect.stringMatching(/^ok {3}fleet: processes: (at most 4096 processes per sandboxed command|unbounded: )/),
      expect.stringMatching(/^ok {3}explorer: installed: claude-code 2\.1\.332 \(Claude Code\)/),
      'ok   explorer: logged in: by ANTHROPIC_API_KEY',
      expect.stringMatching(
        /^ok {3}explorer: reachable: 127\.0\.0\.1:\d+ from inside the sandbox, model claude-sonnet-5-5, (?:\d{1,3}|\d{1,3}(?:\.\d)?[kM]) tokens$/,
      ),
      expect.stringMatching(/^ok {3}implementer: installed: /),
      'ok   implementer: logged in: by ANTHROPIC_API_KEY',
      expect.stringMatching(/^ok {3}implementer: reachable: /),
      'ok   implementer: can write: wrote loopfleet-doctor.txt in a throw-away repository',
    ]);
    expect(lines.join('\n')).not.toContain(KEY);
  }, 60_000);

  it('names a missing binary and a missing login, exit 1', async () => {
    const missing = await setup('/nowhere/bin/claude');
    const a = await run(missing.repo, missing.env);
    expect(a.code).toBe(1);
    expect(a.lines).toContain(
      'FAIL implementer: installed: claude-code: bin: /nowhere/bin/claude is not an executable file; install @anthropic-ai/claude-code (npm install -g @anthropic-ai/claude-code) or set bin: in agents/implementer.md',
    );

    const unkeyed = await setup(CLAUDE);
    const { ANTHROPIC_API_KEY: _key, ...env } = unkeyed.env;
    const b = await run(unkeyed.repo, env);
    expect(b.code).toBe(1);
    expect(b.lines).toContain(
      'FAIL explorer: logged in: no ANTHROPIC_API_KEY / ANTHROPIC_AUTH_TOKEN / CLAUDE_CODE_OAUTH_TOKEN and no login in ~/.claude/.credentials.json: run `claude /login`, or set ANTHROPIC_API_KEY',
    );
  }, 30_000);
});

describe('doctor and the person’s git configuration', () => {
  it('warns about a program setting that resolves into the working tree, without failing', async () => {
    const r = await makeRepo({ 'BACKLOG.md': backlog('check: "true"\nreview: false', '- [ ] T-1 One') });
    cleanups.push(r.cleanup);
    await git(r.root, 'config', 'filter.tidy.clean', './scripts/tidy.sh');
    const lines: string[] = [];
    await doctor(await findRepo(r.root), { PATH: process.env.PATH, ANTHROPIC_API_KEY: KEY } as NodeJS.ProcessEnv, (l) =>
      lines.push(l),
    );
    expect(lines.filter((l) => l.startsWith('warn '))).toEqual([
      expect.stringMatching(
        /^warn fleet: git config filter\.tidy\.clean \(local, \.git\/config\) runs \.\/scripts\/tidy\.sh, .*loopfleet runs git without it$/,
      ),
    ]);
  });
});
