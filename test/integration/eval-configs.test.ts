import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startModelServer, type RunningModelServer } from '../../src/demo/model-server.js';
import { byRole } from '../../src/demo/script-kit.js';
import type { ScriptRequest, ScriptTurn } from '../../src/demo/script-types.js';
import { backlog } from '../helpers/fleet-harness.js';
import { commitFiles, LIB, TESTS } from '../helpers/eval-history.js';
import { git, makeRepo, writeFiles } from '../helpers/git-repo.js';
import { CLI, PACKAGED_AGENTS } from '../helpers/paths.js';

/**
 * `loopfleet eval` running its tasks under two configurations with the scripted model: `full` solves every
 * task, `partial` only `sub`. On `mul` a `partial` implementer writes a wrong function; on `neg` it attacks
 * the hidden test: it reads the test's path (which must not be in its worktree) and writes a test there
 * that passes — the check must run the hidden version, so the task fails. The person's checkout, index,
 * branches and refs stay as they were.
 */

let root: string;
let cleanup: () => Promise<void>;
let server: RunningModelServer;
const shas: Record<string, string> = {};
/** src/math.js as each fix left it: what a solving implementer writes */
const fixed: Record<string, string> = {};
/** what the implementer saw when it read a path, per task */
const readResults: Record<string, string[]> = {};

const FUNCTION_OF = /Add (sub|mul|neg)\b/;

/** The scripted model: the configuration speaks through the implementer's role file (`Solves: …`). */
function implementer(req: ScriptRequest): ScriptTurn {
  const fn = FUNCTION_OF.exec(req.prompt)?.[1];
  if (fn === undefined) return { text: 'No task I know.' };
  const solves = (/Solves: ([a-z ]+)/.exec(req.system)?.[1] ?? '').split(' ');
  const wrote = req.toolResults.some((r) => r.name === 'write') || req.assistantTurns >= 3;
  if (wrote) return { text: 'Done.' };
  if (solves.includes(fn)) {
    return {
      text: 'Writing the fix.',
      toolUses: [{ name: 'write', input: { file_path: 'src/math.js', content: fixed[fn]! } }],
    };
  }
  if (fn === 'neg') {
    // The attack: find the test the check will run, then replace it with one that cannot fail.
    if (req.assistantTurns === 0)
      return {
        text: 'Reading the test first.',
        toolUses: [{ name: 'read', input: { file_path: 'test/neg.test.js' } }],
      };
    for (const r of req.toolResults) if (r.name === 'read') (readResults.neg ??= []).push(r.content);
    return {
      text: 'Writing a test that passes.',
      toolUses: [
        {
          name: 'write',
          input: { file_path: 'test/neg.test.js', content: "require('node:test')('neg works', () => {});\n" },
        },
        { name: 'write', input: { file_path: 'src/math.js', content: `${fixed.mul!}exports.neg = (a) => a;\n` } },
      ],
    };
  }
  // A wrong mul: the hidden test fails on it.
  return {
    text: 'Writing mul.',
    toolUses: [
      { name: 'write', input: { file_path: 'src/math.js', content: `${fixed.sub!}exports.mul = (a, b) => a + b;\n` } },
    ],
  };
}

function cli(args: string[]) {
  const env: Record<string, string | undefined> = { ...process.env, NO_COLOR: '1' };
  delete env.ANTHROPIC_AUTH_TOKEN;
  Object.assign(env, { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: 'sk-test' });
  return execa(process.execPath, [CLI, ...args], { cwd: root, reject: false, env, extendEnv: false, timeout: 170_000 });
}

/** Everything of the person's repository a run could change: HEAD, index, checkout, refs, worktrees. */
async function personsRepository(): Promise<string[]> {
  return [
    await git(root, 'rev-parse', 'HEAD'),
    await git(root, 'symbolic-ref', 'HEAD'),
    await git(root, 'status', '--porcelain', '--untracked-files=all'),
    await git(root, 'for-each-ref', '--format=%(refname) %(objectname)'),
    await git(root, 'ls-files', '--stage'),
    await git(root, 'worktree', 'list', '--porcelain'),
  ];
}

