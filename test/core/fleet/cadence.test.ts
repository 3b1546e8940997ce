import { describe, expect, it } from 'vitest';
import { ManualClock, fakeEngine, runToIdle } from '../../helpers/fake-engine.js';
import { parseBacklog } from '../../../src/core/backlog/parse.js';
import { InputErrors } from '../../../src/domain/errors.js';
import { backlog } from '../../helpers/fleet-harness.js';

const edits = ({ role }: { role: string }) =>
  role === 'implementer' ? { edits: { 'a.txt': `a ${Math.random()}` } } : {};

function parseErrors(front: string, items: string): string[] {
  try {
    parseBacklog(backlog(front, items), 'BACKLOG.md');
  } catch (error) {
    if (error instanceof InputErrors) return error.errors.map((e) => e.message);
    throw error;
  }
  return [];
}

describe('recurring tasks (every:)', () => {
  it('reads every: in days, hours, minutes and seconds, and refuses zero or nonsense', () => {
    const tasks = parseBacklog(
      backlog('check: "true"', '- [ ] T-1 A\n  every: 1d\n- [ ] T-2 B\n  every: 6h\n- [ ] T-3 C\n  every: 2s'),
      'BACKLOG.md',
    ).backlog.tasks;
    expect(tasks.map((t) => t.everyMs)).toEqual([86_400_000, 21_600_000, 2000]);
    expect(parseErrors('check: "true"', '- [ ] T-1 A\n  every: 0s')).toEqual([
      "BACKLOG.md:8: every: interval '0s' must be greater than zero",
    ]);
    expect(parseErrors('check: "true"', '- [ ] T-1 A\n  every: weekly')[0]).toMatch(
      /^BACKLOG.md:8: every: malformed interval 'weekly'/,
    );
  });

  it('an empty diff ends a recurring run as a success and queues it for its next time; a plain task still fails', async () => {
    const clock = new ManualClock();
    const e = await fakeEngine(
      'check: "true"\nconcurrency: 1\ngates:\n  attempts: 1',
      '- [ ] T-1 Sweep\n  every: 30m\n- [ ] T-2 Once',
      { clock },
    );
    await runToIdle(e);
    const t1 = e.fleet.task('T-1')!;
    expect(t1.status).toBe('queued');
    expect(t1.nextRunAt).toBe('2026-01-01T00:30:00.000Z');
    expect(t1.runs).toEqual([expect.objectContaining({ outcome: 'unchanged', endedAt: '2026-01-01T00:00:00.000Z' })]);
    expect(t1.runs![0]!.tokens).toBeGreaterThan(0);
    expect(t1.attempts.at(-1)!.outcome).toBe('unchanged');
    expect(e.fleet.task('T-2')).toMatchObject({ status: 'failed', gate: 'attempts' });
    expect(e.fleet.task('T-2')!.attempts[0]).toMatchObject({
      outcome: 'check-failed',
      reason: 'the implementer changed nothing',
    });
  });

  it('waits for its time, then runs again with a fresh budget, each run with its own cost', async () => {
    const clock = new ManualClock();
    const e = await fakeEngine(
      'check: "true"\nconcurrency: 1\ngates:\n  attempts: 1',
      '- [ ] T-1 Sweep\n  every: 30m',
      { clock },
    );
    e.fleet.start();
    await e.fleet.whenIdle();
    expect(e.fleet.task('T-1')!.runs).toHaveLength(1);
    e.fleet.resume(); // the scheduler looks again: not due yet
    await e.fleet.whenIdle();
    expect(e.fleet.task('T-1')).toMatchObject({ status: 'queued', attempt: 1 });
    clock.advance(30 * 60_000);
    e.fleet.resume();
    await new Promise((r) => setTimeout(r, 0));
    await e.fleet.whenIdle();
    await e.fleet.stop();
    const t = e.fleet.task('T-1')!;
    expect(t.attempt).toBe(2); // one attempt allowed per run, and the second run got it
    expect(t.runs).toHaveLength(2);
    expect(t.nextRunAt).toBe('2026-01-01T01:00:00.000Z');
    expect(t.runs![0]!.costUsd + t.runs![1]!.costUsd).toBeCloseTo(t.costUsd, 9);
    expect(t.runs![1]!.tokens).toBe(t.runs![0]!.tokens);
  });

  it('a merged recurring task is not ticked [x] and is queued again', async () => {
    const clock = new ManualClock();
    const e = await fakeEngine(
      'check: "true"\nreview: false\nconcurrency: 1',
      '- [ ] T-1 Bump\n  every: 1d\n- [ ] T-2 Plain',
      { clock, autoMerge: true, script: edits },
    );
    await runToIdle(e);
    await new Promise((r) => setTimeout(r, 0));
    expect(e.ticked).toEqual(['T-2']);
    const t = e.fleet.task('T-1')!;
    expect(t).toMatchObject({ status: 'queued', nextRunAt: '2026-01-02T00:00:00.000Z' });
    expect(t.runs!.map((r) => r.outcome)).toEqual(['merged']);
    expect(e.fleet.task('T-2')!.status).toBe('merged');
  });
});

