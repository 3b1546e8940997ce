import { describe, expect, it } from 'vitest';
import type { RecheckOutcome } from '../../../src/core/attempt/attempt-io.js';
import { runMergeQueue, type QueueSteps, type RebaseOutcome } from '../../../src/core/land/merge-queue.js';

/** A queue over scripted steps that records what it did, in order. */
function scripted(options: {
  rebase?: Record<string, RebaseOutcome>;
  recheck?: Record<string, RecheckOutcome>;
  /** tasks whose branch tip passed its checks here already */
  checked?: string[];
  refuse?: string;
  stopAfter?: string;
}) {
  const log: string[] = [];
  let stop = false;
  const steps: QueueSteps = {
    rebase: async (id) => {
      log.push(`rebase ${id}`);
      return options.rebase?.[id] ?? { kind: 'rebased' };
    },
    recheck: async (id) => {
      log.push(`recheck ${id}`);
      if (options.stopAfter === `recheck ${id}`) stop = true;
      return options.recheck?.[id] ?? { pass: true };
    },
    checked: async (id) => options.checked?.includes(id) ?? false,
    land: async (id) => {
      log.push(`land ${id}`);
      if (options.refuse === id) return { kind: 'refused', reason: 'uncommitted changes' };
      if (options.stopAfter === `land ${id}`) stop = true;
      return { kind: 'merged', commit: `c-${id}` };
    },
    sendBack: (id, reason) => void log.push(`send back ${id}: ${reason}`),
    stopped: () => stop,
    log: () => undefined,
  };
  return { steps, log };
}

describe('the merge queue', () => {
  it('lands each task on top of the previous, re-checking every rebased branch before it lands', async () => {
    const { steps, log } = scripted({ rebase: { 'T-1': { kind: 'unchanged' } }, checked: ['T-1'] });
    const result = await runMergeQueue(['T-1', 'T-2', 'T-3'], steps);
    expect(log).toEqual([
      'rebase T-1',
      'land T-1',
      'rebase T-2',
      'recheck T-2',
      'land T-2',
      'rebase T-3',
      'recheck T-3',
      'land T-3',
    ]);
    expect(result.merged).toEqual(['T-1', 'T-2', 'T-3']);
  });

  it('re-checks a branch it did not rebase unless its tip passed its checks here, and sends it back when they fail', async () => {
    const { steps, log } = scripted({
      rebase: { 'T-1': { kind: 'unchanged' }, 'T-2': { kind: 'unchanged' } },
      checked: ['T-2'],
      recheck: { 'T-1': { pass: false, reason: 'check `npm test` exited 1', evidence: '1 failing' } },
    });
    const result = await runMergeQueue(['T-1', 'T-2'], steps);
    expect(log).toEqual([
      'rebase T-1',
      'recheck T-1',
      'send back T-1: before it lands: check `npm test` exited 1',
      'rebase T-2',
      'land T-2',
    ]);
    expect(result.merged).toEqual(['T-2']);
  });

  it('sends back a task whose check fails on the new base, with the output, and moves on', async () => {
    const { steps, log } = scripted({
      recheck: { 'T-2': { pass: false, reason: 'check `npm test` exited 1', evidence: '1 failing' } },
    });
    const result = await runMergeQueue(['T-1', 'T-2', 'T-3'], steps);
    expect(log).not.toContain('land T-2');
    expect(log).toContain('send back T-2: on the new base: check `npm test` exited 1');
    expect(result.merged).toEqual(['T-1', 'T-3']);
    expect(result.sentBack).toEqual([{ id: 'T-2', reason: 'check `npm test` exited 1' }]);
  });

  it('sends back a task whose rebase conflicts, naming the files, and never checks or lands it', async () => {
    const { steps, log } = scripted({
      rebase: { 'T-1': { kind: 'conflict', files: ['src/calc.js'], evidence: 'replayed with markers' } },
    });
    const result = await runMergeQueue(['T-1', 'T-2'], steps);
    expect(log.slice(0, 2)).toEqual(['rebase T-1', 'send back T-1: conflicts with the new base in src/calc.js']);
    expect(result.merged).toEqual(['T-2']);
  });

  it('sends back a task whose worktree is dirty as a dirty worktree, naming the files, not as a conflict', async () => {
    const { steps, log } = scripted({
      rebase: { 'T-1': { kind: 'dirty', files: ['src/a.js', 'b.txt'], evidence: 'uncommitted changes' } },
    });
    const result = await runMergeQueue(['T-1', 'T-2'], steps);
    expect(log.slice(0, 2)).toEqual(['rebase T-1', 'send back T-1: dirty worktree: src/a.js, b.txt']);
    expect(result.sentBack).toEqual([{ id: 'T-1', reason: 'dirty worktree: src/a.js, b.txt' }]);
    expect(result.merged).toEqual(['T-2']);
  });

  it('stops between tasks and after an aborted check, leaving the rest unreached', async () => {
    const a = scripted({ stopAfter: 'land T-1' });
    expect(await runMergeQueue(['T-1', 'T-2'], a.steps)).toMatchObject({ merged: ['T-1'], notReached: ['T-2'] });
    const b = scripted({ stopAfter: 'recheck T-2' });
    const result = await runMergeQueue(['T-1', 'T-2', 'T-3'], b.steps);
    expect(b.log).not.toContain('land T-2');
    expect(result).toMatchObject({ merged: ['T-1'], notReached: ['T-2', 'T-3'] });
  });

  it('stops at a merge refused for the checkout, reporting why', async () => {
    const { steps } = scripted({ refuse: 'T-2' });
    expect(await runMergeQueue(['T-1', 'T-2', 'T-3'], steps)).toMatchObject({
      merged: ['T-1'],
      refused: { id: 'T-2', reason: 'uncommitted changes' },
      notReached: ['T-3'],
    });
  });
});