async function configDir(name: string, solves: string): Promise<string> {
  const text = await readFile(join(PACKAGED_AGENTS, 'implementer.md'), 'utf8');
  await writeFiles(root, { [`.evalcfg/${name}/agents/implementer.md`]: `${text.trimEnd()}\n\nSolves: ${solves}\n` });
  return join(root, '.evalcfg', name);
}

beforeAll(async () => {
  server = await startModelServer({
    script: byRole({
      explorer: () => ({ text: '1. Change `src/math.js` as the task asks.\n\nFiles: `src/math.js`.' }),
      implementer,
      verifier: () => ({ text: JSON.stringify({ pass: true, reasons: ['The check passes.'] }) }),
    }),
  });
  const fns: Record<string, string> = { add: '(a, b) => a + b' };
  const cases: Record<string, string> = { 'add works': 'm.add(2, 3), 5' };
  const repo = await makeRepo({
    'BACKLOG.md': backlog(
      'check: node --test test/*.test.js\nreview: true\ngates:\n  attempts: 1',
      '- [ ] T-1 Something',
    ),
    '.gitignore': '.evalcfg/\n',
    'README.md': '# math\n',
    'src/math.js': LIB(fns),
    'test/math.test.js': TESTS(cases),
  });
  root = repo.root;
  cleanup = repo.cleanup;
  await commitFiles(root, { 'README.md': '# math\n\nSmall functions.\n' }, 'Docs');
  fns.sub = '(a, b) => a - b';
  cases['sub works'] = 'm.sub(5, 3), 2';
  fixed.sub = LIB(fns);
  shas.sub = await commitFiles(root, { 'src/math.js': fixed.sub, 'test/math.test.js': TESTS(cases) }, 'Add sub');
  await commitFiles(root, { 'src/util.js': 'exports.id = (x) => x;\n' }, 'Refactor: util');
  fns.mul = '(a, b) => a * b';
  cases['mul works'] = 'm.mul(2, 3), 6';
  fixed.mul = LIB(fns);
  shas.mul = await commitFiles(
    root,
    { 'src/math.js': fixed.mul, 'test/math.test.js': TESTS(cases) },
    'Add mul\n\nProducts.',
  );
  await commitFiles(root, { 'docs/usage.md': 'Call add, sub and mul.\n' }, 'Docs: usage');
  cases['add is commutative'] = 'm.add(3, 2), m.add(2, 3)';
  await commitFiles(root, { 'test/math.test.js': TESTS(cases) }, 'Tests only');
  fns.neg = '(a) => -a';
  fixed.neg = LIB(fns);
  shas.neg = await commitFiles(
    root,
    {
      'src/math.js': fixed.neg,
      'test/neg.test.js': `${TESTS({ 'neg works': 'm.neg(2), -2' })}`,
    },
    'Add neg',
  );
  await commitFiles(root, { 'src/util.js': 'exports.id = (y) => y;\n' }, 'Refactor: rename');
}, 60_000);

afterAll(async () => {
  await server?.close();
  await cleanup?.();
});

interface Json {
  tasks: Array<{ commit: string; title: string; failToPass: string[]; passToPass: number }>;
  configs: Array<{
    name: string;
    tasks: number;
    verified: number;
    verifiedShare: number;
    ci95: [number, number];
    costUsd: number;
    costPerVerified: number | null;
    medianSeconds: number | null;
    attempts: number;
    vetoes: number;
    guardRefusals: number;
    perTask: Record<string, string>;
  }>;
}

