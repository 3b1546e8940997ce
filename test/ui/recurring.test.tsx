import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test, vi } from 'vitest';
import { cleanup } from 'ink-testing-library';
import { detailLines, type DetailSources } from '../../src/ui/detail-content.js';
import { fakeRecurringTask, fakeRun, fakeTask } from '../helpers/fake-fleet.js';
import { nextRunText } from '../../src/ui/format.js';
import type { TaskState } from '../../src/domain/types.js';
import { mixedTasks } from '../helpers/ui-fixtures.js';
import { KEY, rowOf, setup, waitFor } from '../helpers/ui-render.js';

// Times print in local time: a fixed zone and a fixed clock (only Date is faked; timers stay real).
// 2026-12-01T10:00Z is Tuesday 1 December, 11:00 in Berlin.
const NOW = Date.parse('2026-12-01T10:00:00.000Z');
const MIN = 60_000;
let zone: string | undefined;

beforeAll(() => {
  zone = process.env.TZ;
  process.env.TZ = 'Europe/Berlin';
});
afterAll(() => {
  if (zone === undefined) delete process.env.TZ;
  else process.env.TZ = zone;
});
beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(NOW);
});
afterEach(() => {
  cleanup();
  vi.useRealTimers();
});

const iso = (ms: number): string => new Date(ms).toISOString();

const sources = (task: TaskState): DetailSources => ({
  task,
  output: undefined,
  phaseOutput: undefined,
  diff: null,
  base: 'main',
  review: true,
});

describe('when a recurring task runs next', () => {
  test('in minutes within the hour, at a clock time today, with the weekday this week, with the date beyond', () => {
    expect(nextRunText(NOW + 5 * MIN, NOW)).toBe('in 5m');
    expect(nextRunText(NOW + 45_000, NOW)).toBe('in 45s');
    expect(nextRunText(Date.parse('2026-12-01T13:05:00Z'), NOW)).toBe('14:05');
    expect(nextRunText(Date.parse('2026-12-02T08:00:00Z'), NOW)).toBe('Wed 09:00');
    expect(nextRunText(Date.parse('2026-12-10T08:00:00Z'), NOW)).toBe('Dec 10 09:00');
    expect(nextRunText(NOW - 1000, NOW)).toBe('due');
  });

  test('the row of a waiting recurring task says when it runs next; other rows show nothing new', async () => {
    const tasks = [
      fakeRecurringTask('R-1', '2026-12-01T09:05:00Z', 3, 240 * MIN),
      fakeRecurringTask('R-2', '2026-12-01T09:55:00Z', 2, 10 * MIN),
      fakeRecurringTask('R-3', '2026-12-01T08:00:00Z', 1, 24 * 60 * MIN),
      ...mixedTasks(),
    ];
    const t = await setup({ tasks, columns: 140 });
    const frame = t.frame();
    expect(rowOf(frame, 'R-1')).toMatch(/· queued +Recurring R-1 +↻ next 14:05/);
    expect(rowOf(frame, 'R-2')).toMatch(/Recurring R-2 +↻ in 5m/);
    expect(rowOf(frame, 'R-3')).toMatch(/Recurring R-3 +↻ next Wed 09:00/);
    for (const id of ['T-1', 'T-2', 'T-3', 'T-4', 'T-5', 'T-6', 'T-7']) expect(rowOf(frame, id)).not.toContain('↻');
  });

  test('the countdown moves with the clock even while the fleet is idle', async () => {
    const t = await setup({ tasks: [fakeRecurringTask('R-1', '2026-12-01T09:55:00Z', 2, 10 * MIN)], state: 'idle' });
    expect(rowOf(t.frame(), 'R-1')).toContain('↻ in 5m');
    vi.setSystemTime(NOW + 2 * MIN);
    await waitFor(() => expect(rowOf(t.frame(), 'R-1')).toContain('↻ in 3m'), 3000);
  });

  test('a run that ends updates the row and the history at once', async () => {
    const first = fakeRun('2026-12-01T09:00:00Z', 4, { outcome: 'merged', costUsd: 0.31, tokens: 42_000 });
    const t = await setup({
      tasks: [
        fakeTask('R-1', {
          title: 'Bump deps',
          status: 'running',
          phase: 'implement',
          attempt: 1,
          runs: [first],
          nextRunAt: null,
        }),
        ...mixedTasks(),
      ],
      rows: 40,
    });
    expect(rowOf(t.frame(), 'R-1')).not.toContain('↻');
    await t.press(KEY.enter, '6');
    expect(t.frame()).toContain('↻ Runs · 1 run');
    expect(t.frame()).toMatch(/Dec 1 10:00 +4m 00s +✓ merged +42k +\$0\.31/);
    const second = fakeRun('2026-12-01T09:50:00Z', 2, { outcome: 'unchanged', costUsd: 0.04, tokens: 9_000 });
    t.fleet.update('R-1', {
      status: 'queued',
      phase: null,
      runs: [first, second],
      nextRunAt: iso(Date.parse(second.endedAt) + 120 * MIN),
    });
    await waitFor(() => expect(rowOf(t.frame(), 'R-1')).toContain('↻ next 12:52'));
    const frame = t.frame();
    expect(frame).toContain('↻ Runs · 2 runs · next Dec 1 12:52, 2h after the last one ended');
    expect(frame).toMatch(/Dec 1 10:50 +2m 00s += unchanged +9k +\$0\.04/);
    // newest first
    expect(frame.indexOf('Dec 1 10:50')).toBeLessThan(frame.indexOf('Dec 1 10:00'));
  });

  test('a task that is not recurring has no runs section in its history', async () => {
    const t = await setup({ tasks: mixedTasks(), rows: 40 });
    await t.press('j', 'j', KEY.enter, '6');
    expect(t.frame()).toContain('check-failed');
    expect(t.frame()).not.toContain('Runs');
    expect(t.frame()).not.toContain('↻');
  });
});

