import { describe, expect, test, vi } from 'vitest';
import { confirmPrompt, pauseAction, refusal } from '../../src/ui/command-guards.js';
import { detailLines } from '../../src/ui/detail-content.js';
import { FakeFleet, fakeAttempt, fakeTask, fakeTasks } from '../helpers/fake-fleet.js';
import { countByStatus, fleetReducer, initFleetState, liveElapsed } from '../../src/ui/fleet-reducer.js';
import { meter, sanitize, truncate, wrapLine } from '../../src/ui/format.js';
import { computeLayout, scrollStart, windowStart } from '../../src/ui/layout.js';
import { appendAgentText, appendPhaseOutput, appendToolCall, emptyLog } from '../../src/ui/output-log.js';
import { rowColumns } from '../../src/ui/row-columns.js';
import { createThrottledQueue } from '../../src/ui/use-throttled.js';
import { viewReducer, initialViewState } from '../../src/ui/view-state.js';

describe('layout', () => {
  test('the parts always add up to the terminal height', () => {
    for (let rows = 1; rows <= 80; rows++) {
      for (const barLines of [2, 3]) {
        for (const detailOpen of [false, true]) {
          for (const helpOpen of [false, true]) {
            for (const taskCount of [0, 3, 1000]) {
              const l = computeLayout({ rows, barLines, taskCount, detailOpen, helpOpen });
              const sum =
                l.barRows + l.headerRows + l.listRows + l.detailRows + l.helpRows + l.statusRows + l.footerRows;
              expect(sum, JSON.stringify({ rows, barLines, detailOpen, helpOpen, taskCount })).toBe(rows);
              for (const v of Object.values(l)) expect(v).toBeGreaterThanOrEqual(0);
            }
          }
        }
      }
    }
  });

  test('with the detail open on a tall terminal, both list and detail show', () => {
    const l = computeLayout({ rows: 40, barLines: 2, taskCount: 100, detailOpen: true, helpOpen: false });
    expect(l.listRows).toBeGreaterThanOrEqual(3);
    expect(l.detailBodyRows).toBeGreaterThan(l.listRows);
  });

  test('the list window moves only as far as the selection needs', () => {
    expect(windowStart(0, 5, 10, 100)).toBe(0);
    expect(windowStart(0, 10, 10, 100)).toBe(1);
    expect(windowStart(20, 15, 10, 100)).toBe(15);
    expect(windowStart(20, 25, 10, 100)).toBe(20);
    expect(windowStart(95, 99, 10, 100)).toBe(90);
    expect(windowStart(0, 0, 10, 3)).toBe(0);
    expect(scrollStart(100, 10, 0, true)).toBe(90);
    expect(scrollStart(100, 10, 5, true)).toBe(85);
    expect(scrollStart(100, 10, 500, false)).toBe(90);
  });

  test('narrow terminals drop the meters first, then other columns; the title keeps some room', () => {
    expect(rowColumns(140, 4).meters).toBe(true);
    const narrow = rowColumns(80, 4);
    expect(narrow.meters).toBe(false);
    const tiny = rowColumns(40, 4);
    expect(tiny.phase).toBe(0);
    expect(tiny.title).toBeGreaterThanOrEqual(8);
  });

  test('from 80 columns on, the title has room for 30 characters and its `…`, whatever the id width', () => {
    for (let columns = 80; columns <= 240; columns++) {
      for (const idWidth of [3, 4, 6, 12])
        expect(rowColumns(columns, idWidth).title, `${columns} columns, ids of ${idWidth}`).toBeGreaterThanOrEqual(32);
    }
  });

  test('a phase column that no row would fill collapses, and its room goes to the title', () => {
    const busy = rowColumns(140, 4, { phase: true });
    const idle = rowColumns(140, 4, { phase: false });
    expect(busy.phase).toBeGreaterThan(0);
    expect(idle.phase).toBe(0);
    expect(idle.title).toBe(busy.title + busy.phase);
  });
});

