import { describe, expect, it } from 'vitest';
import { parseBacklog } from '../../../src/core/backlog/parse.js';
import { renderReport } from '../../../src/core/report/morning-report.js';
import { InputErrors } from '../../../src/domain/errors.js';
import { reviewLoad, waitsForPerson } from '../../../src/core/task/review-load.js';
import { fakeEngine, ManualClock, type FakeEngine } from '../../helpers/fake-engine.js';
import { backlog as backlogText } from '../../helpers/fleet-harness.js';
import type { FakeScript } from '../../helpers/fake-model.js';

/** `check: the-check` passes when the worktree has done.txt; each implementer writes it. */
const script: FakeScript = ({ role, task }) =>
  role === 'explorer'
    ? { text: `PLAN ${task}: write done.txt` }
    : role === 'implementer'
      ? { edits: { 'done.txt': task } }
      : {};

function engine(front: string, items: string, clock?: ManualClock): Promise<FakeEngine> {
  let e!: FakeEngine;
  return fakeEngine(`check: the-check\n${front}`, items, {
    script,
    ...(clock === undefined ? {} : { clock }),
    notify: true,
    run: (_c, o) => ({ exitCode: e.git.files(o.cwd).has('done.txt') ? 0 : 1 }),
  }).then((x) => (e = x));
}

const five = ['- [ ] T-1 One', '- [ ] T-2 Two', '- [ ] T-3 Three', '- [ ] T-4 Four', '- [ ] T-5 Five'].join('\n');
const statuses = (e: FakeEngine) => e.fleet.tasks().map((t) => `${t.id} ${t.status}`);
const started = (e: FakeEngine) => [...new Set(e.model.calls.map((c) => c.task))];
const logs = (e: FakeEngine) =>
  e.seen.filter((s) => s.name === 'log').map((s) => (s.payload as { message: string }).message);

describe('review_capacity', () => {
  it('lets two verified branches wait and starts the third task only when a person merges one', async () => {
    const clock = new ManualClock();
    const e = await engine('concurrency: 3\nreview_capacity: 2', five, clock);
    e.fleet.start();
    await e.fleet.whenIdle();
    // Concurrency 3 would have started three: the capacity let two run, and nothing starts while they wait.
    expect(statuses(e)).toEqual(['T-1 verified', 'T-2 verified', 'T-3 queued', 'T-4 queued', 'T-5 queued']);
    expect(started(e)).toEqual(['T-1', 'T-2']);
    expect(e.fleet.summary().review).toMatchObject({ running: 0, waiting: 2, capacity: 2, held: true, peak: 2 });
    expect(logs(e)).toContain(
      'waiting for review: 2 of 2: no new task starts until a person merges, discards, approves or reviews one',
    );
    expect(e.notified.filter((n) => n.event === 'review')).toEqual([
      { event: 'review', text: 'loopfleet: waiting for review: 2 of 2', running: 2, waiting: 0, capacity: 2 },
    ]);
    // Idle means nothing more can start: no timer will start T-3.
    await e.fleet.whenIdle();
    expect(started(e)).toEqual(['T-1', 'T-2']);

    clock.advance(60_000);
    await e.fleet.merge('T-1');
    await e.fleet.whenIdle();
    expect(statuses(e)).toEqual(['T-1 merged', 'T-2 verified', 'T-3 verified', 'T-4 queued', 'T-5 queued']);
    expect(started(e)).toEqual(['T-1', 'T-2', 'T-3']);

    // A discard frees a place as a merge does.
    clock.advance(30_000);
    await e.fleet.discard('T-2');
    await e.fleet.whenIdle();
    expect(started(e)).toEqual(['T-1', 'T-2', 'T-3', 'T-4']);
    expect(e.fleet.task('T-5')!.status).toBe('queued');
    expect(logs(e).filter((l) => l.startsWith('review capacity'))).toEqual([]);
    // The last queued task starts: the capacity holds nothing back any more, and says so once.
    clock.advance(10_000);
    await e.fleet.merge('T-3');
    await e.fleet.whenIdle();
    clock.advance(5_000);
    expect(statuses(e)).toEqual(['T-1 merged', 'T-2 discarded', 'T-3 merged', 'T-4 verified', 'T-5 verified']);
    expect(logs(e).filter((l) => l.startsWith('review capacity'))).toEqual([
      'review capacity holds nothing back now (2 of 2)',
    ]);
    await e.fleet.stop();
    // Held from the first pass (T-3 could have started alongside T-1 and T-2) until T-5 started.
    expect(e.fleet.summary().review).toEqual({
      running: 0,
      waiting: 2,
      capacity: 2,
      held: false,
      peak: 2,
      heldMs: 100_000,
    });
    // The morning report gives the review queue over the run from the same summary.
    const report = renderReport({
      repoRoot: '/repo',
      base: 'main',
      startedAt: '2026-01-01T00:00:00.000Z',
      endedAt: '2026-01-01T08:00:00.000Z',
      summary: e.fleet.summary(),
      tasks: e.fleet.tasks(),
      ran: e.fleet.ranThisRun,
      config: e.fleet.config,
      sandboxed: true,
      exitCode: 0,
    });
    expect(report).toContain(
      '**Review queue:** capacity 2; at most 2 tasks running or waiting for a person at once; it held new tasks back for 1m 40s in all; 2 waiting for a person at the end.',
    );
  });

  it('does not count tasks that land by themselves: autonomy auto runs on at the cap', async () => {
    const e = await engine(
      'review_capacity: 1',
      [
        '- [ ] T-1 Reviewed',
        '- [ ] T-2 Auto\n  autonomy: auto',
        '- [ ] T-3 Reviewed too',
        '- [ ] T-4 Auto too\n  autonomy: auto',
      ].join('\n'),
    );
    e.fleet.start();
    await e.fleet.whenIdle();
    expect(statuses(e)).toEqual(['T-1 verified', 'T-2 merged', 'T-3 queued', 'T-4 merged']);
    expect(e.fleet.summary().review).toMatchObject({ running: 0, waiting: 1, capacity: 1, held: true });
    await e.fleet.stop();
  });

  it('counts a plan awaiting approval, and an approval lets the next plan start', async () => {
    const e = await engine('review_capacity: 1\nautonomy: plan', '- [ ] T-1 One\n- [ ] T-2 Two');
    e.fleet.start();
    await e.fleet.whenIdle();
    expect(statuses(e)).toEqual(['T-1 awaiting-approval', 'T-2 queued']);
    expect(e.fleet.summary().review).toMatchObject({ waiting: 1, capacity: 1, held: true });
    e.fleet.approve('T-1');
    await e.fleet.whenIdle();
    // T-1 ran (running counts too) and is verified, waiting to be merged: T-2 still waits.
    expect(statuses(e)).toEqual(['T-1 verified', 'T-2 queued']);
    await e.fleet.merge('T-1');
    await e.fleet.whenIdle();
    expect(statuses(e)).toEqual(['T-1 merged', 'T-2 awaiting-approval']);
    await e.fleet.stop();
  });

  it('without the setting there is no cap and no review figures', async () => {
    const e = await engine('concurrency: 5', five);
    e.fleet.start();
    await e.fleet.whenIdle();
    expect(statuses(e).every((s) => s.endsWith('verified'))).toBe(true);
    expect(e.fleet.summary().review).toBeUndefined();
    await e.fleet.stop();
  });
});

