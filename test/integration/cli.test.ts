import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startModelServer, type RunningModelServer } from '../../src/demo/model-server.js';
import { demoScript } from '../../src/demo/scripts.js';
import { backlog } from '../helpers/fleet-harness.js';
import { git, makeRepo, read, writeFiles } from '../helpers/git-repo.js';
import { CLI } from '../helpers/paths.js';

const SENTINEL_KEY = 'sk-ant-sentinel-0123456789abcdefghijklmnopqrstuvwxyz';

let server: RunningModelServer;
beforeAll(async () => {
  server = await startModelServer({
    apiKeys: [SENTINEL_KEY],
    script: demoScript([
      { taskId: 'T-1', kind: 'pass', edits: [{ path: 'hello.txt', content: 'hello\n' }] },
      {
        taskId: 'T-2',
        kind: 'veto',
        edits: [{ path: 'other.txt', content: 'x\n' }],
        vetoReason: 'does not do the task',
      },
    ]),
  });
});
afterAll(async () => server.close());

function cli(cwd: string, args: string[], env: Record<string, string | undefined> = {}) {
  return execa(process.execPath, [CLI, ...args], {
    cwd,
    reject: false,
    env: { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: SENTINEL_KEY, NO_COLOR: '1', ...env },
    extendEnv: true,
    timeout: 60_000,
  });
}

async function allFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) out.push(join(e.parentPath, e.name));
  }
  return out;
}

