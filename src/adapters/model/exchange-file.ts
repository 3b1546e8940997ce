/**
 * The files of a recorded run (`--record DIR`, read back by `--replay DIR`): one `manifest.json` naming the
 * tasks the run was given, and one file per agent run, `<task>.a<attempt>.<role>.<n>.json`, holding what
 * the agent streamed, its answer and the change it made to the worktree.
 *
 * Invariants:
 * - a name is built only from a task id, an attempt number, a role and a sequence number that each match a
 *   strict pattern, so a name is one plain file in DIR: no separator, no `..`, nothing hidden;
 * - files are written new (O_EXCL|O_NOFOLLOW, {@link writeNew}) and read through O_NOFOLLOW: a link in DIR
 *   is refused, never followed; a file over its size cap is refused before it is read;
 * - what is read is validated against the schema below before anything of it is used.
 */
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { ROLES, type Role } from '../../domain/types.js';
import { formatBytes } from '../../core/text/format-units.js';
import { writeNew } from '../fs/nofollow.js';

export const EXCHANGE_VERSION = 1;
/** the largest exchange file a replay reads */
export const MAX_EXCHANGE_BYTES = 32_000_000;
/** the largest manifest a replay reads */
export const MAX_MANIFEST_BYTES = 4_000_000;
export const MANIFEST_FILE = 'manifest.json';

const ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export interface ExchangeKey {
  task: string;
  attempt: number;
  role: Role;
  /** 1 for the role's first run in this attempt, 2 for the next… */
  seq: number;
}

export function describeKey(key: ExchangeKey): string {
  return `${key.task} attempt ${key.attempt}, ${key.role} run ${key.seq}`;
}

/** The file name of `key`; throws when a part of it is not a plain name (a hostile task id). */
export function exchangeName(key: ExchangeKey): string {
  if (!ID.test(key.task) || key.task.includes('..'))
    throw new Error(`replay: task id '${key.task}' cannot name a recording file`);
  for (const n of [key.attempt, key.seq]) {
    if (!Number.isInteger(n) || n < 1 || n > 1_000_000) throw new Error(`replay: ${n} is not a run number`);
  }
  if (!(ROLES as readonly string[]).includes(key.role)) throw new Error(`replay: '${key.role}' is not a role`);
  return `${key.task}.a${key.attempt}.${key.role}.${key.seq}.json`;
}

const usage = z.object({
  input: z.number().nonnegative(),
  output: z.number().nonnegative(),
  cacheWrite: z.number().nonnegative(),
  cacheRead: z.number().nonnegative(),
});

/** One thing the agent did, in order: a model call starting (`call`), or one of its {@link AgentEvent}s. */
const step = z.discriminatedUnion('type', [
  z.object({ type: z.literal('call') }),
  z.object({ type: z.literal('text'), text: z.string() }),
  z.object({ type: z.literal('tool'), name: z.string(), input: z.string() }),
  z.object({ type: z.literal('tool-result'), name: z.string(), output: z.string(), isError: z.boolean() }),
  z.object({ type: z.literal('usage'), usage, model: z.string(), costUsd: z.number().nonnegative().optional() }),
]);
export type ExchangeStep = z.infer<typeof step>;

const failure = z.object({
  name: z.string(),
  message: z.string(),
  /** GateError's gate and scope, RateLimitError's reset and kind, AgentSetupError's reason */
  gate: z.string().optional(),
  scope: z.enum(['task', 'fleet']).optional(),
  resetAt: z.number().nullable().optional(),
  kind: z.string().optional(),
  reason: z.string().optional(),
});
export type ExchangeFailure = z.infer<typeof failure>;

const exchange = z.object({
  version: z.literal(EXCHANGE_VERSION),
  key: z.object({ task: z.string(), attempt: z.number(), role: z.enum(ROLES), seq: z.number() }),
  request: z.object({
    model: z.string(),
    access: z.enum(['read-only', 'write']),
    /** the task part of the prompt (markers, title, description, files), which the backlog decides */
    task: z.string(),
  }),
  steps: z.array(step).max(1_000_000),
  result: z
    .object({
      text: z.string(),
      turns: z.number(),
      stopReason: z.string(),
      reportedCostUsd: z.number().nonnegative().optional(),
    })
    .nullable(),
  failure: failure.nullable(),
  /** the binary patch of the worktree from the run's start to its end, '' when nothing changed */
  patch: z.string(),
});
export type Exchange = z.infer<typeof exchange>;

const manifest = z.object({
  version: z.literal(EXCHANGE_VERSION),
  tasks: z.array(z.object({ id: z.string(), task: z.string() })).max(100_000),
});
export type Manifest = z.infer<typeof manifest>;

/** Writes `value` as the new file `name` in `dir` (which must already exist); never over anything. */
export async function writeRecord(dir: string, name: string, value: Exchange | Manifest): Promise<void> {
  await writeNew(path.join(dir, name), `${JSON.stringify(value)}\n`, 0o600);
}

/** Reads the file `name` of `dir`: a regular file, no link, at most `cap` bytes; null when there is none. */
async function readCapped(dir: string, name: string, cap: number): Promise<string | null> {
  const file = path.join(dir, name);
  let handle;
  try {
    handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return null;
    if (code === 'ELOOP' || code === 'EMLINK') throw new Error(`replay: ${file} is a link: refused`);
    throw error;
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw new Error(`replay: ${file} is not a regular file: refused`);
    if (info.size > cap)
      throw new Error(
        `replay: ${file} is ${formatBytes(info.size)}, over the ${formatBytes(cap)} a recording file may be`,
      );
    const buffer = Buffer.alloc(info.size);
    const { bytesRead } = await handle.read(buffer, 0, info.size, 0);
    return buffer.subarray(0, bytesRead).toString('utf8');
  } finally {
    await handle.close();
  }
}

function parsed<T>(schema: z.ZodType<T>, text: string, file: string): T {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new Error(`replay: ${file} is not JSON: ${(error as Error).message}`);
  }
  const result = schema.safeParse(json);
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new Error(`replay: ${file} is not a recording: ${issue?.path.join('.') || '(top)'}: ${issue?.message}`);
  }
  return result.data;
}

/** The recorded exchange of `key` in `dir`, validated; null when the recording has none. */
export async function readExchange(dir: string, key: ExchangeKey): Promise<Exchange | null> {
  const name = exchangeName(key);
  const text = await readCapped(dir, name, MAX_EXCHANGE_BYTES);
  if (text === null) return null;
  const value = parsed(exchange, text, path.join(dir, name));
  const k = value.key;
  if (k.task !== key.task || k.attempt !== key.attempt || k.role !== key.role || k.seq !== key.seq)
    throw new Error(`replay: ${path.join(dir, name)} holds ${describeKey(k)}, not ${describeKey(key)}`);
  return value;
}

/** The manifest of the recording in `dir`; throws when there is none (DIR is not a recording). */
export async function readManifest(dir: string): Promise<Manifest> {
  const text = await readCapped(dir, MANIFEST_FILE, MAX_MANIFEST_BYTES);
  if (text === null) throw new Error(`replay: ${dir} holds no ${MANIFEST_FILE}: it is not a recorded run`);
  return parsed(manifest, text, path.join(dir, MANIFEST_FILE));
}
