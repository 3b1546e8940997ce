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
 *   that takes over a job sees an abort sent before it took it.
 */
import type { Redis } from 'ioredis';
import type { ControlMessage, SequencedEvent, WorkerEvent } from '../../ports/attempt-queue.js';

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

function parseEvent(entry: Entry, key: string): SequencedEvent {
  const text = field(entry[1], 'e');
  if (text === undefined) throw new Error(`stream ${key}: entry ${entry[0]} has no event`);
  return { seq: seqOf(entry[0]), event: JSON.parse(text) as WorkerEvent };
}

/** The seq of the stream's last event, 0 when it has none. */
export async function lastSeq(redis: Redis, keys: JobKeys): Promise<number> {
  const last = (await redis.xrevrange(keys.events, '+', '-', 'COUNT', 1)) as Entry[];
  return last.length === 0 ? 0 : seqOf(last[0]![0]);
}

/** Appends event `seq`; a resend of an append that had landed is a no-op, any other clash an error. */
export async function appendEvent(redis: Redis, keys: JobKeys, seq: number, event: WorkerEvent): Promise<void> {
  const text = JSON.stringify(event);
  const id = `0-${seq}`;
  try {
    await redis.xadd(keys.events, id, 'e', text);
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
  if (last.length === 0 || !isFinal(parseEvent(last[0]!, keys.events).event)) return false;
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
  jobExists: () => Promise<boolean>,
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
        const item = parseEvent(entry, keys.events);
        if (item.seq < next) continue;
        next = item.seq + 1;
        yield item;
        if (isFinal(item.event)) return;
      }
      // Quiet for a whole block: a job that is gone (Redis restarted without its data, the job removed)
      // will never say more, so its reader is told once, as the job's end, rather than waiting forever.
      if (!fromPending && entries.length === 0 && !(await jobExists())) {
        yield {
          seq: next,
          event: {
            kind: 'failed',
            error: {
              kind: 'error',
              message: `job ${keys.events.slice(keys.events.indexOf(':ev:') + 4)} is no longer in Redis (restarted without its data?): the attempt is lost`,
            },
          },
        };
        return;
      }
    }
  } finally {
    signal.removeEventListener('abort', abort);
    reader.off('ready', onReconnect);
  }
}

/** whether an `abort` was sent to the job (its attempt was stopped, or replaced) */
export async function aborted(redis: Redis, keys: JobKeys): Promise<boolean> {
  const entries = (await redis.xrange(keys.control, '-', '+')) as Entry[];
  return entries.some((entry) => {
    const text = field(entry[1], 'm');
    if (text === undefined) return false;
    try {
      return (JSON.parse(text) as Partial<ControlMessage> | null)?.kind === 'abort';
    } catch {
      // Not a message this coordinator wrote: it stops nothing.
      return false;
    }
  });
}

export async function sendControl(redis: Redis, keys: JobKeys, message: ControlMessage): Promise<void> {
  await redis.xadd(keys.control, '*', 'm', JSON.stringify(message));
}

/** The job's control messages from the first, in order, on `reader` (a connection of its own), until `signal` aborts. */
export async function* readControl(reader: Redis, keys: JobKeys, signal: AbortSignal): AsyncGenerator<ControlMessage> {
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
        const text = field(fields, 'm');
        if (text !== undefined) yield JSON.parse(text) as ControlMessage;
      }
    }
  } finally {
    signal.removeEventListener('abort', abort);
  }
}