describe('the run history', () => {
  test('newest first, bounded to the last 20, the rest counted, totals and the next run on top, then the attempts', () => {
    const task = fakeRecurringTask('R-1', '2026-12-01T09:50:00Z', 25, 30 * MIN);
    const lines = detailLines('history', sources(task), 100).map((l) => l.text);
    expect(lines[0]).toBe('↻ Runs · every 30m · 25 runs · next Dec 1 11:20');
    expect(lines[1]).toMatch(/^\$4\.90 and 750k tokens in all$/);
    expect(lines[2]).toMatch(/^started +took +outcome +tokens +cost$/);
    // the last run: 2 minutes, ending 10:50 local
    expect(lines[3]).toMatch(/^Dec 1 10:48 +2m 00s += unchanged +50k +\$0\.10$/);
    // the one before: 5 minutes, ending 10:20 local, discarded
    expect(lines[4]).toMatch(/^Dec 1 10:15 +5m 00s +⌫ discarded +40k +\$0\.30$/);
    const runRows = lines.filter((l) => /^(Nov|Dec) \d+ \d\d:\d\d /.test(l));
    expect(runRows).toHaveLength(20);
    expect(lines).toContain('… 5 earlier runs');
    // the attempts table follows
    expect(lines.indexOf('… 5 earlier runs')).toBeLessThan(
      lines.findIndex((l) => l.includes('No attempts yet.') || (l.includes('outcome') && l.includes('reason'))),
    );
  });

  test('in a narrow pane the lines wrap: nothing of the next run or of a run is cut off', () => {
    const task = fakeRecurringTask('R-1', '2026-12-01T09:50:00Z', 2, 30 * MIN);
    const lines = detailLines('history', sources(task), 30).map((l) => l.text);
    expect(lines.every((l) => [...l].length <= 30)).toBe(true);
    const text = lines.join('');
    expect(text).toContain('↻ Runs · every 30m · 2 runs · next Dec 1 11:20');
    expect(text).toMatch(/Dec 1 10:47 +3m 00s +✓ merged +20k +\$0\.20/);
  });

  test('a recurring task that has not run yet, or is running, says so without a next time', () => {
    const never = detailLines('history', sources(fakeTask('R-1', { runs: [], nextRunAt: null })), 80).map(
      (l) => l.text,
    );
    expect(never[0]).toBe('↻ Runs · none yet');
    const running = detailLines(
      'history',
      sources(fakeTask('R-1', { status: 'running', runs: [fakeRun('2026-12-01T09:00:00Z')], nextRunAt: null })),
      80,
    ).map((l) => l.text);
    expect(running[0]).toBe('↻ Runs · 1 run · running now');
  });

  test('the cadence is named from before the first run; a state without it says the gap the engine scheduled', () => {
    const fresh = detailLines('history', sources(fakeTask('R-1', { everyMs: 6 * 60 * MIN })), 80).map((l) => l.text);
    expect(fresh[0]).toBe('↻ Runs · every 6h · none yet');
    const older = fakeRecurringTask('R-1', '2026-12-01T09:50:00Z', 2, 30 * MIN, { everyMs: undefined });
    expect(detailLines('history', sources(older), 100)[0]!.text).toBe(
      '↻ Runs · 2 runs · next Dec 1 11:20, 30m after the last one ended',
    );
  });

  test('a task that is not recurring shows its attempts only', () => {
    const lines = detailLines('history', sources(fakeTask('T-1')), 80).map((l) => l.text);
    expect(lines).toEqual(['No attempts yet.']);
  });
});
