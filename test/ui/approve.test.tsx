import { afterEach, describe, expect, test } from 'vitest';
import { cleanup, render } from 'ink-testing-library';
import { App } from '../../src/ui/app.js';
import { FakeFleet, fakeAttempt, fakeTask } from '../helpers/fake-fleet.js';
import { plain, resize, rowOf, setup, sleep, waitFor } from '../helpers/ui-render.js';

afterEach(cleanup);

const PLAN = 'Step 1: write done.txt';

function awaiting() {
  return [
    fakeTask('T-1', {
      status: 'awaiting-approval',
      attempt: 1,
      reason: 'the plan awaits approval',
      attempts: [fakeAttempt(1, { outcome: 'interrupted', plan: PLAN })],
    }),
    fakeTask('T-2', { status: 'queued' }),
  ];
}

describe('approving a plan', () => {
  test('a on a task awaiting approval approves its plan; the task is queued again', async () => {
    const t = await setup({ tasks: awaiting() });
    await t.press('a');
    await waitFor(() => expect(t.fleet.calls).toEqual([{ command: 'approve', id: 'T-1' }]));
    await waitFor(() => expect(t.frame()).toContain("T-1's plan is approved"));
    expect(t.fleet.task('T-1').status).toBe('queued');
    expect(t.fleet.task('T-1').approvedPlan).toBe(PLAN);
    await waitFor(() => expect(rowOf(t.frame(), 'T-1')).toContain('queued'));
  });

  test('a on a task that is not awaiting approval says why and does nothing', async () => {
    const t = await setup({ tasks: awaiting() });
    await t.press('j', 'a');
    expect(t.frame()).toContain('T-2 is queued: only awaiting-approval tasks can be approved');
    expect(t.fleet.calls).toEqual([]);
  });

  test('e on a task awaiting approval opens its plan in the editor and approves the edited plan', async () => {
    const fleet = new FakeFleet({ tasks: awaiting() });
    const opened: Array<{ id: string; plan: string }> = [];
    const backlogEdits: number[] = [];
    const r = render(
      <App
        fleet={fleet}
        color={false}
        onEditBacklog={async () => void backlogEdits.push(1)}
        onEditPlan={async (id, plan) => {
          opened.push({ id, plan });
          return `${plan}\nStep 2: and nothing else\n`;
        }}
      />,
    );
    resize(r.stdout, 120, 30);
    await sleep(0);
    r.stdin.write('e');
    await waitFor(() =>
      expect(fleet.calls).toEqual([{ command: 'approve', id: 'T-1', plan: `${PLAN}\nStep 2: and nothing else\n` }]),
    );
    expect(opened).toEqual([{ id: 'T-1', plan: PLAN }]);
    expect(backlogEdits).toEqual([]);
    await waitFor(() => expect(plain(r.lastFrame())).toContain("T-1's edited plan is approved"));
  });
});
