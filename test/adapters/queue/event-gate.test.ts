/**
 * {@link EventGate} on a claim read while another token holds the job's lock: the stream decides whether the
 * claimant held the lock when it claimed, and a reader that is early waits for the stream instead of guessing.
 */
import { describe, expect, it } from 'vitest';
import { EventGate, sealEvent } from '../../../src/adapters/queue/sealed-messages.js';
import type { Sealed } from '../../../src/adapters/queue/fleet-secret.js';
import type { WorkerEvent } from '../../../src/ports/attempt-queue.js';
import { TEST_KEYS } from '../../helpers/fleet-secret.js';

const JOB = 'T-1:1';
const claimed = (id: string): WorkerEvent => ({
  kind: 'claimed',
  worker: { id, host: 'h', concurrency: 1 },
});
const phase: WorkerEvent = { kind: 'phase', phase: 'explore' };

/** A job's stream and lock as Redis would hold them, written by the test step by step. */
function stream() {
  const entries: Array<[number, Sealed]> = [];
  let lock: string | null = null;
  const gate = new EventGate({
    keys: TEST_KEYS,
    jobId: JOB,
    lockToken: async () => lock,
    history: async (seq) => entries.filter(([n]) => n < seq),
    after: async (seq) => entries.filter(([n]) => n > seq),
  });
  return {
    gate,
    lock: (token: string | null) => {
      lock = token;
    },
    write(worker: string, token: string, event: WorkerEvent): [number, Sealed] {
      const seq = entries.length + 1;
      const entry: [number, Sealed] = [seq, sealEvent(TEST_KEYS, { jobId: JOB, seq, worker, token }, event)];
      entries.push(entry);
      return entry;
    },
  };
}

describe('EventGate and a claim made under another lock', () => {
  it('waits for the stream when the lock has moved on but the new holder has not claimed yet: history, kept', async () => {
    const s = stream();
    const first = s.write('w1', 'lock-1', claimed('w1'));
    // w1 died; w2 took the lock and has not written its claim yet when the reader comes to w1's.
    s.lock('lock-2');
    let settled = false;
    const verdict = s.gate.check(...first).finally(() => {
      settled = true;
    });
    await new Promise((r) => setImmediate(r));
    expect(settled).toBe(false);
    s.write('w2', 'lock-2', claimed('w2'));
    expect(await verdict).toEqual({ event: claimed('w1') });
  });

  it("drops a claim written after the lock's holder had claimed and gone on", async () => {
    const s = stream();
    s.lock('lock-2');
    const real = s.write('w2', 'lock-2', claimed('w2'));
    expect(await s.gate.check(...real)).toEqual({ event: claimed('w2') });
    const forged = s.write('w9', 'lock-9', claimed('w9'));
    s.write('w2', 'lock-2', phase);
    expect(await s.gate.check(...forged)).toEqual({ dropped: 'worker w9 claimed the job without holding its lock' });
  });

  it('keeps a claim made under the lock it still holds', async () => {
    const s = stream();
    s.lock('lock-1');
    const first = s.write('w1', 'lock-1', claimed('w1'));
    expect(await s.gate.check(...first)).toEqual({ event: claimed('w1') });
  });
});
