import { afterEach, describe, expect, test } from 'vitest';
import { cleanup } from 'ink-testing-library';
import { fakeTask } from '../helpers/fake-fleet.js';
import { mixedTasks } from '../helpers/ui-fixtures.js';
import { KEY, rowOf, selectedRow, setup, waitFor } from '../helpers/ui-render.js';

afterEach(cleanup);

describe('fleet view', () => {
  test("a split task's parts sit under it, marked └", async () => {
    const t = await setup({
      tasks: [
        fakeTask('T-7', { title: 'Migrate the tests', status: 'queued', parts: ['T-7.1', 'T-7.2'] }),
        fakeTask('T-7.1', { title: 'Migrate the button tests', status: 'running', phase: 'implement' }),
        fakeTask('T-7.2', { title: 'Migrate the form tests', status: 'queued' }),
        fakeTask('T-8', { title: 'Something else', status: 'queued' }),
      ],
    });
    const rows = t
      .lines()
      .filter((l) => / T-\d/.test(l))
      .map((l) => /^[ ›] (└ )?(T-[\d.]+) +(\S+ \S+) +(.*?)\s{2}/.exec(l));
    expect(rows.map((m) => [m?.[1] ?? '', m?.[2], m?.[3]])).toEqual([
      ['', 'T-7', '· queued'],
      ['└ ', 'T-7.1', '▶ running'],
      ['└ ', 'T-7.2', '· queued'],
      ['', 'T-8', '· queued'],
    ]);
  });

  test('one row per task in backlog order, each with a status symbol and word', async () => {
    const t = await setup({ tasks: mixedTasks() });
    const frame = t.frame();
    const ids = t.lines().flatMap((l) => /^[ ›] (T-\d+) /.exec(l)?.[1] ?? []);
    expect(ids).toEqual(['T-1', 'T-2', 'T-3', 'T-4', 'T-5', 'T-6', 'T-7']);
    expect(rowOf(frame, 'T-1')).toContain('▶ running');
    expect(rowOf(frame, 'T-1')).toContain('implement');
    expect(rowOf(frame, 'T-2')).toContain('· queued');
    expect(rowOf(frame, 'T-3')).toContain('✔ verified');
    expect(rowOf(frame, 'T-4')).toContain('✗ failed');
    expect(rowOf(frame, 'T-5')).toContain('⚠ conflict');
    expect(rowOf(frame, 'T-6')).toContain('✓ merged');
    expect(rowOf(frame, 'T-7')).toContain('⌫ discarded');
  });

  test('rows show title, attempt n/max, tokens and cost with meters, and the reason of a failure', async () => {
    const t = await setup({ tasks: mixedTasks(), columns: 140 });
    const verified = rowOf(t.frame(), 'T-3') ?? '';
    expect(verified).toContain('Remove the unused newCheckout flag');
    expect(verified).toContain('2/3');
    expect(verified).toContain('128k');
    expect(verified).toContain('$0.42');
    expect(verified).toMatch(/[▮▯]{5}/);
    expect(rowOf(t.frame(), 'T-4')).toContain('— token gate: 510k tokens used');
    expect(rowOf(t.frame(), 'T-5')).toContain('— merge conflict in src/config.ts');
  });

  test('fleet bar: state, repo and base, counts, usage against the fleet gates', async () => {
    const t = await setup({ tasks: mixedTasks(), repoRoot: '/src/shop', base: 'develop' });
    t.fleet.setTotals({ usage: { input: 1_200_000, output: 0, cacheWrite: 0, cacheRead: 0 }, costUsd: 3.4 });
    await waitFor(() => expect(t.frame()).toContain('tokens 1.2M/5M'));
    const bar = t.lines().slice(0, 2).join('\n');
    expect(bar).toContain('shop → develop');
    expect(bar).toContain('▶ running');
    expect(bar).toMatch(/▶ ?1 running/);
    expect(bar).toMatch(/· ?1 queued/);
    expect(bar).toMatch(/✔ ?1 verified/);
    expect(bar).toMatch(/✗ ?1 failed/);
    expect(bar).toContain('cost $3.40/$25.00');
    expect(bar).toContain('/8h');
    expect(t.frame()).not.toContain('sandbox');
  });

  test('a warning line when the shell sandbox is off', async () => {
    const t = await setup({ tasks: mixedTasks(), sandboxed: false });
    expect(t.lines()[1]).toContain('⚠ no sandbox');
  });

  test('j/k and the arrow keys move the selection; Home/g and End/G jump', async () => {
    const t = await setup({ tasks: mixedTasks() });
    expect(selectedRow(t.frame())).toContain('T-1');
    await t.press('j');
    expect(selectedRow(t.frame())).toContain('T-2');
    await t.press(KEY.down, KEY.down);
    expect(selectedRow(t.frame())).toContain('T-4');
    await t.press('k');
    expect(selectedRow(t.frame())).toContain('T-3');
    await t.press(KEY.up);
    expect(selectedRow(t.frame())).toContain('T-2');
    await t.press(KEY.up, KEY.up, KEY.up);
    expect(selectedRow(t.frame())).toContain('T-1');
    await t.press('G');
    expect(selectedRow(t.frame())).toContain('T-7');
    await t.press(KEY.down);
    expect(selectedRow(t.frame())).toContain('T-7');
    await t.press('g');
    expect(selectedRow(t.frame())).toContain('T-1');
    await t.press(KEY.end);
    expect(selectedRow(t.frame())).toContain('T-7');
    await t.press(KEY.home);
    expect(selectedRow(t.frame())).toContain('T-1');
  });

  test('the selection stays on its task when another task changes status', async () => {
    const t = await setup({ tasks: mixedTasks() });
    await t.press('j', 'j');
    expect(selectedRow(t.frame())).toContain('T-3');
    t.fleet.update('T-1', { status: 'verified', phase: null });
    t.fleet.update('T-2', { status: 'running', phase: 'explore', attempt: 1 });
    await waitFor(() => expect(rowOf(t.frame(), 'T-1')).toContain('✔ verified'));
    expect(rowOf(t.frame(), 'T-2')).toContain('▶ running');
    expect(selectedRow(t.frame())).toContain('T-3');
    // and when its own status changes
    t.fleet.update('T-3', { status: 'merged' });
    await waitFor(() => expect(selectedRow(t.frame())).toContain('✓ merged'));
    expect(selectedRow(t.frame())).toContain('T-3');
  });

  test('tasks added to the backlog are appended in order; the selection does not move', async () => {
    const t = await setup({ tasks: mixedTasks() });
    await t.press('j');
    t.fleet.add(fakeTask('T-9', { title: 'Ninth' }), fakeTask('T-8', { title: 'Eighth' }));
    await waitFor(() => expect(rowOf(t.frame(), 'T-8')).toBeDefined());
    const ids = t.lines().flatMap((l) => /^[ ›] (T-\d+) /.exec(l)?.[1] ?? []);
    expect(ids).toEqual(['T-1', 'T-2', 'T-3', 'T-4', 'T-5', 'T-6', 'T-7', 'T-9', 'T-8']);
    expect(selectedRow(t.frame())).toContain('T-2');
    // a task event for an unknown task appends it too
    t.fleet.update('T-10', { title: 'Tenth' });
    await waitFor(() => expect(rowOf(t.frame(), 'T-10')).toBeDefined());
    expect(selectedRow(t.frame())).toContain('T-2');
  });

  test('when the selected task leaves the backlog, the task now in its place is selected', async () => {
    const t = await setup({ tasks: mixedTasks() });
    await t.press('j');
    t.fleet.remove('T-2');
    await waitFor(() => expect(rowOf(t.frame(), 'T-2')).toBeUndefined());
    expect(selectedRow(t.frame())).toContain('T-3');
  });

  test('an empty backlog says how to add tasks', async () => {
    const t = await setup({ tasks: [] });
    expect(t.frame()).toContain('No tasks. Press e');
    await t.press('j', 'm');
    expect(t.frame()).toContain('No task selected');
  });
});

describe('per-task gates', () => {
  test("a task's own token limit drives its meter, not the front matter's", async () => {
    const usage = { input: 250_000, output: 0, cacheWrite: 0, cacheRead: 0 };
    const own = fakeTask('T-1', {
      status: 'verified',
      usage,
      gates: { attempts: 3, tokens: 250_000, timeMs: null, costUsd: null },
    });
    const shared = fakeTask('T-2', { status: 'verified', usage });
    const t = await setup({ tasks: [own, shared], columns: 140 });
    expect(rowOf(t.frame(), 'T-1')).toContain('▮▮▮▮▮'); // 250k of its own 250k
    expect(rowOf(t.frame(), 'T-2')).toMatch(/▮▮▮▯▯|▮▮▯▯▯/); // 250k of the front matter's 500k
  });
});
