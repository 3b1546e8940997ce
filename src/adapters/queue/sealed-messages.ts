/**
 * The envelopes of what crosses Redis, sealed with the fleet's keys ({@link FleetKeys}), and the checks
 * each reader makes before it acts on one.
 *
 * Invariants:
 * - a job is acted on only when its seal holds, it names the BullMQ job it sits in, and it is younger than
 *   a job may live ({@link openJob});
 * - a control message only when its seal holds, it names its job, and its nonce was not seen on that job
 *   before ({@link ControlGate}): a copied or replayed message is dropped;
 * - an event only when its seal holds, it names its job and the number of the stream entry it sits in, and
 *   it comes from the worker that claimed the job with the job's current lock ({@link EventGate}): another
 *   worker's events are dropped;
 * - whatever is dropped is said (what, and why) by the caller; nothing is dropped silently.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AttemptJob, ControlMessage, WorkerEvent } from '../../ports/attempt-queue.js';
import type { FleetKeys, Sealed } from './fleet-secret.js';
import type { EventCheck } from './redis-streams.js';

interface JobEnvelope {
  jobId: string;
  nonce: string;
  ts: number;
  job: AttemptJob;
}

interface ControlEnvelope {
  jobId: string;
  nonce: string;
  ts: number;
  message: ControlMessage;
}

interface EventEnvelope {
  jobId: string;
  seq: number;
  ts: number;
  worker: string;
  /** the lock token of the BullMQ job when this worker took it */
  token: string;
  event: WorkerEvent;
}

const nonce = () => randomBytes(16).toString('hex');

export function sealJob(keys: FleetKeys, job: AttemptJob, now = Date.now()): Sealed {
  return keys.seal('job', { jobId: job.jobId, nonce: nonce(), ts: now, job } satisfies JobEnvelope);
}

/** The job a BullMQ job's data holds, or why it is not one the coordinator made for this BullMQ job. */
export function openJob(
  keys: FleetKeys,
  data: unknown,
  jobId: string,
  maxAgeMs: number,
  now = Date.now(),
): { ok: true; job: AttemptJob } | { ok: false; why: string } {
  const d = (typeof data === 'object' && data !== null ? data : {}) as Partial<Sealed>;
  const opened = keys.open<JobEnvelope>('job', d.text, d.sig);
  if (!opened.ok) return opened;
  const e = opened.value;
  if (e.jobId !== jobId || e.job?.jobId !== jobId)
    return { ok: false, why: `it was signed for job ${String(e.jobId)}, not for this one (moved or replayed)` };
  if (typeof e.ts !== 'number' || now - e.ts > maxAgeMs)
    return { ok: false, why: 'it was signed longer ago than a job lives (replayed)' };
  return { ok: true, job: e.job };
}

export function sealControl(keys: FleetKeys, jobId: string, message: ControlMessage, now = Date.now()): Sealed {
  return keys.seal('control', { jobId, nonce: nonce(), ts: now, message } satisfies ControlEnvelope);
}

/** whether `sealed` is one of the coordinator's control messages for `jobId` */
export function openControl(keys: FleetKeys, jobId: string, sealed: Sealed): ControlMessage | null {
  const opened = keys.open<ControlEnvelope>('control', sealed.text, sealed.sig);
  return opened.ok && opened.value.jobId === jobId ? opened.value.message : null;
}

/** A worker's check of one job's control messages: each of the coordinator's messages once. */
export class ControlGate {
  readonly #keys: FleetKeys;
  readonly #jobId: string;
  readonly #seen = new Set<string>();

  constructor(keys: FleetKeys, jobId: string) {
    this.#keys = keys;
    this.#jobId = jobId;
  }