describe('output log', () => {
  test('continues the open line, starts a new one at each newline, adds section headers', () => {
    let log = emptyLog();
    log = appendAgentText(log, 'explorer', 1, 'Hello');
    log = appendAgentText(log, 'explorer', 1, ', world\nSecond');
    log = appendToolCall(log, 'explorer', 1, 'read', '{"path":\n "src/a.ts"}');
    log = appendAgentText(log, 'implementer', 1, 'Editing\n');
    expect(log.lines.map((l) => l.text)).toEqual([
      '── explorer · attempt 1 ──',
      'Hello, world',
      'Second',
      '⚙ read {"path": "src/a.ts"}',
      '── implementer · attempt 1 ──',
      'Editing',
    ]);
    expect(log.open).toBe(false);
  });

  test('is bounded: keeps the newest lines and counts what it dropped', () => {
    let log = emptyLog(50);
    for (let i = 0; i < 200; i++) log = appendAgentText(log, 'implementer', 1, `line ${i}\n`);
    expect(log.lines).toHaveLength(50);
    expect(log.lines.at(-1)?.text).toBe('line 199');
    expect(log.dropped).toBe(151);
    const shown = detailLines(
      'output',
      { task: fakeTask('T-1'), output: log, phaseOutput: undefined, diff: null, base: 'main', review: true },
      80,
    );
    expect(shown[0]?.text).toContain('151 earlier lines not kept');
  });

  test('escape codes and carriage returns never reach the frame; other controls are shown', () => {
    const log = appendPhaseOutput(emptyLog(), 'verify', '\u001B[31mFAIL\u001B[39m a.test.ts\r\n\tat line 3\u0007\n');
    expect(log.lines.map((l) => l.text)).toEqual(['── check output ──', 'FAIL a.test.ts', '  at line 3␇']);
  });
});

describe('fleet reducer', () => {
  const fleet = new FakeFleet({ tasks: fakeTasks(5) });

  test('task events replace only their own entry; unknown tasks are appended', () => {
    const s0 = initFleetState(fleet, 0);
    const changed = { ...s0.tasks.get('T-2')!.task, status: 'failed' as const };
    const s1 = fleetReducer(s0, { type: 'task', event: { task: changed, previousStatus: 'queued' }, at: 1 });
    expect(s1.tasks.get('T-1')).toBe(s0.tasks.get('T-1'));
    expect(s1.tasks.get('T-2')?.task.status).toBe('failed');
    expect(s1.order).toBe(s0.order);
    const s2 = fleetReducer(s1, { type: 'task', event: { task: fakeTask('T-77'), previousStatus: null }, at: 2 });
    expect(s2.order).toEqual(['T-1', 'T-2', 'T-3', 'T-4', 'T-5', 'T-77']);
    expect(countByStatus(s2.tasks).failed).toBe(countByStatus(s0.tasks).failed + 1);
  });

  test('a batch writes into one copy of each map and leaves the state before it as it was', () => {
    const s0 = initFleetState(fleet, 0);
    const t2 = s0.tasks.get('T-2')!;
    const task = (id: string, status: 'failed' | 'verified') => ({
      type: 'task' as const,
      event: { task: { ...s0.tasks.get(id)!.task, status }, previousStatus: null },
      at: 1,
    });
    const text = (id: string) => ({
      type: 'agent-text' as const,
      event: { id, role: 'implementer' as const, attempt: 1, text: 'x\n' },
    });
    const s1 = fleetReducer(s0, {
      type: 'batch',
      actions: [task('T-2', 'failed'), text('T-2'), task('T-3', 'verified'), text('T-3'), task('T-2', 'verified')],
    });
    expect(s1.tasks.get('T-2')!.task.status).toBe('verified');
    expect(s1.tasks.get('T-3')!.task.status).toBe('verified');
    expect([...s1.output.keys()]).toEqual(['T-2', 'T-3']);
    // what React still holds from before the batch is untouched
    expect(s0.tasks.get('T-2')).toBe(t2);
    expect(s0.output.size).toBe(0);
    expect(s1.tasks).not.toBe(s0.tasks);
    // the next batch copies again rather than writing into the map the last one handed out
    const s2 = fleetReducer(s1, { type: 'batch', actions: [task('T-4', 'failed')] });
    expect(s1.tasks.get('T-4')!.task.status).toBe(s0.tasks.get('T-4')!.task.status);
    expect(s2.tasks.get('T-4')!.task.status).toBe('failed');
  });

  test('backlog events append added tasks in the order given and drop removed ones', () => {
    const s0 = initFleetState(fleet, 0);
    const s1 = fleetReducer(s0, {
      type: 'backlog',
      added: [fakeTask('T-9'), fakeTask('T-8')],
      removed: ['T-2'],
      at: 1,
    });
    expect(s1.order).toEqual(['T-1', 'T-3', 'T-4', 'T-5', 'T-9', 'T-8']);
    expect(s1.tasks.has('T-2')).toBe(false);
  });

  test('usage events update the task and fleet totals', () => {
    const s0 = initFleetState(fleet, 0);
    const usage = { input: 5, output: 5, cacheWrite: 0, cacheRead: 0 };
    const totals = { usage, costUsd: 1.5, elapsedMs: 10, startedAt: null };
    const s1 = fleetReducer(s0, {
      type: 'usage',
      event: {
        id: 'T-1',
        role: 'explorer',
        model: 'm',
        delta: usage,
        costUsd: 0.5,
        task: usage,
        taskCostUsd: 0.5,
        fleet: totals,
      },
      at: 1,
    });
    expect(s1.tasks.get('T-1')?.task.costUsd).toBe(0.5);
    expect(s1.summary.totals.costUsd).toBe(1.5);
  });

  test('a running task’s elapsed time grows from when its snapshot arrived', () => {
    const entry = { task: fakeTask('T-1', { status: 'running', elapsedMs: 60_000 }), receivedAt: 1_000 };
    expect(liveElapsed(entry, 31_000)).toBe(90_000);
    expect(liveElapsed({ ...entry, task: { ...entry.task, status: 'failed' } }, 31_000)).toBe(60_000);
  });
});

