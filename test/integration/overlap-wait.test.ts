import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { TaskState } from '../../src/domain/types.js';
import { backlog, openFleet } from '../helpers/fleet-harness.js';
import { git, makeRepo } from '../helpers/git-repo.js';

let cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups) await c();
  cleanups = [];
});

const PLAN = (what: string) => `1. Add ${what} to calc.js\n\n\`\`\`files\ncalc.js\n\`\`\``;

/** A promise and its resolver: one task's step waits on another's, so no ordering is left to timing. */
function signal(): { promise: Promise<void>; fire: () => void } {
  let fire!: () => void;
  const promise = new Promise<void>((resolve) => {
    fire = resolve;
  });
  return { promise, fire };
}

async function twoTasks() {
  const r = await makeRepo({
    'BACKLOG.md': backlog('check: "true"\nreview: false\nconcurrency: 2', '- [ ] T-1 One\n- [ ] T-2 Two'),
    'calc.js': 'base\n',
  });
  cleanups.push(r.cleanup);
  return r;
}

/** The implementer edits calc.js as it finds it in its worktree; what T-2's implementer found is kept. */
function implement(task: string, workdir: string, seenByTwo: string[]) {
  const now = readFileSync(join(workdir, 'calc.js'), 'utf8');
  if (task === 'T-2') seenByTwo.push(now);
  return { edits: { 'calc.js': `${now}${task === 'T-1' ? 'one' : 'two'}\n` } };
}

function onTask(
  h: { fleet: { events: { on(e: 'task', f: (p: { task: TaskState }) => void): unknown } } },
  when: (t: TaskState) => boolean,
  fire: () => void,
) {
  h.fleet.events.on('task', ({ task }) => {
    if (when(task)) fire();
  });
}

async function bothMerged(root: string) {
  expect(await git(root, 'show', 'main:calc.js')).toBe('base\none\ntwo');
  expect(
    (await git(root, 'log', '--format=%s', 'main')).split('\n').filter((s) => s.startsWith('Merge loop/')),
  ).toHaveLength(2);
}

describe('tasks whose plans name the same file', () => {
  it('a plan that arrives while the other task implements waits, then implements on a base that has it', {
    timeout: 90_000,
  }, async () => {
    const r = await twoTasks();
    const seenByTwo: string[] = [];
    const oneImplementing = signal();
    const twoWaiting = signal();
    const h = await openFleet(
      r.root,
      ({ role, task, request }) => {
        if (role === 'explorer')
          return task === 'T-1' ? { text: PLAN('one') } : { text: PLAN('two'), until: oneImplementing.promise };
        if (role !== 'implementer') return {};
        if (task === 'T-1') {
          oneImplementing.fire();
          // T-1 stays in play until T-2's plan has met its claim.
          return { ...implement(task, request.workdir, seenByTwo), until: twoWaiting.promise };
        }
        return implement(task, request.workdir, seenByTwo);
      },
      { autoMerge: true },
    );
    onTask(h, (t) => t.id === 'T-2' && t.waitingFor != null, twoWaiting.fire);
    h.fleet.start();
    await h.fleet.whenIdle();
    await h.session.close();

    expect(h.fleet.task('T-1')!.status).toBe('merged');
    const two = h.fleet.task('T-2')!;
    expect(two.status).toBe('merged');
    // the first attempt stopped at the overlap (it uses up no attempt); the second implemented the kept plan
    expect(two.attempts.filter((a) => a.n > 0).map((a) => a.outcome)).toEqual(['verified']);
    expect(
      two.attempts.some((a) => a.outcome === 'interrupted' && /waiting: overlaps T-1 on calc.js/.test(a.reason ?? '')),
    ).toBe(true);
    expect(h.model.calls.filter((c) => c.task === 'T-2').map((c) => c.role)).toEqual(['explorer', 'implementer']);
    expect(seenByTwo).toEqual(['base\none\n']);
    await bothMerged(r.root);
  });

  it('a plan that arrives after the other task has landed implements on the new base at once, in one attempt', {
    timeout: 90_000,
  }, async () => {
    const r = await twoTasks();
    const seenByTwo: string[] = [];
    const twoExploring = signal();
    const oneMerged = signal();
    const h = await openFleet(
      r.root,
      ({ role, task, request }) => {
        if (role === 'explorer' && task === 'T-2') {
          // T-2's worktree exists (made before its explorer), on the base without T-1.
          twoExploring.fire();
          return { text: PLAN('two'), until: oneMerged.promise };
        }
        if (role === 'explorer') return { text: PLAN('one'), until: twoExploring.promise };
        if (role !== 'implementer') return {};
        return implement(task, request.workdir, seenByTwo);
      },
      { autoMerge: true },
    );
    onTask(h, (t) => t.id === 'T-1' && t.status === 'merged', oneMerged.fire);
    h.fleet.start();
    await h.fleet.whenIdle();
    await h.session.close();

    const two = h.fleet.task('T-2')!;
    expect(two.status).toBe('merged');
    expect(two.attempts.map((a) => a.outcome)).toEqual(['verified']);
    expect(h.model.calls.filter((c) => c.task === 'T-2').map((c) => c.role)).toEqual(['explorer', 'implementer']);
    // the worktree was brought up to base before the implementer: it saw T-1's line
    expect(seenByTwo).toEqual(['base\none\n']);
    await bothMerged(r.root);
  });
});
