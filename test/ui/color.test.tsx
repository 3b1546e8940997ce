import '../helpers/force-color.js';
import { afterEach, describe, expect, test } from 'vitest';
import { cleanup } from 'ink-testing-library';
import { mixedTasks } from '../helpers/ui-fixtures.js';
import { KEY, setup, waitFor } from '../helpers/ui-render.js';

afterEach(cleanup);

// eslint-disable-next-line no-control-regex
const ANSI = /\u001B\[/;

const DIFF = 'diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old line\n+new line\n';

describe('colour', () => {
  test('with colour, statuses and diff lines are coloured', async () => {
    const t = await setup({ tasks: mixedTasks(), color: true, rows: 40, diffs: { 'T-3': DIFF } });
    const raw = t.stdout.lastFrame() ?? '';
    expect(raw).toMatch(ANSI);
    // green ✔ verified, red ✗ failed
    expect(raw).toMatch(/\u001B\[32m✔ verified/);
    expect(raw).toMatch(/\u001B\[31m✗ failed/);
    await t.press('j', 'j', '3');
    await waitFor(() => expect(t.frame()).toContain('+new line'));
    const diff = t.stdout.lastFrame() ?? '';
    expect(diff).toMatch(/\u001B\[32m\+new line/);
    expect(diff).toMatch(/\u001B\[31m-old line/);
  });

  test('color={false} (NO_COLOR): not one escape code in any frame, through every view', async () => {
    const t = await setup({ tasks: mixedTasks(), color: false, rows: 40, sandboxed: false, diffs: { 'T-3': DIFF } });
    t.fleet.agentText('T-3', 'some output\n');
    await t.press('j', 'j', KEY.enter);
    for (const tab of ['1', '2', '3', '4', '5', '6']) await t.press(tab);
    await waitFor(() => expect(t.frame()).toContain('History'));
    await t.press('m');
    await t.press('n', '?');
    const frames = t.stdout.frames.filter((f) => f !== '\u0007');
    expect(frames.length).toBeGreaterThan(5);
    for (const f of frames) expect(f).not.toMatch(ANSI);
  });
});
