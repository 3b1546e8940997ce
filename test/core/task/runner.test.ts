import { describe, expect, it } from 'vitest';
import { FleetState } from '../../../src/core/task/state.js';
import { fakeEngine, runToIdle } from '../../helpers/fake-engine.js';
import type { FakeScript } from '../../helpers/fake-model.js';

/** The check passes once the implementer wrote done.txt. */
const CHECK = 'check: test -f done.txt';
const writesDone: FakeScript = ({ role }) => (role === 'implementer' ? { edits: { 'done.txt': 'done\n' } } : {});
const checkSeesDone =
  (engine: { git: { files(w: string): Map<string, string> } }) => (command: string, options: { cwd: string }) =>
    command === 'test -f done.txt'
      ? { exitCode: engine.git.files(options.cwd).has('done.txt') ? 0 : 1, output: 'checked\n' }
      : {};

describe('the task runner on fake ports', () => {
  it('runs explore, implement, commit, check and review to verified, on the task’s branch', async () => {
    let e!: Awaited<ReturnType<typeof fakeEngine>>;
    e = await fakeEngine(CHECK, '- [ ] T-1 One', { script: writesDone, run: (c, o) => checkSeesDone(e)(c, o) });
    await runToIdle(e);
    const t = e.fleet.task('T-1')!;
    expect(t.status).toBe('verified');
    expect(t.attempts.map((a) => a.outcome)).toEqual(['verified']);
    expect(e.model.calls.map((c) => c.role)).toEqual(['explorer', 'implementer', 'verifier']);
    expect(e.git.show('loop/T-1', 'done.txt')).toBe('done\n');
    // once on base for the baseline (a scratch checkout), once on the task's commit
    expect(e.runner.commands.map((c) => [c.command, c.cwd.includes('/.base-') ? 'base' : 'task'])).toEqual([
      ['test -f done.txt', 'base'],
      ['test -f done.txt', 'task'],
    ]);
    expect(e.workspace.transcripts.map((r) => r.record.type)).toContain('attempt-end');
  });

  it('reports each step in order: phases, agent output, then the final status', async () => {
    let e!: Awaited<ReturnType<typeof fakeEngine>>;
    e = await fakeEngine(CHECK, '- [ ] T-1 One', {
      script: ({ role }) => (role === 'implementer' ? { edits: { 'done.txt': 'x' }, text: 'wrote it' } : {}),
      run: (c, o) => checkSeesDone(e)(c, o),
    });
    e.seen.length = 0;
    await runToIdle(e);
    const steps: string[] = [];
    for (const { name, payload } of e.seen) {
      const p = payload as {
        task?: { status: string; phase: string | null };
        previousStatus?: string;
        role?: string;
        name?: string;
        phase?: string;
      };
      const step =
        name === 'task'
          ? p.task!.status === 'running'
            ? `phase:${p.task!.phase}`
            : `status:${p.previousStatus}->${p.task!.status}`
          : name === 'agent-text'
            ? `text:${p.role}`
            : name === 'tool-call'
              ? `tool:${p.name}`
              : name === 'phase-output'
                ? `output:${p.phase}`
                : null;
      if (step !== null && steps.at(-1) !== step) steps.push(step);
    }
    expect(steps).toEqual([
      'phase:setup',
      'phase:explore',
      'text:explorer',
      'phase:implement',
      'tool:write',
      'text:implementer',
      'phase:verify',
      'output:verify',
      'text:verifier',
      'status:running->verified',
    ]);
  });

  it('aborts a call mid-stream when the task’s token gate trips, counting what was streamed', async () => {
    const e = await fakeEngine(`${CHECK}\ngates:\n  tokens: 1000`, '- [ ] T-1 Expensive', {
      script: ({ role }) =>
        role === 'implementer'
          ? { usage: { input: 4000, output: 0, cacheWrite: 0, cacheRead: 0 }, chunks: 8, edits: { 'done.txt': 'x' } }
          : {},
    });
    await runToIdle(e);
    const t = e.fleet.task('T-1')!;
    expect(t).toMatchObject({ status: 'failed', gate: 'tokens' });
    expect(t.attempts[0]!.outcome).toBe('gate');
    const total = t.usage.input + t.usage.output;
    expect(total).toBeGreaterThanOrEqual(1000);
    expect(total).toBeLessThan(2000);
    expect(e.model.calls.map((c) => c.role)).toEqual(['explorer', 'implementer']);
    expect(e.seen.filter((s) => s.name === 'gate').map((s) => (s.payload as { gate: string }).gate)).toEqual([
      'tokens',
    ]);
  });

  it('fails at the attempts gate, feeding each failure to the next attempt', async () => {
    let n = 0;
    const e = await fakeEngine('check: the-check', '- [ ] T-1 Never\n  attempts: 3', {
      script: ({ role }) => (role === 'implementer' ? { edits: { 'n.txt': `try${++n}\n` } } : {}),
      run: () => ({ exitCode: 3, output: `missing ${n === 1 ? 'a' : n === 2 ? 'b' : 'c'}\n` }),
    });
    await runToIdle(e);
    const t = e.fleet.task('T-1')!;
    expect(t).toMatchObject({ status: 'failed', gate: 'attempts', reason: 'attempts gate: 3 of 3 attempts failed' });
    expect(t.attempts.map((a) => a.outcome)).toEqual(['check-failed', 'check-failed', 'check-failed']);
    expect(e.model.calls.filter((c) => c.role === 'implementer')[1]!.prompt).toContain('missing a');
  });

  it('stops at the no-progress gate when the same failure repeats', async () => {
    const e = await fakeEngine('check: the-check', '- [ ] T-1 Stuck\n  attempts: 5', {
      script: ({ role, attempt }) => (role === 'implementer' ? { edits: { 'x.txt': `${attempt}\n` } } : {}),
      run: () => ({ exitCode: 1, output: 'always the same, in 0.5s\n' }),
    });
    await runToIdle(e);
    const t = e.fleet.task('T-1')!;
    expect(t.gate).toBe('no-progress');
    expect(t.attempts).toHaveLength(2);
    expect(t.reason).toMatch(/^no progress: attempts 1 and 2 failed the same way \(check `the-check` exited 1\)$/);
  });

  it('an error thrown by an agent is evidence for the next attempt, and the same error twice is no progress', async () => {
    const e = await fakeEngine(CHECK, '- [ ] T-1 Broken\n  attempts: 4', {
      script: ({ role }) => (role === 'explorer' ? { error: new Error('model said no') } : {}),
    });
    await runToIdle(e);
    const t = e.fleet.task('T-1')!;
    expect(t.attempts.map((a) => a.outcome)).toEqual(['error', 'error']);
    expect(t.attempts[0]!.fingerprint).toBe('error:model said no');
    expect(t.gate).toBe('no-progress');
    expect(e.model.calls[1]!.prompt).toContain('model said no');
  });

  it('requeues the task when the fleet stops mid-call, keeping the attempt as interrupted', async () => {
    const e = await fakeEngine(CHECK, '- [ ] T-1 Slow', {
      script: ({ role }) => (role === 'implementer' ? { delayMs: 20, chunks: 50 } : {}),
    });
    e.fleet.start();
    for (let i = 0; i < 200 && e.fleet.task('T-1')?.phase !== 'implement'; i++)
      await new Promise((r) => setTimeout(r, 5));
    await e.fleet.stop();
    const t = e.fleet.task('T-1')!;
    expect(t).toMatchObject({ status: 'queued', phase: null, reason: 'interrupted: the fleet was stopped' });
    expect(t.attempts.map((a) => a.outcome)).toEqual(['interrupted']);
  });

  it('interrupts an attempt in setup when the fleet stops: recorded interrupted, not a failed setup', async () => {
    const e = await fakeEngine(`setup: ./slow-setup.sh\n${CHECK}`, '- [ ] T-1 Slow setup', {
      // the setup would run for an hour; only the stop signal ends it
      run: (c) => (c === './slow-setup.sh' ? { delayMs: 3_600_000 } : {}),
    });
    const inSetup = new Promise<void>((resolve) =>
      e.fleet.events.on('task', ({ task }) => {
        if (task.id === 'T-1' && task.phase === 'setup') resolve();
      }),
    );
    e.fleet.start();
    await inSetup;
    await e.fleet.stop();
    const t = e.fleet.task('T-1')!;
    expect(t).toMatchObject({ status: 'queued', phase: null, reason: 'interrupted: the fleet was stopped' });
    expect(t.attempts.map((a) => a.outcome)).toEqual(['interrupted']);
    expect(e.model.calls).toHaveLength(0);
  });

  it('resumes a task a crash left running: the same attempt number runs again, the interrupted one kept', async () => {
    let e!: Awaited<ReturnType<typeof fakeEngine>>;
    const first = await fakeEngine(CHECK, '- [ ] T-1 One', {
      script: ({ role }) => (role === 'implementer' ? { delayMs: 20, chunks: 50 } : {}),
    });
    first.fleet.start();
    for (let i = 0; i < 200 && first.fleet.task('T-1')?.phase !== 'implement'; i++)
      await new Promise((r) => setTimeout(r, 5));
    await first.state.flush();
    // A crash: the store holds what was last saved, with T-1 running. (The first fleet is left to be collected.)
    expect((await first.store.load())!.tasks['T-1']!.status).toBe('running');
    const crashed = (await first.store.load())!;
    const store = new (first.store.constructor as new () => typeof first.store)();
    await store.save(crashed);
    e = await fakeEngine(CHECK, '- [ ] T-1 One', {
      store,
      git: first.git,
      script: writesDone,
      run: (c, o) => checkSeesDone(e)(c, o),
    });
    await first.fleet.stop();
    expect(e.fleet.task('T-1')).toMatchObject({ status: 'queued', reason: 'resumed after an interrupted run' });
    await runToIdle(e);
    const t = e.fleet.task('T-1')!;
    expect(t.status).toBe('verified');
    expect(t.attempt).toBe(1);
    expect(t.attempts.map((a) => [a.n, a.outcome])).toEqual([
      [-1, 'interrupted'],
      [1, 'verified'],
    ]);
  });

  it('a retried task gets a fresh budget of attempts', async () => {
    let pass = false;
    const e = await fakeEngine('check: the-check', '- [ ] T-1 Flaky\n  attempts: 1', {
      script: writesDone,
      run: () => ({ exitCode: pass ? 0 : 1, output: 'no\n' }),
    });
    e.fleet.start();
    await e.fleet.whenIdle();
    expect(e.fleet.task('T-1')).toMatchObject({ status: 'failed', gate: 'attempts' });
    pass = true;
    await e.fleet.retry('T-1');
    await e.fleet.whenIdle();
    await e.fleet.stop();
    const t = e.fleet.task('T-1')!;
    expect(t.status).toBe('verified');
    expect(t.attempts.map((a) => [a.n, a.outcome])).toEqual([
      [1, 'check-failed'],
      [2, 'verified'],
    ]);
    expect(t.budget.fromAttempt).toBe(1);
  });

  it('stops the run at a fleet gate, keeping unfinished tasks queued', async () => {
    const e = await fakeEngine(
      `${CHECK}\nconcurrency: 1\ngates:\n  fleet_tokens: 300`,
      '- [ ] T-1 One\n- [ ] T-2 Two\n- [ ] T-3 Three',
      { script: writesDone },
    );
    await runToIdle(e);
    expect(e.fleet.stoppedBy).toBe('fleet_tokens');
    const statuses = e.fleet.tasks().map((t) => t.status);
    expect(statuses).not.toContain('running');
    expect(statuses.filter((s) => s === 'queued').length).toBeGreaterThanOrEqual(2);
    expect(e.seen.filter((s) => s.name === 'gate').map((s) => (s.payload as { scope: string }).scope)).toEqual([
      'fleet',
    ]);
  });

  it('fails a task whose setup fails, with its output as evidence and no model call', async () => {
    const e = await fakeEngine('setup: ./setup.sh\ncheck: "true"', '- [ ] T-1 One\n  attempts: 1', {
      run: (c) => (c === './setup.sh' ? { exitCode: 4, output: 'broken setup\n' } : {}),
    });
    await runToIdle(e);
    const t = e.fleet.task('T-1')!;
    expect(t.status).toBe('failed');
    expect(t.attempts[0]!.outcome).toBe('setup-failed');
    expect(t.attempts[0]!.setup!.outputTail).toContain('broken setup');
    expect(e.model.calls).toHaveLength(0);
  });

  it('hands the UI copies only: changing what it got changes nothing in the engine', async () => {
    const e = await fakeEngine(CHECK, '- [ ] T-1 One');
    const view = e.fleet.tasks();
    view[0]!.status = 'merged';
    e.fleet.task('T-1')!.title = 'changed';
    expect(e.fleet.task('T-1')).toMatchObject({ status: 'queued', title: 'One' });
    expect(e.state).toBeInstanceOf(FleetState);
  });
});