describe('throttled queue', () => {
  test('delivers in order, at most once per interval', () => {
    vi.useFakeTimers();
    try {
      let clock = 0;
      const batches: number[][] = [];
      const q = createThrottledQueue<number>(
        (items) => batches.push(items),
        100,
        () => clock,
      );
      q.push(1);
      vi.advanceTimersByTime(0);
      expect(batches).toEqual([[1]]);
      for (let i = 2; i <= 50; i++) {
        clock += 5;
        q.push(i);
        vi.advanceTimersByTime(5);
      }
      // 245 ms of pushes: the first immediately, then at most one batch per 100 ms
      expect(batches.length).toBeLessThanOrEqual(4);
      clock += 200;
      vi.advanceTimersByTime(200);
      expect(batches.flat()).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
      q.dispose();
      q.push(99);
      vi.advanceTimersByTime(500);
      expect(batches.flat()).not.toContain(99);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('command rules', () => {
  test('merge and discard only verified tasks; retry failed, conflict and discarded ones', () => {
    expect(refusal('merge', fakeTask('T-2', { status: 'running' }))).toBe(
      'T-2 is running: only verified tasks can be merged',
    );
    expect(refusal('merge', fakeTask('T-2', { status: 'verified' }))).toBeNull();
    expect(refusal('discard', fakeTask('T-2', { status: 'merged' }))).toBe(
      'T-2 is merged: only verified, failed, conflict or awaiting-approval tasks can be discarded',
    );
    expect(refusal('discard', fakeTask('T-2', { status: 'conflict' }))).toBeNull();
    for (const status of ['failed', 'conflict', 'discarded'] as const)
      expect(refusal('retry', fakeTask('T-1', { status }))).toBeNull();
    expect(refusal('retry', undefined)).toBe('No task selected');
    expect(confirmPrompt('merge', fakeTask('T-3', { branch: 'loop/T-3' }), 'main')).toBe(
      'Merge loop/T-3 into main? y/n',
    );
    expect(pauseAction('running')).toEqual({ action: 'pause' });
    expect(pauseAction('paused')).toEqual({ action: 'resume' });
  });

  test('the scroll position belongs to one task and tab', () => {
    let v = viewReducer(initialViewState, { type: 'tab', tab: 'diff' });
    v = viewReducer(v, { type: 'scroll', key: 'T-1\u0000diff', delta: 5, max: 3 });
    expect(v.scroll).toBe(3);
    v = viewReducer(v, { type: 'scroll', key: 'T-2\u0000diff', delta: 1, max: 10 });
    expect(v.scroll).toBe(1);
    v = viewReducer(v, { type: 'tab', tab: 'output' });
    v = viewReducer(v, { type: 'scroll', key: 'T-2\u0000output', delta: -4, max: 10 });
    expect(v.scroll).toBe(4); // back from the end
  });
});

describe('formatting', () => {
  test('meters, truncation, wrapping, sanitising', () => {
    expect(meter(0)).toBe('▯▯▯▯▯');
    expect(meter(0.02)).toBe('▮▯▯▯▯');
    expect(meter(0.5)).toBe('▮▮▮▯▯');
    expect(meter(3)).toBe('▮▮▮▮▮');
    expect(truncate('abcdef', 4)).toBe('abc…');
    expect(truncate('abc', 4)).toBe('abc');
    expect(wrapLine('abcdefgh', 3)).toEqual(['abc', 'def', 'gh']);
    // A hyperlink's target is shown, not followed: the person sees where it pointed.
    expect(sanitize('\u001B]8;;http://x\u0007link\u001B]8;;\u0007')).toBe('␛]8;;http://x␇link␛]8;;␇');
  });

  test('history lists each attempt with outcome, tokens, cost and reason', () => {
    const task = fakeTask('T-1', {
      attempts: [
        fakeAttempt(1, {
          outcome: 'gate',
          reason: 'token gate',
          costUsd: 1.25,
          usageByRole: { explorer: { input: 1000, output: 500, cacheWrite: 0, cacheRead: 500 } },
        }),
      ],
    });
    const lines = detailLines(
      'history',
      { task, output: undefined, phaseOutput: undefined, diff: null, base: 'main', review: true },
      100,
    ).map((l) => l.text);
    expect(lines[1]).toMatch(/^ {2}1 {2}gate +2k +\$1\.25 {2}token gate$/);
  });
});