  check(sealed: Sealed): { message: ControlMessage } | { dropped: string } {
    const opened = this.#keys.open<ControlEnvelope>('control', sealed.text, sealed.sig);
    if (!opened.ok) return { dropped: opened.why };
    const e = opened.value;
    if (e.jobId !== this.#jobId) return { dropped: `it was signed for job ${String(e.jobId)} (copied)` };
    if (typeof e.nonce !== 'string' || this.#seen.has(e.nonce)) return { dropped: 'it was seen before (replayed)' };
    this.#seen.add(e.nonce);
    return { message: e.message };
  }
}

export function sealEvent(
  keys: FleetKeys,
  at: { jobId: string; seq: number; worker: string; token: string },
  event: WorkerEvent,
  now = Date.now(),
): Sealed {
  return keys.seal('event', { ...at, ts: now, event } satisfies EventEnvelope);
}

export interface EventGateDeps {
  keys: FleetKeys;
  jobId: string;
  /** the job's lock token now, null when no worker holds it (the job finished or waits) */
  lockToken: () => Promise<string | null>;
  /** the sealed events before `seq`, for a follower that starts after the job's claim was applied */
  history: (seq: number) => Promise<Array<[number, Sealed]>>;
  /** the sealed events after `seq` written so far */
  after: (seq: number) => Promise<Array<[number, Sealed]>>;
}

/** How often {@link EventGate} looks again at a stream whose next claim it waits for. */
const CLAIM_POLL_MS = 25;

/** The coordinator's check of one job's events: sealed, in place, and from the worker that holds the job. */
export class EventGate {
  readonly #d: EventGateDeps;
  #holder: { worker: string; token: string } | null = null;
  #primed = false;

  constructor(deps: EventGateDeps) {
    this.#d = deps;
  }

  readonly check: EventCheck = async (seq, sealed) => {
    const e = this.#open(seq, sealed);
    if (typeof e === 'string') return { dropped: e };
    if (!this.#primed) {
      this.#primed = true;
      // Events applied before this follower started (a coordinator started again) name the holder.
      if (this.#holder === null && e.event.kind !== 'claimed')
        for (const [n, s] of await this.#d.history(seq)) {
          const earlier = this.#open(n, s);
          if (typeof earlier !== 'string' && earlier.event.kind === 'claimed')
            this.#holder = { worker: earlier.worker, token: earlier.token };
        }
    }
    // A claim (or the first event of a follower that knows no holder yet) names the job's holder.
    if (e.event.kind === 'claimed' || this.#holder === null) {
      // A claim read while another token holds the lock is kept only as history: a later claim in the stream
      // shows the job moved on since (the claimant died or handed it back); else the claimant never held it.
      if (!(await this.#heldWhenClaimed(seq, e.token)))
        return { dropped: `worker ${e.worker} claimed the job without holding its lock` };
      this.#holder = { worker: e.worker, token: e.token };
      return { event: e.event };
    }
    if (e.worker !== this.#holder.worker || e.token !== this.#holder.token)
      return { dropped: `it comes from worker ${e.worker}, which does not hold the job (${this.#holder.worker} does)` };
    return { event: e.event };
  };

  /**
   * Whether the claim at `seq`, made with lock `token`, was made while it held the lock. Yes when it holds it
   * now (or nobody does); when another token does, the stream decides, so a reader that is early waits for it:
   * a later claim by another token means the job moved on since (the claimant died or handed it back), a
   * later event of the lock's holder that is not a claim means the holder had claimed before — this claim is
   * not its own and never held the lock.
   */
  async #heldWhenClaimed(seq: number, token: string): Promise<boolean> {
    for (;;) {
      const lock = await this.#d.lockToken();
      if (lock === null || lock === token) return true;
      for (const [n, s] of await this.#d.after(seq)) {
        const later = this.#open(n, s);
        if (typeof later === 'string' || later.token === token) continue;
        if (later.event.kind === 'claimed') return true;
        if (later.token === lock) return false;
      }
      await sleep(CLAIM_POLL_MS);
    }
  }

  #open(seq: number, sealed: { text: string | undefined; sig: string | undefined }): EventEnvelope | string {
    const opened = this.#d.keys.open<EventEnvelope>('event', sealed.text, sealed.sig);
    if (!opened.ok) return opened.why;
    const e = opened.value;
    if (e.jobId !== this.#d.jobId) return `it was signed for job ${String(e.jobId)} (copied)`;
    if (e.seq !== seq) return `it was signed as event ${String(e.seq)}, not ${seq} (moved or replayed)`;
    if (typeof e.worker !== 'string' || typeof e.token !== 'string' || typeof e.event !== 'object' || e.event === null)
      return 'its envelope is incomplete';
    return e;
  }
}
