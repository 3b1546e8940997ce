import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TaskBudget, taskGates } from '../../src/core/budget/gates.js';
import { taskReport } from '../../src/core/report/morning-report.js';
import { statusRow } from '../../src/core/report/status-row.js';
import { historyLines } from '../../src/ui/detail-content.js';
import type { TaskState } from '../../src/domain/types.js';
import type { FakeScript, FakeTurn } from '../helpers/fake-model.js';
import { backlog, openFleet, type Harness } from '../helpers/fleet-harness.js';
import { git, makeRepo } from '../helpers/git-repo.js';

/**
 * Best-of-N on a real repository, real git and the real sandbox, with a scripted model: each task runs three
 * candidates from one plan. Candidate numbers come from the worktree each implementer is given.
 */
const candidateOf = (workdir: string) => Number(/--c(\d+)$/.exec(workdir)?.[1] ?? 0);

/** The check runs code under test (`lib.sh`), which the implementer may change, sandboxed: the attack's way in. */
const CHECK = 'sh test.sh';
const TEST = 'sh lib.sh\ntest -f done.txt && ! grep -q bad done.txt\n';

/** Candidate 1's code under test tries to write into candidate 2's worktree and into the person's checkout. */
const HOOK = [
  'echo ATTACK-RAN',
  'echo evil > ../T-1--c2/evil.txt',
  'echo evil > ../../evil.txt',
  'echo evil > ../T-2--c3/evil.txt',
  'true',
].join('\n');

function signal(): { promise: Promise<void>; fire: () => void } {
  let fire!: () => void;
  const promise = new Promise<void>((resolve) => {
    fire = resolve;
  });
  return { promise, fire };
}

let root = '';
let cleanup: () => Promise<void> = async () => undefined;
let h: Harness;
const chooserPrompts: string[] = [];

beforeAll(async () => {
  const r = await makeRepo({
    'BACKLOG.md': backlog(
      `check: '${CHECK}'\nconcurrency: 5`,
      [
        '- [ ] T-1 Write done.txt\n  parallel: 3\n  attempts: 3',
        '- [ ] T-3 Write done.txt a third time\n  parallel: 2',
        '- [ ] T-2 Write done.txt again\n  parallel: 3',
      ].join('\n'),
    ),
    'test.sh': TEST,
    'lib.sh': 'true\n',
  });
  root = r.root;
  cleanup = r.cleanup;
  const attackRan = signal();
  const script: FakeScript = ({ role, task, request }): FakeTurn => {
    const k = candidateOf(request.workdir);
    if (role === 'explorer') return { text: `PLAN ${task}: write done.txt` };
    if (role === 'implementer') {
      if (task === 'T-1' && k === 1) return { edits: { 'done.txt': 'bad\n', 'lib.sh': HOOK } };
      // Candidate 2 implements only once candidate 1's hook has run, into a worktree that exists by then.
      if (task === 'T-1' && k === 2) return { edits: { 'done.txt': 'good two\n' }, until: attackRan.promise };
      if (task === 'T-1') return { edits: { 'done.txt': 'good\n' } };
      // T-3: two candidates of the same size
      if (task === 'T-3') return { edits: { 'done.txt': `good ${k}\n` } };
      // T-2: candidates 1 and 3 pass (3 with fewer files), 2 fails its check.
      if (k === 1) return { edits: { 'done.txt': 'good\n', 'extra.txt': 'more\n' } };
      if (k === 2) return { edits: { 'done.txt': 'bad\n' } };
      return { edits: { 'done.txt': 'good\n' } };
    }
    // The verifier: a review of one candidate, or the choice among several.
    if (request.outputSchema?.properties !== undefined && 'choice' in (request.outputSchema.properties as object)) {
      chooserPrompts.push(request.prompt);
      // A hostile or confused answer: the candidate that failed its check.
      return { text: '{"choice": 2, "reason": "the shortest"}' };
    }
    if (task === 'T-1' && k === 2) return { text: '{"pass": false, "reasons": ["changes the wording"]}' };
    return {};
  };
  h = await openFleet(root, script, { autoMerge: false });
  h.fleet.events.on('phase-output', ({ chunk }) => {
    if (chunk.includes('ATTACK-RAN')) attackRan.fire();
  });
  h.fleet.start();
  await h.fleet.whenIdle();
}, 40_000);

afterAll(async () => {
  await h?.session.close();
  await cleanup();
});

const task = (id: string): TaskState => h.fleet.task(id)!;
const refOf = async (ref: string) => (await git(root, 'for-each-ref', '--format=%(refname)', ref)).trim();

