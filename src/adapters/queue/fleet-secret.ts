/**
 * The fleet secret: what proves that a job, a control message, an event or a heartbeat in Redis was
 * written by the coordinator or by a worker of this fleet, and not by whoever else can write to Redis.
 *
 * Invariants:
 * - every message is sealed as `{ text, sig }`: `text` is the canonical JSON of an envelope (sorted keys)
 *   and `sig` is HMAC-SHA256 over the message's kind and `text` under the current secret; the kind is part
 *   of what is signed, so a signed event is never accepted as a job or a control message;
 * - a seal is checked against every secret given (the current one first, then previous ones: a rotation
 *   lets both sides change their secret one after the other) in constant time, and only a text whose seal
 *   holds is parsed;
 * - the secret itself is never printed, and nothing here logs.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { UsageError } from '../../domain/errors.js';

/** The kinds of sealed message; each is signed apart from the others. */
export type SealKind = 'job' | 'control' | 'event' | 'heartbeat';

export interface Sealed {
  text: string;
  sig: string;
}

export type Opened<T> = { ok: true; value: T } | { ok: false; why: string };

/** The shortest secret accepted: 128 bits as hex (`openssl rand -hex 32` gives 256). */
export const MIN_SECRET_CHARS = 32;
const DOMAIN = 'loopfleet/queue/v1';

/** JSON with every object's keys sorted, so two writers of the same value write the same bytes. */
export function canonical(value: unknown): string {
  return JSON.stringify(sorted(value));
}

function sorted(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sorted);
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    const v = (value as Record<string, unknown>)[key];
    if (v !== undefined) out[key] = sorted(v);
  }
  return out;
}

export class FleetKeys {
  readonly #secrets: Buffer[];

  /** `secrets`: the current one first, then those still accepted (a rotation under way). */
  constructor(secrets: readonly string[]) {
    if (secrets.length === 0) throw new Error('a fleet needs at least one secret');
    this.#secrets = secrets.map((s) => Buffer.from(s, 'utf8'));
  }

  /** how many secrets are accepted (1, or more during a rotation) */
  get accepted(): number {
    return this.#secrets.length;
  }

  seal(kind: SealKind, envelope: unknown): Sealed {
    const text = canonical(envelope);
    return { text, sig: this.#mac(this.#secrets[0]!, kind, text).toString('hex') };
  }

  /** The envelope of a sealed message, or why it is not one of this fleet's. */
  open<T>(kind: SealKind, text: unknown, sig: unknown): Opened<T> {
    if (typeof text !== 'string' || text === '') return { ok: false, why: 'it is not sealed (no text)' };
    if (typeof sig !== 'string' || !/^[0-9a-f]{64}$/.test(sig))
      return { ok: false, why: 'it is not signed with the fleet secret (no signature)' };
    const given = Buffer.from(sig, 'hex');
    if (!this.#secrets.some((s) => timingSafeEqual(this.#mac(s, kind, text), given)))
      return { ok: false, why: 'its signature does not match the fleet secret' };
    try {
      return { ok: true, value: JSON.parse(text) as T };
    } catch {
      return { ok: false, why: 'its signed text is not JSON' };
    }
  }

  #mac(secret: Buffer, kind: SealKind, text: string): Buffer {
    return createHmac('sha256', secret).update(`${DOMAIN}\n${kind}\n`).update(text).digest();
  }
}

/**
 * The fleet's secrets from `--queue-secret-file PATH` (one per line, the current one first) or else
 * `LOOPFLEET_QUEUE_SECRET` (several separated by commas or spaces); null when neither is given.
 */
export function readFleetSecret(env: NodeJS.ProcessEnv, file: string | undefined): FleetKeys | null {
  let text: string;
  let from: string;
  if (file !== undefined) {
    from = `--queue-secret-file ${file}`;
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      throw new UsageError(`${from}: cannot read it (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
    }
  } else {
    const value = env.LOOPFLEET_QUEUE_SECRET;
    if (value === undefined || value.trim() === '') return null;
    from = 'LOOPFLEET_QUEUE_SECRET';
    text = value;
  }
  const secrets = text
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter((s) => s !== '' && !s.startsWith('#'));
  if (secrets.length === 0) throw new UsageError(`${from} holds no secret`);
  const short = secrets.findIndex((s) => s.length < MIN_SECRET_CHARS);
  if (short >= 0)
    throw new UsageError(
      `${from}: secret ${short + 1} is shorter than ${MIN_SECRET_CHARS} characters (make one with: openssl rand -hex 32)`,
    );
  return new FleetKeys(secrets);
}