describe('a recurring item ticked [x] by hand', () => {
  it('stops recurring: it stays merged', async () => {
    const clock = new ManualClock();
    const e = await fakeEngine('check: "true"\nconcurrency: 1', '- [ ] T-1 Sweep\n  every: 30m', { clock });
    await runToIdle(e);
    expect(e.fleet.task('T-1')!.status).toBe('queued');
    const ticked = parseBacklog(
      backlog('check: "true"\nconcurrency: 1', '- [x] T-1 Sweep\n  every: 30m'),
      `${e.backlog.path}`,
    ).backlog;
    e.fleet.applyBacklog(ticked);
    await new Promise((r) => setTimeout(r, 0));
    expect(e.fleet.task('T-1')).toMatchObject({ status: 'merged' });
    expect(e.fleet.task('T-1')!.runs).toHaveLength(1);
  });
});

describe('discover: in the front matter', () => {
  it('reads every and only, only defaulting to every finder', () => {
    const read = (front: string) => parseBacklog(backlog(front, '- [ ] T-1 A'), 'BACKLOG.md').backlog.config.discover;
    expect(read('check: "true"')).toBeNull();
    expect(read('discover: { every: 1d, only: [todo, tests] }')).toEqual({
      everyMs: 86_400_000,
      only: ['todo', 'tests'],
    });
    expect(read('discover:\n  every: 6h')).toEqual({
      everyMs: 21_600_000,
      only: ['todo', 'tests', 'lint', 'deps', 'issues'],
    });
  });

  it('refuses a bad interval, an unknown finder or key, and a missing every, each with its line', () => {
    expect(parseErrors('discover: { every: often }', '- [ ] T-1 A')[0]).toMatch(
      /^BACKLOG.md:2: discover.every: malformed interval 'often'/,
    );
    expect(parseErrors('discover: { every: 1d, only: [todos] }', '- [ ] T-1 A')).toEqual([
      "BACKLOG.md:2: discover.only: unknown name 'todos' (did you mean 'todo'?); known: todo, tests, lint, deps, issues",
    ]);
    expect(parseErrors('discover: { every: 1d, when: night }', '- [ ] T-1 A')[0]).toMatch(
      /^BACKLOG.md:2: discover: unknown key 'when'/,
    );
    expect(parseErrors('discover: { only: [todo] }', '- [ ] T-1 A')).toEqual([
      'BACKLOG.md:2: discover needs every:, e.g. discover: { every: 1d }',
    ]);
  });
});

describe('notify_on', () => {
  it('refuses an unknown kind with its line', () => {
    expect(parseErrors('notify: cat\nnotify_on: [verified, finished]', '- [ ] T-1 A')).toEqual([
      "BACKLOG.md:3: notify_on: unknown name 'finished'; known: verified, failed, conflict, awaiting-approval, paused, gate, idle, summary, review",
    ]);
  });

  it('sends only the kinds listed', async () => {
    const e = await fakeEngine(
      'check: "true"\nconcurrency: 1\nnotify_on: [verified, gate]\ngates:\n  attempts: 1',
      '- [ ] T-1 One\n- [ ] T-2 Two',
      {
        notify: true,
        script: ({ role, task }) => (role === 'implementer' && task.includes('T-1') ? { edits: { 'a.txt': 'a' } } : {}),
      },
    );
    await runToIdle(e);
    expect(e.fleet.task('T-2')!.status).toBe('failed');
    expect(e.notified.map((n) => `${n.event}:${String(n.status ?? n.gate)}`)).toEqual([
      'status:verified',
      'gate:attempts',
    ]);
  });

  it('without notify_on every change goes, gates included', async () => {
    const e = await fakeEngine('check: "true"\nconcurrency: 1\ngates:\n  attempts: 1', '- [ ] T-1 One', {
      notify: true,
    });
    await runToIdle(e);
    expect(e.notified.map((n) => n.status ?? n.event)).toEqual(['running', 'gate', 'failed', 'idle']);
  });

  it('a hold for a rate limit sends paused with its reason and time', async () => {
    const e = await fakeEngine('check: "true"\nnotify_on: [paused]', '- [ ] T-1 One', { notify: true });
    e.fleet.hold('rate limited by the model server', Date.parse('2030-01-01T00:00:00Z'));
    await e.fleet.stop();
    expect(e.notified).toEqual([
      { event: 'paused', reason: 'rate limited by the model server', until: '2030-01-01T00:00:00.000Z' },
    ]);
  });
});