describe('loopfleet eval --config', () => {
  it('runs every task under each configuration with the hidden tests applied only for the check', {
    timeout: 180_000,
  }, async () => {
    const before = await personsRepository();
    const full = await configDir('full', 'sub mul neg');
    const partial = await configDir('partial', 'sub');
    const run = await cli(['eval', '--json', '--config', `full=${full}`, '--config', `partial=${partial}`]);
    expect(run.stderr).toBe('');
    expect(run.exitCode).toBe(0);
    const json = JSON.parse(run.stdout) as Json;
    expect(json.tasks.map((t) => [t.title, t.failToPass])).toEqual([
      ['Add neg', ['neg works']],
      ['Add mul', ['mul works']],
      ['Add sub', ['sub works']],
    ]);
    const [f, p] = json.configs;
    expect(f).toMatchObject({
      name: 'full',
      tasks: 3,
      verified: 3,
      verifiedShare: 1,
      attempts: 3,
      vetoes: 0,
      guardRefusals: 0,
      perTask: { [shas.sub!]: 'verified', [shas.mul!]: 'verified', [shas.neg!]: 'verified' },
    });
    expect(p).toMatchObject({
      name: 'partial',
      tasks: 3,
      verified: 1,
      attempts: 3,
      perTask: { [shas.sub!]: 'verified', [shas.mul!]: 'failed', [shas.neg!]: 'failed' },
    });
    expect(p!.verifiedShare).toBeCloseTo(1 / 3, 10);
    // Wilson at 3 of 3 and 1 of 3.
    expect(f!.ci95[0]).toBeCloseTo(0.4385, 3);
    expect(f!.ci95[1]).toBe(1);
    expect(p!.ci95[0]).toBeCloseTo(0.0615, 3);
    expect(p!.ci95[1]).toBeCloseTo(0.7923, 3);
    for (const c of [f!, p!]) {
      expect(c.costUsd).toBeGreaterThan(0);
      expect(c.costPerVerified).toBeCloseTo(c.costUsd / c.verified, 10);
      expect(c.medianSeconds).toBeGreaterThan(0);
    }

    // The attack: the implementer found no test at the hidden path, and its own passing test there lost.
    expect(readResults.neg?.length).toBeGreaterThan(0);
    for (const seen of readResults.neg!) expect(seen).not.toContain('m.neg(2), -2');

    // The files of the eval.
    const [stamp] = await readdir(join(root, '.loop-worktrees', 'evals'));
    const dir = join(root, '.loop-worktrees', 'evals', stamp!);
    const files = await readdir(dir);
    expect(files).toEqual(
      expect.arrayContaining(['candidates.json', 'candidates.md', 'result.json', 'report.md', 'chart.svg']),
    );
    const result = JSON.parse(await readFile(join(dir, 'result.json'), 'utf8')) as Json & {
      outcomes: Record<
        string,
        Array<{ commit: string; costUsd: number; reason: string | null; diffLines: number | null; humanLines: number }>
      >;
    };
    expect(result.configs).toEqual(json.configs);
    const negPartial = result.outcomes.partial!.find((o) => o.commit === shas.neg)!;
    expect(negPartial.reason).toMatch(/^check `node --test test\/\*\.test\.js` exited 1 \(1\/5 failing\)/);
    const subFull = result.outcomes.full!.find((o) => o.commit === shas.sub)!;
    expect(subFull).toMatchObject({ diffLines: 1, humanLines: 1 });
    const spent = result.outcomes.partial!.reduce((sum, o) => sum + o.costUsd, 0);
    expect(p!.costUsd).toBeCloseTo(spent, 10);
    const report = await readFile(join(dir, 'report.md'), 'utf8');
    expect(report).toContain('| full | 3 of 3 | 100 % (44 %–100 %) |');
    expect(report).toContain(`| ${shas.mul!.slice(0, 12)} | Add mul | verified | failed |`);
    const chart = await readFile(join(dir, 'chart.svg'), 'utf8');
    expect(chart).toContain('>partial</text>');

    // Nothing of the person's repository moved: no ref, branch or worktree was added.
    expect(await personsRepository()).toEqual(before);
  });

  it('stops starting tasks once --max-cost is spent, and refuses a bad --config before writing anything', {
    timeout: 120_000,
  }, async () => {
    const evals = join(root, '.loop-worktrees', 'evals');
    const stamps = (await readdir(evals)).length;
    const bad = await cli(['eval', '--config', 'no-equals-sign']);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toMatch(/--config: 'no-equals-sign' is not NAME=DIR/);
    const missing = await cli(['eval', '--config', `x=${join(root, 'nowhere')}`]);
    expect(missing.exitCode).toBe(2);
    expect(missing.stderr).toMatch(/--config x: .*nowhere is not a folder/);
    const twice = await cli(['eval', '--config', `a=${root}/.evalcfg/full`, '--config', `a=${root}/.evalcfg/full`]);
    expect(twice.stderr).toMatch(/the name 'a' is given twice/);
    expect((await readdir(evals)).length).toBe(stamps);

    const range = `${shas.sub}~1..${shas.sub}`;
    const full = join(root, '.evalcfg', 'full');
    const run = await cli([
      'eval',
      '--json',
      '--range',
      range,
      '--max-cost',
      '0.000001',
      '--config',
      `one=${full}`,
      '--config',
      `two=${full}`,
    ]);
    expect(run.stderr).toBe('');
    const json = JSON.parse(run.stdout) as Json;
    expect(json.configs.map((c) => c.perTask[shas.sub!])).toEqual(['failed', 'skipped']);
    expect(json.configs[0]!.costUsd).toBeGreaterThan(0);
    expect(json.configs[1]).toMatchObject({
      costUsd: 0,
      attempts: 0,
      verified: 0,
      costPerVerified: null,
      medianSeconds: null,
    });
  });

  it('takes the tasks from an edited candidates file with --from, and refuses one that lies', {
    timeout: 120_000,
  }, async () => {
    const evals = join(root, '.loop-worktrees', 'evals');
    const [first] = (await readdir(evals)).sort();
    const candidates = JSON.parse(await readFile(join(evals, first!, 'candidates.json'), 'utf8')) as Array<{
      commit: string;
      parent: string;
      kept: boolean;
      title: string;
      tests: string[];
    }>;
    // The person keeps only sub, and gives it a sharper title.
    const edited = candidates.map((c) => ({
      ...c,
      kept: c.kept && c.commit === shas.sub,
      title: c.commit === shas.sub ? 'Add sub (a - b)' : c.title,
    }));
    const file = join(root, '.evalcfg', 'edited.json');
    const sub = edited.findIndex((c) => c.commit === shas.sub);
    const lies: Array<[unknown, RegExp]> = [
      [
        edited.map((c, i) => (i === sub ? { ...c, tests: ['../outside.js'] } : c)),
        /test path '\.\.\/outside\.js' must be relative/,
      ],
      [
        edited.map((c, i) => (i === sub ? { ...c, parent: shas.mul } : c)),
        /not a commit of this repository whose first parent is/,
      ],
      [edited.map((c, i) => (i === sub ? { ...c, commit: 'HEAD' } : c)), /at \d+\.commit: a full commit id/],
      ['not a list', /at the top/],
    ];
    const stamps = (await readdir(evals)).length;
    for (const [content, message] of lies) {
      await writeFiles(root, { '.evalcfg/edited.json': JSON.stringify(content) });
      const bad = await cli(['eval', '--from', file]);
      expect(bad.exitCode).toBe(2);
      expect(bad.stderr).toMatch(message);
    }
    expect((await readdir(evals)).length).toBe(stamps);
    await writeFiles(root, { '.evalcfg/edited.json': JSON.stringify(edited) });
    const run = await cli(['eval', '--json', '--from', file, '--config', `one=${join(root, '.evalcfg', 'full')}`]);
    expect(run.stderr).toBe('');
    const json = JSON.parse(run.stdout) as Json;
    expect(json.tasks.map((t) => [t.commit, t.title])).toEqual([[shas.sub, 'Add sub (a - b)']]);
    expect(json.configs[0]).toMatchObject({ tasks: 1, verified: 1, perTask: { [shas.sub!]: 'verified' } });
  });
});