describe('review_capacity in BACKLOG.md', () => {
  const parse = (front: string) => parseBacklog(backlogText(front, '- [ ] T-1 One'), '/r/BACKLOG.md');

  it('reads a whole number, and none for no cap', () => {
    expect(parse('review_capacity: 4').backlog.config.reviewCapacity).toBe(4);
    expect(parse('review_capacity: none').backlog.config.reviewCapacity).toBeNull();
    expect(parse('check: x').backlog.config.reviewCapacity).toBeNull();
  });

  it.each([
    ['review_capacity: 0', "BACKLOG.md:3: review_capacity must be a whole number of at least 1, got '0'"],
    ['review_capacity: 2.5', "BACKLOG.md:3: review_capacity must be a whole number of at least 1, got '2.5'"],
    ['review_capacity: lots', "BACKLOG.md:3: review_capacity must be a whole number of at least 1, got 'lots'"],
    ['review_capacity: [2]', 'BACKLOG.md:3: review_capacity must be a single value, not a list'],
    ['review_capcity: 2', "BACKLOG.md:3: unknown key 'review_capcity' (did you mean 'review_capacity'?)"],
  ])('refuses %s at its line', (line, message) => {
    const read = () => parse(`check: x\n${line}`);
    expect(read).toThrow(InputErrors);
    expect(read).toThrow(message);
  });
});

describe('what counts against review_capacity', () => {
  const config = { autonomy: 'review' as const, land: 'merge' as const, reviewCapacity: 3 };
  const pr = (review: 'none' | 'approved' | 'changes-requested', state: 'open' | 'merged' = 'open') =>
    ({ number: 1, url: 'u', state, draft: false, ci: 'passing', review }) as never;

  it('counts what waits for a person: a verified branch or a conflict, an unopened or unapproved PR, a plan', () => {
    const merge = {};
    const byPr = { land: 'pr' as const };
    expect(waitsForPerson({ status: 'verified' }, merge, config)).toBe(true);
    expect(waitsForPerson({ status: 'conflict' }, merge, config)).toBe(true);
    expect(waitsForPerson({ status: 'awaiting-approval' }, merge, config)).toBe(true);
    expect(waitsForPerson({ status: 'verified' }, byPr, config)).toBe(true);
    expect(waitsForPerson({ status: 'verified', pr: pr('none') }, byPr, config)).toBe(true);
    expect(waitsForPerson({ status: 'verified', pr: pr('changes-requested') }, byPr, config)).toBe(true);
    expect(waitsForPerson({ status: 'verified', pr: pr('approved') }, byPr, config)).toBe(false);
    for (const status of ['queued', 'running', 'failed', 'merged', 'discarded'] as const)
      expect(waitsForPerson({ status }, merge, config)).toBe(false);
  });

  it('leaves out tasks that land by themselves, and everything under --auto-merge', () => {
    const tasks: Record<string, { status: 'running' | 'verified' }> = {
      'T-1': { status: 'running' },
      'T-2': { status: 'verified' },
      'T-3': { status: 'verified' },
    };
    const specs: Record<string, { autonomy?: 'auto' }> = { 'T-1': {}, 'T-2': {}, 'T-3': { autonomy: 'auto' } };
    const load = (autoMerge: boolean) =>
      reviewLoad(
        ['T-1', 'T-2', 'T-3'],
        (id) => tasks[id],
        (id) => specs[id],
        config,
        autoMerge,
      );
    expect(load(false)).toEqual({ running: 1, waiting: 1, capacity: 3 });
    expect(load(true)).toEqual({ running: 0, waiting: 0, capacity: 3 });
    expect(
      reviewLoad(
        [],
        () => undefined,
        () => undefined,
        { ...config, reviewCapacity: null },
        false,
      ),
    ).toBeNull();
  });
});
