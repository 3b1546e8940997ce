import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { discover, type DiscoverOptions } from '../../../src/commands/discover.js';
import { findRepo } from '../../../src/commands/repo.js';
import { parseBacklog } from '../../../src/core/backlog/parse.js';
import { DISCOVER_SOURCES, type DiscoverSource } from '../../../src/domain/types.js';
import { git, read } from '../../helpers/git-repo.js';
import { FIXTURE_BACKLOG, fixture, fixtureRepo, replay } from '../../helpers/discover-fixture.js';

let cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups) await c();
  cleanups = [];
});

async function run(root: string, options: Partial<DiscoverOptions> = {}) {
  const lines: string[] = [];
  const remote = replay({ outdated: fixture('npm-outdated.json'), audit: fixture('npm-audit.json') });
  const code = await discover(
    await findRepo(root),
    {
      dryRun: false,
      limit: null,
      only: new Set<DiscoverSource>(DISCOVER_SOURCES),
      githubLabel: 'loopfleet',
      env: process.env,
      remote: () => remote,
      ...options,
    },
    (l) => lines.push(l),
  );
  return { code, text: lines.join('\n') };
}

function discovered(text: string) {
  return parseBacklog(text, 'BACKLOG.md')
    .backlog.tasks.filter((t) => t.discovered === true)
    .map((t) => [t.source, t.priority, t.check ?? null]);
}

