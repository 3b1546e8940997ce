import { describe, expect, it } from 'vitest';
import { fakeEngine, runToIdle } from '../../helpers/fake-engine.js';
import type { FakeScript } from '../../helpers/fake-model.js';

const script: FakeScript = ({ role }) =>
  role === 'explorer' ? { text: 'PLAN: write done.txt' } : role === 'implementer' ? { edits: { 'done.txt': 'x' } } : {};

/** The tasks running together at each `task` event, as sorted id lists. */
function together(seen: Array<{ name: string; payload: unknown }>): string[][] {
  const running = new Set<string>();
  const out: string[][] = [];
  for (const e of seen) {
    if (e.name !== 'task') continue;
    const t = (e.payload as { task: { id: string; status: string } }).task;
    if (t.status === 'running') running.add(t.id);
    else running.delete(t.id);
    out.push([...running].sort());
  }
  return out;
}

describe('best-of-N and concurrency', () => {
  it('a parallel: 2 task takes two slots: with concurrency 2 nothing runs beside it, and the task after it waits', async () => {
    const e = await fakeEngine(
      'check: the-check\nreview: false\nconcurrency: 2',
      '- [ ] T-1 One\n  parallel: 2\n- [ ] T-2 Two\n- [ ] T-3 Three',
      { script, run: () => ({ exitCode: 0 }) },
    );
    await runToIdle(e);
    const sets = together(e.seen);
    expect(sets.some((s) => s.includes('T-1') && s.length > 1)).toBe(false);
    // once T-1 is done, the two single tasks share the two slots
    expect(sets.some((s) => s.join() === 'T-2,T-3')).toBe(true);
    expect(e.fleet.task('T-1')!.attempts[0]!.candidates?.map((c) => c.outcome)).toEqual(['verified', 'verified']);
    expect(e.model.calls.filter((c) => c.task === 'T-1').map((c) => c.role)).toEqual([
      'explorer',
      'implementer',
      'implementer',
    ]);
  });

  it('parallel: 1 takes one slot: two tasks share concurrency 2', async () => {
    const e = await fakeEngine(
      'check: the-check\nreview: false\nconcurrency: 2',
      '- [ ] T-1 One\n  parallel: 1\n- [ ] T-2 Two',
      {
        script,
        run: () => ({ exitCode: 0 }),
      },
    );
    await runToIdle(e);
    expect(together(e.seen).some((s) => s.join() === 'T-1,T-2')).toBe(true);
    expect(e.fleet.task('T-1')!.attempts[0]!.candidates).toBeUndefined();
  });
});

describe('a best-of-N round cut short', () => {
  it("a gate tripped by one candidate stops the round: the task fails with every candidate's record", async () => {
    const e = await fakeEngine(
      'check: the-check\nreview: false\ngates:\n  tokens: 1000',
      '- [ ] T-1 One\n  parallel: 2',
      {
        script: ({ role, request }) =>
          role === 'implementer' && request.workdir.endsWith('--c2')
            ? { usage: { input: 5000, output: 0, cacheWrite: 0, cacheRead: 0 }, edits: { 'done.txt': 'y' } }
            : script({ role, task: 'T-1', attempt: 1, request }),
        run: () => ({ exitCode: 0 }),
      },
    );
    await runToIdle(e);
    const t = e.fleet.task('T-1')!;
    expect(t.status).toBe('failed');
    expect(t.gate).toBe('tokens');
    const round = t.attempts.at(-1)!;
    expect(round.candidates?.map((c) => c.k)).toEqual([1, 2]);
    expect(round.candidates?.[1]).toMatchObject({ k: 2, outcome: 'interrupted', ref: null });
    // nothing of the candidates is left as a branch
    expect(await e.git.branchExists('loop/T-1--c1')).toBe(false);
    expect(await e.git.branchExists('loop/T-1--c2')).toBe(false);
  });
});
