import { afterEach, describe, expect, test } from 'vitest';
import { cleanup } from 'ink-testing-library';
import { fakeTasks } from '../helpers/fake-fleet.js';
import { width } from '../../src/ui/format.js';
import { KEY, resize, rowOf, selectedRow, setup, sleep, waitFor } from '../helpers/ui-render.js';

afterEach(cleanup);

const taskRows = (lines: string[]): string[] => lines.filter((l) => /^[ ›] T-\d+ /.test(l));

describe('a 1,000-task backlog', () => {
  test('renders only the visible window; the frame never exceeds the terminal', async () => {
    // How fast the first frame comes is a figure of `npm run bench` (bench/tui.ts), not a test's assertion.
    const t = await setup({ tasks: fakeTasks(1000), rows: 30, columns: 120 });
    expect(t.lines().length).toBeLessThanOrEqual(30);
    const rows = taskRows(t.lines());
    expect(rows.length).toBeGreaterThan(10);
    expect(rows.length).toBeLessThan(30);
    expect(rowOf(t.frame(), 'T-1000')).toBeUndefined();
    expect(t.frame()).toContain('title (1/1000)');
  });

  test('End / G select the last task, Home / g the first; PgDn pages', async () => {
    const t = await setup({ tasks: fakeTasks(1000), rows: 30 });
    await t.press(KEY.end);
    expect(selectedRow(t.frame())).toContain('T-1000');
    expect(t.frame()).toContain('title (1000/1000)');
    expect(t.lines().length).toBeLessThanOrEqual(30);
    await t.press(KEY.up);
    expect(selectedRow(t.frame())).toContain('T-999');
    await t.press('g');
    expect(selectedRow(t.frame())).toContain('T-1 ');
    await t.press(KEY.pageDown);
    const listRows = taskRows(t.lines()).length;
    expect(selectedRow(t.frame())).toContain(`T-${listRows} `);
    await t.press('G');
    expect(selectedRow(t.frame())).toContain('T-1000');
  });

  test('the window scrolls only as far as the selection needs', async () => {
    const t = await setup({ tasks: fakeTasks(1000), rows: 30 });
    // By id: the rest of a running task's row (its elapsed time) moves with the real clock.
    const topId = () => /^[› ] (\S+)/.exec(taskRows(t.lines())[0] ?? '')?.[1];
    const first = topId();
    const visible = taskRows(t.lines()).length;
    await t.press(...Array.from({ length: visible - 1 }, () => 'j'));
    expect(topId()).toBe(first);
    expect(first).toBe('T-1');
    await t.press('j');
    expect(taskRows(t.lines())[0]).toContain('T-2 ');
    await t.press('k', 'k');
    expect(taskRows(t.lines())[0]).toContain('T-2 ');
  });

  test('adapts to resizes: fewer rows, fewer columns', async () => {
    const t = await setup({ tasks: fakeTasks(1000), rows: 40, columns: 140 });
    await t.press(KEY.end);
    resize(t.stdout, 70, 12);
    await waitFor(() => expect(t.lines().length).toBeLessThanOrEqual(12));
    expect(selectedRow(t.frame())).toContain('T-1000');
    for (const line of t.lines()) expect(width(line)).toBeLessThanOrEqual(70);
    resize(t.stdout, 40, 6);
    await waitFor(() => expect(t.lines().length).toBeLessThanOrEqual(6));
    for (const line of t.lines()) expect(width(line)).toBeLessThanOrEqual(40);
    await t.press(KEY.enter);
    expect(t.lines().length).toBeLessThanOrEqual(6);
  });

  test('streaming agent text is applied in at most ~10 renders per second', async () => {
    const t = await setup({ tasks: fakeTasks(1000), rows: 30 });
    await t.press(KEY.enter, '2');
    await sleep(150);
    const before = t.stdout.frames.length;
    const start = performance.now();
    while (performance.now() - start < 500) {
      for (let i = 0; i < 20; i++) t.fleet.agentText('T-1', `token ${i} `);
      t.fleet.usage('T-1', { input: 10, output: 10, cacheWrite: 0, cacheRead: 0 }, 0.001);
      await sleep(5);
    }
    await sleep(150);
    const renders = t.stdout.frames.length - before;
    expect(renders).toBeGreaterThan(1);
    expect(renders).toBeLessThanOrEqual(9);
    expect(t.frame()).toContain('token 19');
  });
});
