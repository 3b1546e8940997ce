import { afterEach, describe, expect, test } from 'vitest';
import { cleanup } from 'ink-testing-library';
import { mixedTasks } from '../helpers/ui-fixtures.js';
import { KEY, rowOf, setup, waitFor } from '../helpers/ui-render.js';

afterEach(cleanup);

/** Select a task by pressing j from the top: T-n is n-1 presses down. */
async function select(t: Awaited<ReturnType<typeof setup>>, id: string): Promise<void> {
  await t.press('g', ...Array.from({ length: Number(id.slice(2)) - 1 }, () => 'j'));
  expect(t.lines().find((l) => l.startsWith('› '))).toContain(id);
}

describe('merge and discard', () => {
  test('m on a verified task asks, naming branch and base; y merges', async () => {
    const t = await setup({ tasks: mixedTasks(), base: 'main' });
    await select(t, 'T-3');
    await t.press('m');
    expect(t.frame()).toContain('Merge loop/T-3 into main? y/n');
    expect(t.fleet.calls).toEqual([]);
    await t.press('y');
    await waitFor(() => expect(t.fleet.calls).toEqual([{ command: 'merge', id: 'T-3' }]));
    await waitFor(() => expect(t.frame()).toContain('Merged loop/T-3 into main'));
    await waitFor(() => expect(rowOf(t.frame(), 'T-3')).toContain('✓ merged'));
  });

  test('n cancels the merge and says so', async () => {
    const t = await setup({ tasks: mixedTasks() });
    await select(t, 'T-3');
    await t.press('m', 'n');
    expect(t.fleet.calls).toEqual([]);
    expect(t.frame()).not.toContain('? y/n');
    expect(t.frame()).toContain('Merge of T-3 cancelled');
  });

  test('Esc cancels too, and other keys leave the question open', async () => {
    const t = await setup({ tasks: mixedTasks() });
    await select(t, 'T-3');
    await t.press('m', 'j', 'q');
    expect(t.frame()).toContain('Merge loop/T-3 into main? y/n');
    expect(t.fleet.calls).toEqual([]);
    await t.press(KEY.escape);
    await waitFor(() => expect(t.frame()).not.toContain('? y/n'));
    expect(t.fleet.calls).toEqual([]);
  });

  test('m on a running task says why nothing happens', async () => {
    const t = await setup({ tasks: mixedTasks() });
    await t.press('m');
    expect(t.frame()).toContain('T-1 is running: only verified tasks can be merged');
    expect(t.frame()).not.toContain('y/n');
    expect(t.fleet.calls).toEqual([]);
  });

  test('d on a verified task asks what will be removed; y discards', async () => {
    const t = await setup({ tasks: mixedTasks() });
    await select(t, 'T-3');
    await t.press('d');
    expect(t.frame()).toContain('Discard T-3: remove its worktree and branch loop/T-3');
    await t.press('y');
    await waitFor(() => expect(t.fleet.calls).toEqual([{ command: 'discard', id: 'T-3' }]));
    await waitFor(() => expect(rowOf(t.frame(), 'T-3')).toContain('⌫ discarded'));
  });

  test('d on a failed task asks too; y discards it', async () => {
    const t = await setup({ tasks: mixedTasks() });
    await select(t, 'T-4');
    await t.press('d');
    expect(t.frame()).toContain(
      'Discard T-4: remove its worktree and branch loop/T-4 (kept as refs/loopfleet/discarded/T-4)? y/n',
    );
    await t.press('y');
    await waitFor(() => expect(t.fleet.calls).toEqual([{ command: 'discard', id: 'T-4' }]));
  });

  test('d on a queued task says why', async () => {
    const t = await setup({ tasks: mixedTasks() });
    await select(t, 'T-2');
    await t.press('d');
    expect(t.frame()).toContain(
      'T-2 is queued: only verified, failed, conflict or awaiting-approval tasks can be discarded',
    );
  });

  test('a refusal from the fleet shows its message in the status line', async () => {
    const t = await setup({ tasks: mixedTasks() });
    t.fleet.refusals.set('merge', 'your checkout of main has uncommitted changes; commit or stash them first');
    await select(t, 'T-3');
    await t.press('m', 'y');
    await waitFor(() => expect(t.frame()).toContain('✗ your checkout of main has uncommitted changes'));
    expect(rowOf(t.frame(), 'T-3')).toContain('✔ verified');
  });

  test('the question is checked again when answered: the task may have moved on', async () => {
    const t = await setup({ tasks: mixedTasks() });
    await select(t, 'T-3');
    await t.press('m');
    t.fleet.update('T-3', { status: 'running', phase: 'verify' });
    await waitFor(() => expect(rowOf(t.frame(), 'T-3')).toContain('running'));
    await t.press('y');
    expect(t.fleet.calls).toEqual([]);
    expect(t.frame()).toContain('T-3 is running: only verified tasks can be merged');
  });
});

describe('retry, pause, edit', () => {
  test('r on a failed task retries it', async () => {
    const t = await setup({ tasks: mixedTasks() });
    await select(t, 'T-4');
    await t.press('r');
    await waitFor(() => expect(t.fleet.calls).toEqual([{ command: 'retry', id: 'T-4' }]));
    await waitFor(() => expect(rowOf(t.frame(), 'T-4')).toContain('· queued'));
    expect(t.frame()).toContain('T-4 is queued again');
  });

  test('r works on conflict and discarded tasks, and says why on a verified one', async () => {
    const t = await setup({ tasks: mixedTasks() });
    await select(t, 'T-5');
    await t.press('r');
    await select(t, 'T-7');
    await t.press('r');
    await waitFor(() =>
      expect(t.fleet.calls).toEqual([
        { command: 'retry', id: 'T-5' },
        { command: 'retry', id: 'T-7' },
      ]),
    );
    await select(t, 'T-3');
    await t.press('r');
    expect(t.frame()).toContain('T-3 is verified: only failed, conflict or discarded tasks can be retried');
  });

  test('p pauses and resumes the fleet; the bar shows it', async () => {
    const t = await setup({ tasks: mixedTasks() });
    expect(t.lines()[0]).toContain('▶ running');
    await t.press('p');
    expect(t.fleet.calls).toEqual([{ command: 'pause' }]);
    await waitFor(() => expect(t.lines()[0]).toContain('‖ paused'));
    await t.press('p');
    expect(t.fleet.calls).toEqual([{ command: 'pause' }, { command: 'resume' }]);
    await waitFor(() => expect(t.lines()[0]).toContain('▶ running'));
  });

  test('p on a finished fleet says why', async () => {
    const t = await setup({ tasks: mixedTasks(), state: 'finished' });
    await t.press('p');
    expect(t.fleet.calls).toEqual([]);
    expect(t.frame()).toContain('The fleet has finished');
  });

  test('e opens the backlog through onEditBacklog', async () => {
    const t = await setup({ tasks: mixedTasks() });
    await t.press('e');
    await waitFor(() => expect(t.edits).toHaveLength(1));
    await waitFor(() => expect(t.frame()).toContain('Back from the editor'));
  });

  test('a key bound to nothing says so', async () => {
    const t = await setup({ tasks: mixedTasks() });
    await t.press('z');
    expect(t.frame()).toContain('"z" does nothing here: press ? for the keys');
  });
});
