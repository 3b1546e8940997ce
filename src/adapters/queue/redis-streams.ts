/**
 * The two Redis Streams of one attempt job: its events (worker → coordinator) and its control messages
 * (coordinator → worker).
 *
 * Invariants:
 * - an event's stream entry id is `0-<seq>`: Redis refuses an id not above the last one, so the stream is
 *   gap-free and ordered by seq by construction, a command resent after a lost reply is recognised (the same
 *   entry is there already), and two workers can never both write seq N;
 * - the coordinator reads events through one consumer group and acknowledges an entry only after applying
 *   it, so what it was sent but did not acknowledge (a reply lost in an outage, a coordinator that died) is
 *   delivered again from the group's pending list;
 * - control messages are read from the start of their stream by whichever worker runs the job, so a worker
 *   that takes over a job sees an abort sent before it took it;
 * - every entry is sealed ({@link Sealed}: fields `e`/`m` the text, `s` the signature); what this module
 *   reads goes through the reader's check ({@link EventCheck}) before it is yielded, and an entry the check
 *   refuses is acknowledged (never delivered again) and reported, never yielded.
 */
import type { Redis } from 'ioredis';
import type { SequencedEvent, WorkerEvent } from '../../ports/attempt-queue.js';
import type { Sealed } from './fleet-secret.js';

export const GROUP = 'coordinator';
const CONSUMER = 'coordinator';
const BLOCK_MS = 2_000;

export interface JobKeys {
  events: string;
  control: string;
}

export function jobKeys(prefix: string, jobId: string): JobKeys {
  return { events: `${prefix}:ev:${jobId}`, control: `${prefix}:ctl:${jobId}` };
}

export function isFinal(event: WorkerEvent): boolean {
  return event.kind === 'result' || event.kind === 'failed';
}

type Entry = [id: string, fields: string[]];
type StreamReply = Array<[key: string, entries: Entry[]]> | null;

function field(fields: string[], name: string): string | undefined {
  for (let i = 0; i + 1 < fields.length; i += 2) if (fields[i] === name) return fields[i + 1];
  return undefined;
}

function seqOf(id: string): number {
  return Number(id.slice(id.indexOf('-') + 1));
}

/** An entry's kind as its envelope says (unchecked: for `settled` only), or null when it is not readable. */
function kindOf(entry: Entry): string | null {
  try {
    const envelope = JSON.parse(field(entry[1], 'e') ?? 'null') as { event?: { kind?: unknown } } | null;
    return typeof envelope?.event?.kind === 'string' ? envelope.event.kind : null;
  } catch {
    return null;
  }
}

/** The reader's check of one entry: the event it may apply, or why the entry is dropped. */
export type EventCheck = (
  seq: number,
  sealed: { text: string | undefined; sig: string | undefined },
) => Promise<{ event: WorkerEvent } | { dropped: string }>;

/** The seq of the stream's last event, 0 when it has none. */
export async function lastSeq(redis: Redis, keys: JobKeys): Promise<number> {
  const last = (await redis.xrevrange(keys.events, '+', '-', 'COUNT', 1)) as Entry[];
  return last.length === 0 ? 0 : seqOf(last[0]![0]);
}

/** Appends event `seq`; a resend of an append that had landed is a no-op, any other clash an error. */
export async function appendEvent(redis: Redis, keys: JobKeys, seq: number, sealed: Sealed): Promise<void> {
  const { text } = sealed;
  const id = `0-${seq}`;
  try {
    await redis.xadd(keys.events, id, 'e', text, 's', sealed.sig);
  } catch (error) {
    if (!/equal or smaller/i.test((error as Error).message)) throw error;
    const there = (await redis.xrange(keys.events, id, id)) as Entry[];
    if (there.length === 1 && field(there[0]![1], 'e') === text) return;
    throw new Error(`event ${seq} of ${keys.events} was written by another worker: this worker no longer runs the job`);
  }
}

async function ensureGroup(redis: Redis, keys: JobKeys): Promise<void> {
  try {
    await redis.xgroup('CREATE', keys.events, GROUP, '0', 'MKSTREAM');
  } catch (error) {
    if (!(error as Error).message.startsWith('BUSYGROUP')) throw error;
  }
}

/** Both streams of a finished job go after `ms` (the coordinator reads the final event well before). */
export async function expireStreams(redis: Redis, keys: JobKeys, ms: number): Promise<void> {
  await redis.multi().pexpire(keys.events, ms).pexpire(keys.control, ms).exec();
}

export async function ackEvent(redis: Redis, keys: JobKeys, seq: number): Promise<void> {
  await redis.xack(keys.events, GROUP, `0-${seq}`);
}

/** whether the coordinator has acknowledged the job's final event already (nothing is left to read) */
export async function settled(redis: Redis, keys: JobKeys): Promise<boolean> {
  const last = (await redis.xrevrange(keys.events, '+', '-', 'COUNT', 1)) as Entry[];
  const kind = last.length === 0 ? null : kindOf(last[0]!);
  if (kind !== 'result' && kind !== 'failed') return false;
  const groups = (await redis.xinfo('GROUPS', keys.events)) as unknown[][];
  const group = groups.map((g) => Object.fromEntries(pairs(g))).find((g) => g.name === GROUP);
  return group !== undefined && group['last-delivered-id'] === last[0]![0] && Number(group.pending) === 0;
}

function pairs(flat: unknown[]): Array<[string, unknown]> {
  const out: Array<[string, unknown]> = [];
  for (let i = 0; i + 1 < flat.length; i += 2) out.push([String(flat[i]), flat[i + 1]]);
  return out;
}