describe('parallel: 3 — three candidates from one plan', () => {
  it('one fails its check, one is vetoed, one passes: the passing one is the branch, the others are refs', async () => {
    const t = task('T-1');
    expect(t.status).toBe('verified');
    expect(t.attempts).toHaveLength(1);
    const round = t.attempts[0]!;
    expect(round.candidates!.map((c) => [c.k, c.outcome])).toEqual([
      [1, 'check-failed'],
      [2, 'vetoed'],
      [3, 'verified'],
    ]);
    expect(round.chosen).toEqual({ k: 3, by: 'rule' });
    expect(await git(root, 'show', 'loop/T-1:done.txt')).toBe('good');
    expect(await refOf('refs/loopfleet/candidates/T-1/1')).toBe('refs/loopfleet/candidates/T-1/1');
    expect(await git(root, 'show', 'refs/loopfleet/candidates/T-1/2:done.txt')).toBe('good two');
    expect(await refOf('refs/loopfleet/candidates/T-1/3')).toBe('');
    // the candidates' worktrees and branches are gone; the task's own worktree holds the chosen commit
    for (const k of [1, 2, 3]) {
      expect(existsSync(join(root, '.loop-worktrees', `T-1--c${k}`))).toBe(false);
      expect(await git(root, 'branch', '--list', `loop/T-1--c${k}`)).toBe('');
    }
    expect(await git(root, 'rev-parse', 'loop/T-1')).toBe(
      await git(root, '-C', join(root, '.loop-worktrees/T-1'), 'rev-parse', 'HEAD'),
    );
  });

  it('counts all three against the gates: one explorer, three implementers, attempts used 3 of 3', () => {
    const t = task('T-1');
    const roles = h.model.calls.filter((c) => c.task === 'T-1').map((c) => c.role);
    expect(roles.filter((r) => r === 'explorer')).toHaveLength(1);
    expect(roles.filter((r) => r === 'implementer')).toHaveLength(3);
    // reviews of the two that passed their checks; no choice (one verified)
    expect(roles.filter((r) => r === 'verifier')).toHaveLength(2);
    expect(new TaskBudget(taskGates({ ...specOf(t), attempts: 3 }, h.fleet.config)).attemptsUsed(t)).toBe(3);
    // 6 calls of 120 tokens each, booked to the task and its one round
    expect(t.usage.input + t.usage.output).toBe(720);
  });

  it("a candidate's code cannot write into another candidate's worktree or the checkout", async () => {
    expect(existsSync(join(root, 'evil.txt'))).toBe(false);
    expect(await git(root, 'ls-tree', '--name-only', 'refs/loopfleet/candidates/T-1/2')).not.toContain('evil.txt');
    expect(await git(root, 'ls-tree', '--name-only', 'loop/T-2')).not.toContain('evil.txt');
  });

  it("a reviewer's choice naming a candidate that failed its check does not land it: the rule chooses", async () => {
    const t = task('T-2');
    expect(t.status).toBe('verified');
    const round = t.attempts[0]!;
    expect(round.candidates!.map((c) => [c.k, c.outcome])).toEqual([
      [1, 'verified'],
      [2, 'check-failed'],
      [3, 'verified'],
    ]);
    const prompt = chooserPrompts.find((p) => p.includes('Task T-2'))!;
    expect(prompt).toContain('candidates are numbered 1, 3');
    expect(prompt).not.toContain('candidate 2:');
    // fewest files: 3 (done.txt) over 1 (done.txt, extra.txt)
    expect(round.chosen).toEqual({ k: 3, by: 'rule' });
    expect(await git(root, 'ls-tree', '--name-only', 'loop/T-2')).not.toContain('extra.txt');
    expect(await git(root, 'show', 'refs/loopfleet/candidates/T-2/1:extra.txt')).toBe('more');
  });

  it('the reviewer chooses among verified candidates when its answer names one of them', async () => {
    const round = task('T-3').attempts[0]!;
    expect(round.candidates!.map((c) => c.outcome)).toEqual(['verified', 'verified']);
    // the rule would take 1 (same size, lower k): the reviewer's 2 stands
    expect(round.chosen).toEqual({ k: 2, by: 'review' });
    expect(await git(root, 'rev-parse', 'loop/T-3')).toBe(round.candidates![1]!.commit);
    expect(await refOf('refs/loopfleet/candidates/T-3/1')).toBe('refs/loopfleet/candidates/T-3/1');
  });

  it('status rows list the candidates with their refs', () => {
    const row = statusRow(task('T-1'));
    expect(row.candidates).toEqual([
      { k: 1, status: 'check-failed', ref: 'refs/loopfleet/candidates/T-1/1', chosen: false },
      { k: 2, status: 'vetoed', ref: 'refs/loopfleet/candidates/T-1/2', chosen: false },
      { k: 3, status: 'verified', ref: null, chosen: true },
    ]);
  });

  it('the morning report and the detail view tell how the round went', () => {
    const report = taskReport(task('T-1'), h.fleet.config, 'main', () => undefined, new Date().toISOString());
    expect(report).toContain('- **Attempts:** 3 of 3');
    expect(report).toContain('- **Best of N:** 3 candidates: 1 failed check, 1 vetoed, 1 verified; chose 3 by rule');
    expect(report).toContain(
      '- candidate 2: vetoed — reviewer veto: changes the wording (refs/loopfleet/candidates/T-1/2)',
    );
    const history = historyLines(task('T-2'), 200).map((l) => l.text.trim());
    expect(history).toContain('3 candidates: 2 verified, 1 failed check; chose 3 by rule');
    expect(history).toContain('candidate 3: verified (chosen: the task branch)');
  });

  it('a discard removes the candidate refs with the task', async () => {
    await h.fleet.discard('T-2');
    expect(await refOf('refs/loopfleet/candidates/T-2/')).toBe('');
    expect(await refOf('refs/loopfleet/candidates/T-1/')).not.toBe('');
  });
});

function specOf(t: TaskState) {
  return { id: t.id, title: t.title, line: 0, done: false, description: '', after: [], files: [] };
}
