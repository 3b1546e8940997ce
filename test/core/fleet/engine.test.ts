import { describe, expect, it } from 'vitest';
import { fleetReducer, initFleetState } from '../../../src/ui/fleet-reducer.js';
import { fakeEngine, runToIdle, type FakeEngine } from '../../helpers/fake-engine.js';
import type { FakeScript } from '../../helpers/fake-model.js';

/**
 * The fleet's scheduling and gates on fake ports (what git itself does is tested on real repositories in
 * fleet.test.ts and the adapters' tests).
 */

const writes =
  (files: (task: string) => Record<string, string>): FakeScript =>
  ({ role, task }) =>
    role === 'implementer' ? { edits: files(task) } : {};
/** `check: the-check` passes when the worktree has done.txt */
function engine(
  front: string,
  items: string,
  script: FakeScript,
  options: Parameters<typeof fakeEngine>[2] = {},
): Promise<FakeEngine> {
  let e!: FakeEngine;
  const made = fakeEngine(`check: the-check\n${front}`, items, {
    script,
    run: (_c, o) => ({ exitCode: e.git.files(o.cwd).has('done.txt') ? 0 : 1 }),
    ...options,
  });
  return made.then((x) => (e = x));
}

describe('the fleet on fake ports', () => {
  it('gives every command the task environment, and the verifier never runs after a failing check', async () => {
    const e = await fakeEngine('check: the-check', '- [ ] T-1 Never done\n  attempts: 2', {
      script: writes(() => ({ 'n.txt': 'x' })),
      run: () => ({ exitCode: 3, output: 'missing\n' }),
    });
    await runToIdle(e);
    const inTask = e.runner.commands.filter((c) => !c.cwd.includes('/.base-'));
    expect(inTask[0]!.env).toMatchObject({
      LOOPFLEET_TASK_ID: 'T-1',
      LOOPFLEET_BRANCH: 'loop/T-1',
      LOOPFLEET_BASE_BRANCH: 'main',
      LOOPFLEET_GIT_ROOT: '/repo',
    });
    expect(inTask[0]!.cwd).toBe('/repo/.loop-worktrees/T-1');
    expect(e.model.calls.some((c) => c.role === 'verifier')).toBe(false);
  });

  it('lets the reviewer veto a passing check, and never pass a failing one', async () => {
    const vetoed = await engine('', '- [ ] T-1 Vetoed\n  attempts: 1', ({ role }) =>
      role === 'implementer'
        ? { edits: { 'done.txt': 'x' } }
        : role === 'verifier'
          ? { text: '{"pass":false,"reasons":["deletes a test"]}' }
          : {},
    );
    await runToIdle(vetoed);
    const t = vetoed.fleet.task('T-1')!;
    expect(t.status).toBe('failed');
    expect(t.attempts[0]!.outcome).toBe('vetoed');
    expect(t.attempts[0]!.reason).toContain('deletes a test');

    const failing = await engine('', '- [ ] T-2 Reviewer says pass\n  attempts: 1', ({ role }) =>
      role === 'implementer' ? { edits: { 'a.txt': 'a' } } : { text: '{"pass":true,"reasons":[]}' },
    );
    await runToIdle(failing);
    expect(failing.fleet.task('T-2')!.status).toBe('failed');
    expect(failing.model.calls.some((c) => c.role === 'verifier')).toBe(false);
  });

  it('keeps the branch of a task its token gate stopped', async () => {
    const e = await engine('gates:\n  tokens: 1000', '- [ ] T-1 Expensive', ({ role }) =>
      role === 'implementer'
        ? { usage: { input: 4000, output: 0, cacheWrite: 0, cacheRead: 0 }, chunks: 8, edits: { 'done.txt': 'x' } }
        : {},
    );
    await runToIdle(e);
    expect(e.fleet.task('T-1')!.gate).toBe('tokens');
    expect(await e.git.branchExists('loop/T-1')).toBe(true);
  });

  it('runs a task after its dependency is merged (auto-merge)', async () => {
    const e = await engine(
      '',
      '- [ ] T-1 First\n- [ ] T-2 Second\n  after: T-1',
      writes((task) => ({ 'done.txt': 'x', [`${task}.txt`]: task })),
      { autoMerge: true },
    );
    await runToIdle(e);
    expect(e.fleet.task('T-1')!.status).toBe('merged');
    expect(e.fleet.task('T-2')!.status).toBe('merged');
    const order = e.model.calls.map((c) => c.task);
    expect(order.lastIndexOf('T-1')).toBeLessThan(order.indexOf('T-2'));
    expect(e.git.show('main', 'T-1.txt')).toBe('T-1');
    expect(e.git.show('main', 'T-2.txt')).toBe('T-2');
    expect(e.ticked).toEqual(['T-1', 'T-2']);
  });

  it('leaves a dependent queued while its dependency is only verified', async () => {
    const e = await engine(
      '',
      '- [ ] T-1 First\n- [ ] T-2 Second\n  after: T-1',
      writes(() => ({ 'done.txt': 'x' })),
    );
    await runToIdle(e);
    expect(e.fleet.task('T-1')!.status).toBe('verified');
    expect(e.fleet.task('T-2')!.status).toBe('queued');
  });

  it('goes idle when the work runs out and running again when new work comes, and never starts work before start()', async () => {
    const e = await engine(
      '',
      '- [ ] T-1 One',
      writes(() => ({ 'done.txt': 'x' })),
    );
    const states: string[] = [];
    e.fleet.events.on('fleet', (s) => states.push(s.state));
    e.fleet.applyBacklog({ ...e.backlog }); // an edit before start() must not start anything
    await new Promise((r) => setTimeout(r, 20));
    expect(e.model.calls).toHaveLength(0);
    e.fleet.start();
    await e.fleet.whenIdle();
    expect(e.fleet.summary().state).toBe('idle');
    expect(states.at(-1)).toBe('idle');
    expect(states).toContain('running');
    const more = {
      ...e.backlog,
      tasks: [...e.backlog.tasks, { ...e.backlog.tasks[0]!, id: 'T-2', title: 'Two', line: 7 }],
    };
    e.fleet.applyBacklog(more);
    expect(e.fleet.summary().state).toBe('running');
    await e.fleet.whenIdle();
    expect(e.fleet.task('T-2')!.status).toBe('verified');
    await e.fleet.stop();
    expect(e.fleet.summary().state).toBe('finished');
    e.fleet.start(); // a stopped fleet never starts again
    expect(e.fleet.summary().state).toBe('finished');
  });

  it('applies a new concurrency at once', async () => {
    const e = await engine(
      'concurrency: 1',
      '- [ ] T-1 One\n- [ ] T-2 Two\n- [ ] T-3 Three\n- [ ] T-4 Four',
      ({ role }) => (role === 'implementer' ? { edits: { 'done.txt': 'x' }, delayMs: 30, chunks: 2 } : {}),
    );
    let running = 0;
    let most = 0;
    e.fleet.events.on('task', ({ task, previousStatus }) => {
      if (previousStatus !== 'running' && task.status === 'running') running++;
      if (previousStatus === 'running' && task.status !== 'running') running--;
      most = Math.max(most, running);
    });
    e.fleet.start();
    await new Promise((r) => setTimeout(r, 10));
    expect(most).toBe(1);
    e.fleet.applyBacklog({ ...e.backlog, config: { ...e.backlog.config, concurrency: 3 } });
    await e.fleet.whenIdle();
    await e.fleet.stop();
    expect(most).toBeGreaterThanOrEqual(2);
    expect(e.fleet.tasks().every((t) => t.status === 'verified')).toBe(true);
  });

  it('holds: no task starts until the hold ends, and the summary says why', async () => {
    const e = await engine(
      '',
      '- [ ] T-1 One',
      writes(() => ({ 'done.txt': 'x' })),
    );
    e.fleet.start();
    await e.fleet.whenIdle();
    e.fleet.hold('rate limit', Date.now() + 30);
    expect(e.fleet.summary()).toMatchObject({ state: 'paused', hold: { reason: 'rate limit' } });
    e.fleet.applyBacklog({
      ...e.backlog,
      tasks: [...e.backlog.tasks, { ...e.backlog.tasks[0]!, id: 'T-2', title: 'Two', line: 7 }],
    });
    await new Promise((r) => setTimeout(r, 10));
    expect(e.fleet.task('T-2')!.status).toBe('queued');
    await new Promise((r) => setTimeout(r, 40));
    await e.fleet.whenIdle();
    expect(e.fleet.summary().hold).toBeUndefined();
    expect(e.fleet.task('T-2')!.status).toBe('verified');
    await e.fleet.stop();
  });

  it('merges a task ticked [x] in BACKLOG.md while the fleet is open through one task event, so the TUI row shows merged', async () => {
    const e = await engine(
      '',
      '- [ ] T-1 One\n- [ ] T-2 Two',
      writes(() => ({})),
    );
    let ui = initFleetState(e.fleet, 0);
    e.fleet.events.on('task', (event) => {
      ui = fleetReducer(ui, { type: 'task', event, at: 0 });
    });
    e.seen.length = 0;
    e.fleet.applyBacklog({
      ...e.backlog,
      tasks: e.backlog.tasks.map((t) => (t.id === 'T-1' ? { ...t, done: true } : t)),
    });
    const events = e.seen
      .filter((s) => s.name === 'task')
      .map((s) => s.payload as { task: { id: string; status: string }; previousStatus: string });
    expect(events.map((c) => `${c.task.id}:${c.previousStatus}->${c.task.status}`)).toEqual(['T-1:queued->merged']);
    expect(ui.tasks.get('T-1')!.task.status).toBe('merged');
    expect(ui.tasks.get('T-2')!.task.status).toBe('queued');
    expect(e.fleet.task('T-1')!.status).toBe('merged');
    expect(e.fleet.summary().counts.merged).toBe(1);
  });
});
