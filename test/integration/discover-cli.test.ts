import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseBacklog } from '../../src/core/backlog/parse.js';
import { FIXTURE_BACKLOG, FIXTURES, fixtureRepo } from '../helpers/discover-fixture.js';
import { read } from '../helpers/git-repo.js';
import { CLI } from '../helpers/paths.js';

/**
 * `npm` and `gh` stand-ins on PATH: `npm outdated` / `npm audit` print recorded output (no registry here),
 * every other npm command is the real npm; `gh` answers as a logged-in GitHub CLI would.
 */
let bin: string;
beforeAll(async () => {
  bin = await mkdtemp(join(tmpdir(), 'loopfleet-discover-bin-'));
  const realNpm = (await execa('sh', ['-c', 'command -v npm'])).stdout.trim();
  await writeFile(
    join(bin, 'npm'),
    `#!/bin/sh\ncase "$1" in\n  outdated) cat '${FIXTURES}/npm-outdated.json'; exit 1;;\n  audit) cat '${FIXTURES}/npm-audit.json'; exit 1;;\nesac\nexec '${realNpm}' "$@"\n`,
  );
  await writeFile(
    join(bin, 'gh'),
    `#!/bin/sh\ncase "$1 $2" in\n  "auth status") echo "Logged in"; exit 0;;\n  "issue list") echo '[{"number":7,"title":"Support negative numbers","body":"add(-1, 1) is wrong"}]'; exit 0;;\nesac\nexit 1\n`,
  );
  await chmod(join(bin, 'npm'), 0o755);
  await chmod(join(bin, 'gh'), 0o755);
});
afterAll(async () => rm(bin, { recursive: true, force: true }));

function cli(cwd: string, args: string[]) {
  return execa(process.execPath, [CLI, ...args], {
    cwd,
    reject: false,
    env: { PATH: `${bin}:${process.env.PATH}`, NO_COLOR: '1' },
    extendEnv: true,
    timeout: 90_000,
  });
}

describe('loopfleet discover, the built CLI', () => {
  it('proposes every kind of finding, adds nothing the second time, and exits 0', { timeout: 180_000 }, async () => {
    const r = await fixtureRepo();
    try {
      const dry = await cli(r.root, ['discover', '--dry-run']);
      expect(dry.stderr).toBe('');
      expect(dry.exitCode).toBe(0);
      expect(dry.stdout).toMatch(/9 new proposal\(s\):/);
      expect(dry.stdout).toMatch(/\+ \[normal\] GitHub #7: Support negative numbers {2}\(source: gh#7\)/);
      expect(dry.stdout).toMatch(/Dry run: BACKLOG\.md is unchanged\./);
      expect(await read(r.root, 'BACKLOG.md')).toBe(FIXTURE_BACKLOG);

      const run = await cli(r.root, ['discover', '--github-label', 'bug']);
      expect(run.exitCode).toBe(0);
      expect(run.stdout).toMatch(/Added 9 under ## Discovered/);
      const tasks = parseBacklog(await read(r.root, 'BACKLOG.md'), 'BACKLOG.md').backlog.tasks;
      expect(tasks.filter((t) => t.discovered).map((t) => t.source)).toEqual([
        'dep minimist',
        'dep lodash',
        'test test/calc.test.js',
        'lint src/calc.js',
        'gh#7',
        'todo src/util.ts:3',
        'todo src/calc.js:2',
        'todo tools/report.py:6',
        'dep left-pad',
      ]);

      const again = await cli(r.root, ['discover']);
      expect(again.exitCode).toBe(0);
      expect(again.stdout).toMatch(/0 new proposal\(s\), 9 already in BACKLOG\.md/);

      // Proposals are not tasks the fleet runs: status lists the person's task only.
      const status = await cli(r.root, ['status', '--json']);
      expect((JSON.parse(status.stdout) as Array<{ id: string }>).map((t) => t.id)).toEqual(['T-1']);
    } finally {
      await r.cleanup();
    }
  });

  it('--only todo --limit 2 adds the two highest TODOs; bad usage exits 2 and writes nothing', {
    timeout: 120_000,
  }, async () => {
    const r = await fixtureRepo();
    try {
      for (const [args, message] of [
        [['discover', '--only', 'todo,nope'], /--only: unknown finder 'nope'; known: todo, tests, lint, deps, issues/],
        [['discover', '--limit', '0'], /--limit: '0' is not a positive whole number/],
        [['discover', '--github-label', ' '], /--github-label needs a label name/],
        [['status', '--dry-run'], /--dry-run is an option of `loopfleet discover` and `loopfleet eval` only/],
        [['discover', 'extra'], /unexpected argument 'extra'/],
      ] as const) {
        const bad = await cli(r.root, [...args]);
        expect(bad.exitCode, args.join(' ')).toBe(2);
        expect(bad.stderr).toMatch(message);
      }
      expect(await read(r.root, 'BACKLOG.md')).toBe(FIXTURE_BACKLOG);

      const limited = await cli(r.root, ['discover', '--only', 'todo', '--limit', '2']);
      expect(limited.exitCode).toBe(0);
      expect(limited.stdout).not.toMatch(/tests:|lint:|deps:|issues:/);
      expect(limited.stdout).toMatch(/3 new proposal\(s\); --limit 2 keeps the first 2:/);
      const tasks = parseBacklog(await read(r.root, 'BACKLOG.md'), 'BACKLOG.md').backlog.tasks;
      expect(tasks.filter((t) => t.discovered).map((t) => [t.source, t.priority])).toEqual([
        ['todo src/util.ts:3', 'normal'],
        ['todo src/calc.js:2', 'low'],
      ]);
    } finally {
      await r.cleanup();
    }
  });

  it('--help names discover and its options', async () => {
    const help = await execa(process.execPath, [CLI, '--help']);
    expect(help.stdout).toMatch(/loopfleet discover +propose tasks under ## Discovered/);
    expect(help.stdout).toMatch(/--only LIST/);
    expect(help.stdout).toMatch(/labelled GitHub or GitLab issues\)/);
    expect(help.stdout).toMatch(
      /--github-label L +discover: the label of the issues to propose, on GitHub or GitLab \(default loopfleet\)/,
    );
  });
});
