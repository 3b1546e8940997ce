import { afterEach, describe, expect, test } from 'vitest';
import { cleanup } from 'ink-testing-library';
import { fakeAttempt } from '../helpers/fake-fleet.js';
import { mixedTasks } from '../helpers/ui-fixtures.js';
import { KEY, setup, waitFor } from '../helpers/ui-render.js';

afterEach(cleanup);

const DIFF = [
  'diff --git a/src/flags/newCheckout.ts b/src/flags/newCheckout.ts',
  'deleted file mode 100644',
  '--- a/src/flags/newCheckout.ts',
  '+++ /dev/null',
  '@@ -1,3 +0,0 @@',
  '-export const newCheckout = false;',
  '+// flag removed',
  ' unchanged line',
].join('\n');

describe('detail pane', () => {
  test('enter opens the detail of the selected task with its plan; enter closes it', async () => {
    const t = await setup({ tasks: mixedTasks(), rows: 40 });
    await t.press('j', 'j', KEY.enter);
    const frame = t.frame();
    expect(frame).toContain('── T-3 ✔ verified');
    expect(frame).toContain('[1 Plan]');
    expect(frame).toContain('Plan · attempt 2');
    expect(frame).toContain('Delete src/flags/newCheckout.ts');
    expect(frame).toContain('Remove its three call sites');
    await t.press(KEY.enter);
    expect(t.frame()).not.toContain('[1 Plan]');
    await t.press(KEY.tab);
    expect(t.frame()).toContain('[1 Plan]');
    await t.press(KEY.escape);
    await waitFor(() => expect(t.frame()).not.toContain('[1 Plan]'));
  });

  test('live agent text and tool calls appear as events arrive', async () => {
    const t = await setup({ tasks: mixedTasks(), rows: 40 });
    await t.press(KEY.enter, '2');
    expect(t.frame()).toContain('[2 Output]');
    expect(t.frame()).toContain('No agent output yet.');
    t.fleet.agentText('T-1', 'Reading package.json');
    t.fleet.agentText('T-1', ' to find lodash.\nNext: ');
    await waitFor(() => expect(t.frame()).toContain('Reading package.json to find lodash.'));
    expect(t.frame()).toContain('── implementer · attempt 1 ──');
    t.fleet.agentText('T-1', 'run the tests.\n');
    t.fleet.toolCall('T-1', 'bash', '{"command":"npm test"}');
    await waitFor(() => expect(t.frame()).toContain('⚙ bash {"command":"npm test"}'));
    expect(t.frame()).toContain('Next: run the tests.');
    // another task's output does not show here
    t.fleet.agentText('T-2', 'SECRET OF T-2');
    await waitFor(() => expect(t.fleet.calls).toEqual([]));
    expect(t.frame()).not.toContain('SECRET OF T-2');
  });

  test('the output tab follows new lines, and PgUp / Shift+↑ scroll back', async () => {
    const t = await setup({ tasks: mixedTasks(), rows: 30 });
    await t.press(KEY.enter, '2');
    t.fleet.agentText('T-1', Array.from({ length: 100 }, (_, i) => `line ${i + 1}`).join('\n') + '\n');
    await waitFor(() => expect(t.frame()).toContain('line 100'));
    await t.press(KEY.pageUp);
    expect(t.frame()).not.toContain('line 100');
    await t.press(KEY.pageDown);
    expect(t.frame()).toContain('line 100');
    await t.press(KEY.shiftUp);
    expect(t.frame()).not.toContain('line 100');
    expect(t.frame()).toContain('line 99');
    await t.press(KEY.shiftDown);
    expect(t.frame()).toContain('line 100');
  });

  test('check output, reviewer verdict, history and diff tabs', async () => {
    const t = await setup({ tasks: mixedTasks(), rows: 40, diffs: { 'T-3': DIFF } });
    await t.press('j', 'j', KEY.enter, '4');
    expect(t.frame()).toContain('[4 Check]');
    expect(t.frame()).toContain('✔ $ npm test');
    expect(t.frame()).toContain('attempt 2 · exit 0 · 12s');
    expect(t.frame()).toContain('Tests: 42 passed, 42 total');

    await t.press(KEY.right);
    expect(t.frame()).toContain('[5 Review]');
    expect(t.frame()).toContain('✔ reviewer passed · attempt 2');
    expect(t.frame()).toContain('• The flag and its call sites are gone');

    await t.press('6');
    expect(t.frame()).toMatch(/1 {2}check-failed +52k +\$0\.20 {2}npm test exited 1/);
    expect(t.frame()).toMatch(/2 {2}verified/);

    await t.press('3');
    await waitFor(() => expect(t.frame()).toContain('-export const newCheckout = false;'));
    expect(t.frame()).toContain('+// flag removed');
    expect(t.frame()).toContain('@@ -1,3 +0,0 @@');
    await t.press(KEY.left, KEY.left);
    expect(t.frame()).toContain('[1 Plan]');
  });

  test('a failed check shows its exit code and output; live check output streams while it runs', async () => {
    const tasks = mixedTasks();
    const t = await setup({ tasks, rows: 40 });
    await t.press('4');
    expect(t.frame()).toContain('No check has run yet.');
    t.fleet.update('T-1', { phase: 'verify' });
    t.fleet.phaseOutput('T-1', 'verify', '> vitest run\n FAIL  test/a.test.ts\n');
    await waitFor(() => expect(t.frame()).toContain('FAIL  test/a.test.ts'));
    expect(t.frame()).toContain('Live output');
    t.fleet.update('T-1', {
      status: 'queued',
      phase: null,
      attempts: [
        fakeAttempt(1, {
          outcome: 'check-failed',
          check: {
            command: 'npm test',
            exitCode: 1,
            timedOut: false,
            outputTail: 'AssertionError: expected 2 to be 3',
            durationMs: 3000,
          },
        }),
      ],
    });
    await waitFor(() => expect(t.frame()).toContain('✗ $ npm test'));
    expect(t.frame()).toContain('exit 1');
    expect(t.frame()).toContain('AssertionError: expected 2 to be 3');
  });

  test('the detail follows the selection', async () => {
    const t = await setup({ tasks: mixedTasks(), rows: 40 });
    await t.press(KEY.enter);
    expect(t.frame()).toContain('── T-1 ▶ running');
    await t.press('j');
    expect(t.frame()).toContain('── T-2 · queued');
    expect(t.frame()).toContain('No attempt yet');
  });

  test('a veto and guard failures show in the review tab', async () => {
    const tasks = mixedTasks();
    tasks[3] = {
      ...tasks[3]!,
      attempts: [
        fakeAttempt(1, {
          outcome: 'vetoed',
          guard: ['touches a protected path: .github/workflows/ci.yml'],
          verdict: { pass: false, reasons: ['The change disables a test'] },
        }),
      ],
    };
    const t = await setup({ tasks, rows: 40 });
    await t.press('j', 'j', 'j', '5');
    expect(t.frame()).toContain('✗ guard checks failed · attempt 1');
    expect(t.frame()).toContain('touches a protected path');
    expect(t.frame()).toContain('✗ reviewer vetoed · attempt 1');
    expect(t.frame()).toContain('• The change disables a test');
  });
});
