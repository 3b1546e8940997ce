import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { audit } from '../../src/commands/audit.js';
import { init } from '../../src/commands/init.js';
import { parseBacklog } from '../../src/core/backlog/parse.js';
import { statusRows } from '../../src/commands/status.js';
import { findRepo } from '../../src/commands/repo.js';
import { backlog } from '../helpers/fleet-harness.js';
import { git, makeRepo, read } from '../helpers/git-repo.js';

let cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups) await c();
  cleanups = [];
});

async function run(root: string, env: NodeJS.ProcessEnv) {
  const lines: string[] = [];
  const code = await audit(await findRepo(root), env, (l) => lines.push(l));
  return { code, text: lines.join('\n') };
}

describe('loopfleet audit', () => {
  it('says a well-gated backlog is ready and prints its cost ceiling', async () => {
    const r = await makeRepo({
      'BACKLOG.md': backlog(
        'check: test -f ok.txt\ngates:\n  tokens: 100k\n  time: 10m\n  cost: 3\n  fleet_cost: 5',
        '- [ ] T-1 One\n- [ ] T-2 Two\n  tokens: 200k\n- [x] T-3 Done',
      ),
      'ok.txt': 'present\n',
    });
    cleanups.push(r.cleanup);
    const { code, text } = await run(r.root, { ...process.env, ANTHROPIC_API_KEY: 'k' });
    expect(text).toMatch(/✔ every task has a check command/);
    expect(text).toMatch(/`test -f ok.txt` passes on main \(T-1, T-2\)/);
    // T-1: cost gate $3 beats 100k tokens x $10/M = $1? no: the token ceiling ($1.00) is lower
    expect(text).toMatch(/T-1 +\$1\.00 +\(token gate 100k/);
    // T-2: no cost gate, 200k tokens at sonnet 5.5 output price $10/M
    expect(text).toMatch(/T-2 +\$2\.00/);
    expect(text).toMatch(/total +\$3\.00 +\(the sum of the task ceilings\)/);
    expect(text).toMatch(/Readiness: 100\/100 — ready/);
    expect(code).toBe(0);
    expect(existsSync(join(r.root, '.loop-worktrees', '.audit'))).toBe(false);
    expect(await git(r.root, 'worktree', 'list')).not.toContain('.audit');
  });

  it('lists what to fix on an unready backlog and exits 1', async () => {
    const r = await makeRepo({
      'BACKLOG.md': backlog(
        'model: my-local-model\ngates:\n  tokens: none',
        '- [ ] T-1 No check here\n- [ ] T-2 Failing check\n  check: "false"',
      ),
    });
    cleanups.push(r.cleanup);
    const env = { ...process.env };
    delete env.ANTHROPIC_API_KEY;
    delete env.ANTHROPIC_AUTH_TOKEN;
    delete env.ANTHROPIC_BASE_URL;
    const { code, text } = await run(r.root, env);
    expect(code).toBe(1);
    expect(text).toMatch(/✗ no check command for T-1/);
    expect(text).toMatch(/✗ .*ANTHROPIC_API_KEY/);
    expect(text).toMatch(/✗ model my-local-model has no price/);
    expect(text).toMatch(/· `"false"` fails on main already \(T-2\)/);
    expect(text).toMatch(/total +unbounded/);
    expect(text).toMatch(/not ready/);
  });
});

describe('loopfleet init', () => {
  it('writes a commented BACKLOG.md that parses to no tasks, agents/README.md and the ignore rule, and never overwrites', async () => {
    const r = await makeRepo({ 'README.md': 'x\n' });
    cleanups.push(r.cleanup);
    const repo = await findRepo(r.root);
    const lines: string[] = [];
    expect(await init(repo, (l) => lines.push(l))).toBe(0);
    expect(await read(r.root, 'BACKLOG.md')).toMatch(/^---/);
    expect(await read(r.root, 'agents/README.md')).toContain('command:');
    expect(await readFile(join(r.root, '.git', 'info', 'exclude'), 'utf8')).toContain('/.loop-worktrees/');
    expect(await statusRows(repo)).toEqual([]);
    await writeOwn(r.root);
    expect(await init(repo, () => undefined)).toBe(0);
    expect(await read(r.root, 'BACKLOG.md')).toBe('- [ ] T-1 mine\n');
  });
});

describe('loopfleet init on a repository that declares its commands', () => {
  it('writes check: and setup: uncommented, each saying where it came from (a p-limit-like package.json)', async () => {
    const r = await makeRepo({
      'package.json': JSON.stringify(
        {
          name: 'p-limit',
          type: 'module',
          scripts: { test: 'xo && ava && tsd' },
          devDependencies: { ava: '^6', tsd: '^0.31', xo: '^0.58' },
        },
        null,
        2,
      ),
      '.npmrc': 'package-lock=false\n',
    });
    cleanups.push(r.cleanup);
    const repo = await findRepo(r.root);
    const lines: string[] = [];
    expect(await init(repo, (l) => lines.push(l))).toBe(0);
    const text = await read(r.root, 'BACKLOG.md');
    expect(text).toMatch(/^check: npm test +# package\.json scripts\.test$/m);
    expect(text).toMatch(/^setup: npm install +# no lockfile \(\.npmrc: package-lock=false\)$/m);
    expect(lines).toContain('check: npm test   (from package.json scripts.test)');
    const { backlog } = parseBacklog(text, join(r.root, 'BACKLOG.md'));
    expect([backlog.config.check, backlog.config.setup]).toEqual(['npm test', 'npm install']);
  });

  it('audit runs the proposed setup and check once on base and says whether they pass', {
    timeout: 60_000,
  }, async () => {
    // setup is `npm ci` (the lockfile); the check `npm test` fails on base until base holds ready.txt.
    const r = await makeRepo({
      'package.json': JSON.stringify({ name: 'x', scripts: { test: 'test -f ready.txt' } }),
      'package-lock.json': JSON.stringify({
        name: 'x',
        lockfileVersion: 3,
        requires: true,
        packages: { '': { name: 'x' } },
      }),
    });
    cleanups.push(r.cleanup);
    const repo = await findRepo(r.root);
    await init(repo, () => undefined);
    await git(r.root, 'add', '-A');
    await git(r.root, 'commit', '-qm', 'init');
    const env = {
      ...process.env,
      ANTHROPIC_API_KEY: 'k',
      npm_config_audit: 'false',
      npm_config_fund: 'false',
      npm_config_offline: 'true',
    };
    const first = await run(r.root, env);
    expect(first.text).toMatch(/✔ setup `npm ci` passes on main/);
    expect(first.text).toMatch(/· `npm test` fails on main already \(the backlog's check\)/);
    // The same check passes once base has what it tests for.
    const { writeFile } = await import('node:fs/promises');
    await writeFile(join(r.root, 'ready.txt'), 'yes\n');
    await git(r.root, 'add', '-A');
    await git(r.root, 'commit', '-qm', 'ready');
    const second = await run(r.root, env);
    expect(second.text).toMatch(/· `npm test` passes on main \(the backlog's check\)/);
  });
});

async function writeOwn(root: string): Promise<void> {
  const { writeFile } = await import('node:fs/promises');
  await writeFile(join(root, 'BACKLOG.md'), '- [ ] T-1 mine\n');
}