describe('the built CLI as a subprocess', () => {
  it('runs --overnight, reports status as JSON, merges and discards, exit codes as documented', {
    timeout: 120_000,
  }, async () => {
    const { root, cleanup } = await makeRepo({
      'BACKLOG.md': backlog(
        'check: test -f hello.txt || test -f other.txt\nreview: true\ngates:\n  attempts: 1',
        '- [ ] T-1 Say hello\n- [ ] T-2 Something vetoed',
      ),
    });
    try {
      const run = await cli(root, ['--overnight']);
      expect(run.stdout).toMatch(/T-1 verified/);
      expect(run.stdout).toMatch(/T-2 failed/);
      expect(run.exitCode).toBe(1);
      const reports = await readdir(join(root, '.loop-worktrees', 'reports'));
      expect(reports).toHaveLength(1);
      const report = await read(root, `.loop-worktrees/reports/${reports[0]}`);
      expect(report).toContain('## T-1 Say hello');
      expect(report).toContain('**Reviewer:** veto');

      const status = await cli(root, ['status', '--json']);
      expect(status.exitCode).toBe(0);
      const rows = JSON.parse(status.stdout) as Array<Record<string, unknown>>;
      expect(rows.map((r) => [r.id, r.status])).toEqual([
        ['T-1', 'verified'],
        ['T-2', 'failed'],
      ]);
      // The documented fields keep their names; verification facts are added after them.
      expect(Object.keys(rows[0]!)).toEqual([
        'id',
        'title',
        'status',
        'phase',
        'attempt',
        'maxAttempts',
        'tokens',
        'costUsd',
        'branch',
        'reason',
        'checks',
        'counts',
        'baseline',
        'proof',
        'conflictsWith',
        'conflicts',
        'waitingFor',
        'pr',
        'parent',
        'waitingForReview',
      ]);
      expect(rows[0]!.tokens).toBeGreaterThan(0);
      expect(rows[0]!.costUsd).toBeGreaterThan(0);
      expect(rows[0]!.branch).toBe('loop/T-1');

      // The key never lands in anything loopfleet wrote.
      for (const file of await allFiles(join(root, '.loop-worktrees'))) {
        if (file.includes(`${join('.loop-worktrees', 'T-')}`)) continue; // the worktrees' own checked-out files
        expect(await readFile(file, 'utf8'), file).not.toContain(SENTINEL_KEY);
      }

      const merge = await cli(root, ['merge', 'T-1'], { ANTHROPIC_API_KEY: undefined, ANTHROPIC_BASE_URL: undefined });
      expect(merge.stderr).toBe('');
      expect(merge.exitCode).toBe(0);
      expect(await read(root, 'hello.txt')).toBe('hello\n');
      expect(await read(root, 'BACKLOG.md')).toContain('- [x] T-1 Say hello');

      const again = await cli(root, ['merge', 'T-1']);
      expect(again.exitCode).toBe(1);
      expect(again.stderr).toMatch(/T-1 is merged: only verified tasks can be merged/);

      const discard = await cli(root, ['discard', 'T-2']);
      expect(discard.exitCode).toBe(0);
      expect(await git(root, 'rev-parse', '--verify', 'refs/loopfleet/discarded/T-2')).toMatch(/^[0-9a-f]{40}$/);

      const unknown = await cli(root, ['merge', 'T-9']);
      expect(unknown.exitCode).toBe(2);
      expect(unknown.stderr).toMatch(/no task T-9/);
    } finally {
      await cleanup();
    }
  });

  it('refuses bad input with exit 2 and writes nothing', async () => {
    const { root, cleanup } = await makeRepo({
      'BACKLOG.md': backlog('concurrency: 0\ngates:\n  tokenz: 5', '- [ ] T-1 A\n- [ ] T-1 B'),
    });
    try {
      const before = await read(root, 'BACKLOG.md');
      const run = await cli(root, ['--overnight']);
      expect(run.exitCode).toBe(2);
      expect(run.stderr).toMatch(/BACKLOG\.md:2: .*concurrency/);
      expect(run.stderr).toMatch(/tokenz/);
      expect(run.stderr).toMatch(/duplicate/i);
      expect(existsSync(join(root, '.loop-worktrees'))).toBe(false);
      expect(await read(root, 'BACKLOG.md')).toBe(before);

      expect((await cli(root, ['frobnicate'])).exitCode).toBe(2);
      expect((await cli(root, ['--concurrency', 'many', '--overnight'])).stderr).toMatch(
        /--concurrency: 'many' is not a positive whole number/,
      );
      expect((await cli(root, ['--max-time', '8 weeks', '--overnight'])).exitCode).toBe(2);
      expect((await cli(root, ['--bogus'])).exitCode).toBe(2);
    } finally {
      await cleanup();
    }
  });

  it('needs credentials, a repository with commits, a branch and a terminal for the TUI', async () => {
    const { root, cleanup } = await makeRepo({ 'BACKLOG.md': backlog('check: "true"', '- [ ] T-1 A') });
    try {
      const noKey = await cli(root, ['--overnight'], {
        ANTHROPIC_API_KEY: undefined,
        ANTHROPIC_BASE_URL: undefined,
        ANTHROPIC_AUTH_TOKEN: undefined,
      });
      expect(noKey.exitCode).toBe(2);
      expect(noKey.stderr).toMatch(/ANTHROPIC_API_KEY/);
      expect(existsSync(join(root, '.loop-worktrees'))).toBe(false);

      const tui = await cli(root, []);
      expect(tui.exitCode).toBe(2);
      expect(tui.stderr).toMatch(/--overnight/);

      await git(root, 'checkout', '--quiet', '--detach');
      const detached = await cli(root, ['--overnight']);
      expect(detached.exitCode).toBe(2);
      expect(detached.stderr).toMatch(/detached/);

      const empty = await makeRepo({ 'a.txt': 'a' });
      await git(empty.root, 'checkout', '--quiet', '--orphan', 'fresh');
      await git(empty.root, 'rm', '-rq', '--cached', '.').catch(() => '');
      await writeFiles(empty.root, { 'BACKLOG.md': '- [ ] T-1 A\n' });
      const noCommits = await cli(empty.root, ['--overnight']);
      expect(noCommits.exitCode).toBe(2);
      expect(noCommits.stderr).toMatch(/no commits/);
      await empty.cleanup();

      await git(root, 'checkout', '--quiet', 'main');
      await writeFiles(root, { 'BACKLOG.md': backlog('base: release\ncheck: "true"', '- [ ] T-1 A') });
      const noBase = await cli(root, ['--overnight']);
      expect(noBase.exitCode).toBe(2);
      expect(noBase.stderr).toMatch(/base branch 'release' does not exist/);
      expect(existsSync(join(root, '.loop-worktrees'))).toBe(false);

      const outside = await cli('/', ['status']);
      expect(outside.exitCode).toBe(2);
      expect(outside.stderr).toMatch(/not inside a git repository/);
    } finally {
      await cleanup();
    }
  });

  it('prints help and version', async () => {
    const help = await cli('/', ['--help']);
    expect(help.exitCode).toBe(0);
    for (const word of ['--overnight', 'status', 'merge', 'discard', 'prune', 'audit', 'demo', 'Exit codes'])
      expect(help.stdout).toContain(word);
    const version = await cli('/', ['--version']);
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });
});
