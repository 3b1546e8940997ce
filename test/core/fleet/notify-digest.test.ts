import { describe, expect, it } from 'vitest';
import { kindOf, summaryPayload, wanted } from '../../../src/core/fleet/notify-digest.js';

describe('notify digest', () => {
  it('sends everything without notify_on, only the listed kinds with it', () => {
    const verified = { event: 'status' as const, id: 'T-1', status: 'verified' };
    const running = { event: 'status' as const, id: 'T-1', status: 'running' };
    const idle = { event: 'idle' as const, counts: {} };
    expect([verified, running, idle].map((p) => wanted(p, null))).toEqual([true, true, true]);
    expect([verified, running, idle].map((p) => wanted(p, ['verified', 'failed']))).toEqual([true, false, false]);
    expect(wanted(idle, ['idle'])).toBe(true);
    expect(kindOf(running)).toBeNull();
    expect(kindOf({ event: 'status', id: 'T-2', status: 'awaiting-approval' })).toBe('awaiting-approval');
  });

  it('summarises a finished run in one event', () => {
    const p = summaryPayload({
      counts: { verified: 3, failed: 1 },
      tokens: 1200,
      costUsd: 0.456,
      elapsedMs: 1000,
      reportPath: '/r.md',
      exitCode: 1,
    });
    expect(p).toMatchObject({ event: 'summary', reportPath: '/r.md', exitCode: 1 });
    expect(p.text).toBe('loopfleet: 3 verified, 0 merged, 1 failed, 0 conflict; 1.2k tokens, $0.46, 1s');
    expect(wanted(p, ['summary'])).toBe(true);
    expect(wanted(p, ['verified'])).toBe(false);
  });

  it('says the review capacity holds work back in the summary, and review is a kind of its own', () => {
    const review = { running: 0, waiting: 5, capacity: 5, held: true, peak: 5, heldMs: 3_600_000 };
    const p = summaryPayload({
      counts: { verified: 5 },
      tokens: 0,
      costUsd: 0,
      elapsedMs: 1000,
      reportPath: null,
      exitCode: 0,
      review,
    });
    expect(p.text).toBe(
      'loopfleet: 5 verified, 0 merged, 0 failed, 0 conflict; 0 tokens, $0.00, 1s; waiting for review: 5 of 5',
    );
    expect(p).toMatchObject({ review });
    const held = { event: 'review' as const, text: 'loopfleet: waiting for review: 5 of 5' };
    expect(kindOf(held)).toBe('review');
    expect([wanted(held, ['review']), wanted(held, ['idle'])]).toEqual([true, false]);
  });
});