/**
 * The job's events on `reader` (a connection of its own: it blocks), from the first one not acknowledged,
 * each once per call; after a reconnect the group's pending list is read again so that an entry whose
 * reply was lost comes back. Ends after the final event was yielded (and the caller came back for more,
 * i.e. acknowledged it), or when `signal` aborts.
 */
export async function* readEvents(
  reader: Redis,
  keys: JobKeys,
  signal: AbortSignal,
  /** why the job will never say more (gone from Redis, failed in the queue), or null while it may */
  ended: () => Promise<string | null>,
  check: EventCheck,
  onDrop: (seq: number, why: string) => void,
): AsyncGenerator<SequencedEvent> {
  const abort = () => reader.disconnect();
  signal.addEventListener('abort', abort, { once: true });
  let recheck = true;
  const onReconnect = () => (recheck = true);
  reader.on('ready', onReconnect);
  try {
    await ensureGroup(reader, keys);
    if (await settled(reader, keys)) return;
    let next = 1;
    while (!signal.aborted) {
      let reply: StreamReply;
      const fromPending = recheck;
      recheck = false;
      try {
        reply = fromPending
          ? ((await reader.xreadgroup(
              'GROUP',
              GROUP,
              CONSUMER,
              'COUNT',
              100,
              'STREAMS',
              keys.events,
              '0',
            )) as StreamReply)
          : ((await reader.xreadgroup(
              'GROUP',
              GROUP,
              CONSUMER,
              'COUNT',
              100,
              'BLOCK',
              BLOCK_MS,
              'STREAMS',
              keys.events,
              '>',
            )) as StreamReply);
      } catch (error) {
        if (signal.aborted) return;
        // The group went with its stream (a cancelled job removed and enqueued again): make it anew.
        if ((error as Error).message.startsWith('NOGROUP')) {
          await ensureGroup(reader, keys);
          recheck = true;
          continue;
        }
        throw error;
      }
      const entries = reply?.[0]?.[1] ?? [];
      for (const entry of entries) {
        const seq = seqOf(entry[0]);
        if (seq < next) continue;
        next = seq + 1;
        const checked = await check(seq, { text: field(entry[1], 'e'), sig: field(entry[1], 's') });
        if ('dropped' in checked) {
          onDrop(seq, checked.dropped);
          await ackEvent(reader, keys, seq);
          continue;
        }
        yield { seq, event: checked.event };
        if (isFinal(checked.event)) return;
      }
      // Quiet for a whole block: a job that is gone (Redis restarted without its data, the job removed) or
      // failed in the queue will never say more, so its reader is told once, as the job's end.
      const why = !fromPending && entries.length === 0 ? await ended() : null;
      if (why !== null) {
        yield { seq: next, event: { kind: 'failed', error: { kind: 'error', message: why } } };
        return;
      }
    }
  } finally {
    signal.removeEventListener('abort', abort);
    reader.off('ready', onReconnect);
  }
}

/** The sealed entries of the job's events stream before `seq`, oldest first (a follower's history). */
export async function eventsBefore(redis: Redis, keys: JobKeys, seq: number): Promise<Array<[number, Sealed]>> {
  if (seq <= 1) return [];
  const entries = (await redis.xrange(keys.events, '-', `0-${seq - 1}`)) as Entry[];
  return entries.map((e) => [seqOf(e[0]), { text: field(e[1], 'e') ?? '', sig: field(e[1], 's') ?? '' }]);
}

/** The sealed entries of the job's events stream after `seq`, oldest first. */
export async function eventsAfter(redis: Redis, keys: JobKeys, seq: number): Promise<Array<[number, Sealed]>> {
  const entries = (await redis.xrange(keys.events, `0-${seq + 1}`, '+')) as Entry[];
  return entries.map((e) => [seqOf(e[0]), { text: field(e[1], 'e') ?? '', sig: field(e[1], 's') ?? '' }]);
}

/** The job's control messages as written (sealed), oldest first; `opened` says which are the coordinator's. */
export async function controlEntries(redis: Redis, keys: JobKeys): Promise<Sealed[]> {
  const entries = (await redis.xrange(keys.control, '-', '+')) as Entry[];
  return entries.map((e) => ({ text: field(e[1], 'm') ?? '', sig: field(e[1], 's') ?? '' }));
}

export async function sendControl(redis: Redis, keys: JobKeys, sealed: Sealed): Promise<void> {
  await redis.xadd(keys.control, '*', 'm', sealed.text, 's', sealed.sig);
}

/** The job's control messages from the first, in order, on `reader` (a connection of its own), until `signal` aborts. */
export async function* readControl(reader: Redis, keys: JobKeys, signal: AbortSignal): AsyncGenerator<Sealed> {
  const abort = () => reader.disconnect();
  signal.addEventListener('abort', abort, { once: true });
  let after = '0-0';
  try {
    while (!signal.aborted) {
      let reply: StreamReply;
      try {
        reply = (await reader.xread('COUNT', 100, 'BLOCK', BLOCK_MS, 'STREAMS', keys.control, after)) as StreamReply;
      } catch (error) {
        if (signal.aborted) return;
        throw error;
      }
      for (const [id, fields] of reply?.[0]?.[1] ?? []) {
        after = id;
        yield { text: field(fields, 'm') ?? '', sig: field(fields, 's') ?? '' };
      }
    }
  } finally {
    signal.removeEventListener('abort', abort);
  }
}