describe('loopfleet discover on a fixture repository', () => {
  it('proposes each finding with its source and priority, security first; a second run adds nothing', {
    timeout: 60_000,
  }, async () => {
    const r = await fixtureRepo();
    cleanups.push(r.cleanup);
    const first = await run(r.root);
    expect(first.code).toBe(0);
    const text = await read(r.root, 'BACKLOG.md');
    expect(text.startsWith(FIXTURE_BACKLOG)).toBe(true);
    expect(discovered(text)).toEqual([
      ['dep minimist', 'high', null],
      ['dep lodash', 'high', null],
      ['test test/calc.test.js', 'high', 'node --test test/calc.test.js'],
      ['lint src/calc.js', 'normal', null],
      ['todo src/util.ts:3', 'normal', null],
      ['todo src/calc.js:2', 'low', null],
      ['todo tools/report.py:6', 'low', null],
      ['dep left-pad', 'low', null],
    ]);
    expect(text).toContain('## Discovered');
    expect(text).toContain('A TODO comment at src/calc.js:2, in `function add(a, b)`');
    expect(text).toContain('A FIXME comment at src/util.ts:3, in `get(key: string): string | undefined`');
    expect(text).toContain('A HACK comment at tools/report.py:6, in `def main(argv):`');
    expect(text).toContain('4 !== 5'); // the failing test's own output tail
    expect(text).toContain('src/calc.js:3:10: error no-plus');
    expect(text).toContain('Prototype Pollution in minimist');
    expect(text).not.toContain('vendor/lib.js');
    expect(text).not.toContain('notes.txt');
    expect(text).not.toContain('.discover-'); // the throw-away checkout's path is not in any output
    expect(first.text).toMatch(/issues: skipped/);
    // The throw-away worktree is gone and the checkout is clean but for BACKLOG.md.
    expect(await git(r.root, 'worktree', 'list')).not.toContain('.discover');
    expect(await git(r.root, 'status', '--porcelain')).toBe('M BACKLOG.md');

    const second = await run(r.root);
    expect(second.code).toBe(0);
    expect(second.text).toMatch(/0 new proposal\(s\), 8 already in BACKLOG\.md/);
    expect(await read(r.root, 'BACKLOG.md')).toBe(text);
  });

  it('removes the checkout an interrupted discover left behind, not that of one still running', {
    timeout: 60_000,
  }, async () => {
    const r = await fixtureRepo();
    cleanups.push(r.cleanup);
    const abandoned = join(r.root, '.loop-worktrees', '.discover-999999999-abcd');
    const running = join(r.root, '.loop-worktrees', `.discover-${process.pid}-beef`);
    await git(r.root, 'worktree', 'add', '--detach', abandoned);
    await git(r.root, 'worktree', 'add', '--detach', running);
    await run(r.root, { dryRun: true, only: new Set(['todo']) });
    const list = await git(r.root, 'worktree', 'list');
    expect(list).not.toContain('.discover-999999999-abcd');
    expect(list).toContain(`.discover-${process.pid}-beef`);
  });

  it('a check that does not finish proposes nothing, and says so', { timeout: 60_000 }, async () => {
    const r = await fixtureRepo(FIXTURE_BACKLOG.replace('check: node --test', 'check: sleep 20\ncheck_timeout: 1s'));
    cleanups.push(r.cleanup);
    const { code, text } = await run(r.root, { only: new Set(['tests']) });
    expect(code).toBe(0);
    expect(text).toMatch(/tests: `sleep 20` did not finish on main \(timed out or killed\): nothing proposed/);
    expect(text).toMatch(/0 new proposal\(s\)/);
  });

  it('a lint script whose tool is not installed proposes nothing, and says so', { timeout: 60_000 }, async () => {
    const r = await fixtureRepo();
    cleanups.push(r.cleanup);
    await writeFile(
      join(r.root, 'package.json'),
      JSON.stringify({ name: 'fixture', scripts: { lint: 'not-installed-linter .' } }),
    );
    await git(r.root, 'commit', '-qam', 'lint with a tool that is not there');
    const { text } = await run(r.root, { only: new Set(['lint']) });
    expect(text).toMatch(/lint: `npm run lint` could not run \(a command was not found\)/);
    expect(text).toMatch(/0 new proposal\(s\)/);
  });

  it('--dry-run prints the proposals and writes nothing', { timeout: 60_000 }, async () => {
    const r = await fixtureRepo();
    cleanups.push(r.cleanup);
    const { code, text } = await run(r.root, { dryRun: true, only: new Set(['todo', 'deps']) });
    expect(code).toBe(0);
    expect(text).toMatch(/\+ \[high\] +Fix the critical vulnerability in minimist {2}\(source: dep minimist\)/);
    expect(text).toMatch(
      /\+ \[low\] +TODO in src\/calc\.js: handle negative numbers {2}\(source: todo src\/calc\.js:2\)/,
    );
    expect(text).toMatch(/Dry run/);
    expect(await read(r.root, 'BACKLOG.md')).toBe(FIXTURE_BACKLOG);
  });

  it('--only todo runs only the TODO finder; --limit 2 adds the two highest', { timeout: 60_000 }, async () => {
    const r = await fixtureRepo();
    cleanups.push(r.cleanup);
    const remote = replay({});
    const only = await discover(
      await findRepo(r.root),
      { dryRun: false, limit: 2, only: new Set(['todo']), githubLabel: 'x', env: process.env, remote: () => remote },
      () => undefined,
    );
    expect(only).toBe(0);
    expect(remote.calls).toEqual([]);
    expect(discovered(await read(r.root, 'BACKLOG.md'))).toEqual([
      ['todo src/util.ts:3', 'normal', null],
      ['todo src/calc.js:2', 'low', null],
    ]);
    // The third TODO comes on the next run, after the two already there.
    await discover(
      await findRepo(r.root),
      { dryRun: false, limit: 2, only: new Set(['todo']), githubLabel: 'x', env: process.env, remote: () => remote },
      () => undefined,
    );
    expect(discovered(await read(r.root, 'BACKLOG.md')).map((d) => d[0])).toEqual([
      'todo src/util.ts:3',
      'todo src/calc.js:2',
      'todo tools/report.py:6',
    ]);
  });

  it('a TODO whose line moved is the same proposal; a new TODO on its old line is new', {
    timeout: 60_000,
  }, async () => {
    const r = await fixtureRepo();
    cleanups.push(r.cleanup);
    await run(r.root, { only: new Set(['todo']) });
    await writeFile(
      join(r.root, 'src/calc.js'),
      'function add(a, b) {\n  // XXX: overflow is not checked\n  // (the old line)\n  // TODO: handle negative numbers\n  return a + b;\n}\n',
    );
    await git(r.root, 'commit', '-qam', 'move the TODO');
    const { text } = await run(r.root, { only: new Set(['todo']) });
    expect(text).toMatch(/1 new proposal\(s\), 3 already/);
    const sources = discovered(await read(r.root, 'BACKLOG.md')).map((d) => d[0]);
    expect(sources.filter((s) => s!.startsWith('todo src/calc.js'))).toEqual([
      'todo src/calc.js:2',
      'todo src/calc.js:2',
    ]);
    expect(await read(r.root, 'BACKLOG.md')).toContain('XXX in src/calc.js: overflow is not checked');
  });

  it('keeps an edit a person saves while discover runs, and does not double what they added by hand', {
    timeout: 60_000,
  }, async () => {
    const r = await fixtureRepo();
    cleanups.push(r.cleanup);
    const path = join(r.root, 'BACKLOG.md');
    const edited = `${FIXTURE_BACKLOG}- [ ] T-2 Written while discover ran\n- [ ] Bump left-pad myself\n  source: dep left-pad\n`;
    const remote = replay({ outdated: fixture('npm-outdated.json'), audit: '{}' }, () => writeFile(path, edited));
    await discover(
      await findRepo(r.root),
      { dryRun: false, limit: null, only: new Set(['deps']), githubLabel: 'x', env: process.env, remote: () => remote },
      () => undefined,
    );
    const text = await read(r.root, 'BACKLOG.md');
    expect(text.startsWith(edited)).toBe(true);
    expect(discovered(text)).toEqual([['dep lodash', 'low', null]]);
  });

  it('proposes labelled GitHub issues through gh, and skips with a note when gh is logged out', {
    timeout: 60_000,
  }, async () => {
    const r = await fixtureRepo();
    cleanups.push(r.cleanup);
    const issues = JSON.stringify([
      {
        number: 12,
        title: 'Crash on empty input',
        body: 'Steps:\n  check: rm -rf /\n```\nstack\n```\n- [ ] T-99 not an item',
      },
    ]);
    const remote = replay({
      gh: { 'auth status': { exitCode: 0, output: 'Logged in' }, 'issue list': { exitCode: 0, output: issues } },
    });
    await discover(
      await findRepo(r.root),
      {
        dryRun: false,
        limit: null,
        only: new Set(['issues']),
        githubLabel: 'good first',
        env: process.env,
        remote: () => remote,
      },
      () => undefined,
    );
    expect(remote.calls[1]).toBe(
      "gh issue list --state open --label 'good first' --limit 100 --json number,title,body",
    );
    const text = await read(r.root, 'BACKLOG.md');
    const tasks = parseBacklog(text, 'BACKLOG.md').backlog.tasks;
    expect(tasks.map((t) => t.id)).toEqual(['T-1', 'T-2']);
    const issue = tasks[1]!;
    expect([issue.title, issue.source, issue.priority, issue.check]).toEqual([
      'GitHub #12: Crash on empty input',
      'gh#12',
      'normal',
      undefined,
    ]);
    expect(issue.description).toContain('check: rm -rf /'); // quoted, never a field

    const out: string[] = [];
    const loggedOut = replay({ gh: { 'auth status': { exitCode: 1, output: 'not logged in' } } });
    await discover(
      await findRepo(r.root),
      {
        dryRun: true,
        limit: null,
        only: new Set(['issues']),
        githubLabel: 'x',
        env: process.env,
        remote: () => loggedOut,
      },
      (l) => out.push(l),
    );
    expect(out.join('\n')).toMatch(/issues: skipped, gh is not logged in/);
  });
});
