/**
 * A worker's events as the coordinator takes them: untrusted JSON checked against the shape the local
 * pipeline's observer calls have, before anything of it reaches the lifecycle, the books or a screen. A
 * malformed event is an error naming the job and what was wrong; it is never applied in part.
 */
import { PHASES, ROLES, type AttemptOutcome, type Phase, type Role, type Usage } from '../../domain/types.js';
import type { AttemptResult } from '../../domain/attempt-result.js';
import type { AgentEvent } from '../../ports/model.js';
import type { WireError, WorkerEvent } from '../../ports/attempt-queue.js';

const OUTCOMES: readonly AttemptOutcome[] = [
  'verified',
  'setup-failed',
  'check-failed',
  'guard-failed',
  'vetoed',
  'gate',
  'error',
  'interrupted',
  'unchanged',
];
const WIRE_KINDS: readonly WireError['kind'][] = ['gate', 'stop', 'rate-limit', 'resource-limit', 'refused', 'error'];
const COMMIT = /^[0-9a-f]{40}([0-9a-f]{24})?$/;
/** a worker id is shown on every task row: short, and printable ASCII only */
const WORKER_ID = /^[\x21-\x7e]{1,120}$/;

/** More than any one model call costs: a report above it is a worker's error or a forgery, never booked. */
const MAX_CALL_USD = 10_000;

export class MalformedEventError extends Error {
  override readonly name = 'MalformedEventError';
}

type Json = Record<string, unknown>;

function object(value: unknown, what: string): Json {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new MalformedEventError(`${what} is not an object`);
  return value as Json;
}

function text(value: unknown, what: string): string {
  if (typeof value !== 'string') throw new MalformedEventError(`${what} is not a string`);
  return value;
}

function textOrNull(value: unknown, what: string): string | null {
  return value === null || value === undefined ? null : text(value, what);
}

function count(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0)
    throw new MalformedEventError(`${what} is not a count`);
  return value;
}

function oneOf<T extends string>(value: unknown, allowed: readonly T[], what: string): T {
  if (!allowed.includes(value as T))
    throw new MalformedEventError(`${what} ${JSON.stringify(value)} is none of ${allowed.join(', ')}`);
  return value as T;
}

function commit(value: unknown, what: string): string {
  const c = text(value, what);
  if (!COMMIT.test(c)) throw new MalformedEventError(`${what} is not a commit id`);
  return c;
}

function usage(value: unknown): Usage {
  const u = object(value, 'usage');
  return {
    input: count(u.input, 'usage.input'),
    output: count(u.output, 'usage.output'),
    cacheWrite: count(u.cacheWrite, 'usage.cacheWrite'),
    cacheRead: count(u.cacheRead, 'usage.cacheRead'),
  };
}

function agentEvent(value: unknown): AgentEvent {
  const e = object(value, 'agent event');
  switch (e.type) {
    case 'text':
      return { type: 'text', text: text(e.text, 'text') };
    case 'tool':
      return { type: 'tool', name: text(e.name, 'tool name'), input: text(e.input, 'tool input') };
    case 'tool-result':
      return {
        type: 'tool-result',
        name: text(e.name, 'tool name'),
        output: text(e.output, 'tool output'),
        isError: e.isError === true,
      };
    case 'usage': {
      const cost = e.costUsd;
      if (cost !== undefined && (typeof cost !== 'number' || !Number.isFinite(cost) || cost < 0 || cost > MAX_CALL_USD))
        throw new MalformedEventError(`usage costUsd is not the price of one call (0 to ${MAX_CALL_USD} dollars)`);
      return {
        type: 'usage',
        usage: usage(e.usage),
        model: text(e.model, 'usage model'),
        ...(cost === undefined ? {} : { costUsd: cost }),
      };
    }
    default:
      throw new MalformedEventError(`agent event type ${JSON.stringify(e.type)} is unknown`);
  }
}

function list(value: unknown, what: string): unknown[] {
  if (!Array.isArray(value)) throw new MalformedEventError(`${what} is not a list`);
  return value;
}

/** The parts of a result the coordinator decides on are checked; check and baseline records keep their shape checks light. */
function result(value: unknown): AttemptResult {
  const r = object(value, 'result');
  const records = (v: unknown, what: string) =>
    list(v ?? [], what).map((x, i) => object(x, `${what}[${i}]`)) as never[];
  const verdict = r.verdict === null || r.verdict === undefined ? null : object(r.verdict, 'verdict');
  const waiting = r.waitingFor === undefined ? undefined : object(r.waitingFor, 'waitingFor');
  return {
    outcome: oneOf(r.outcome, OUTCOMES, 'outcome'),
    reason: textOrNull(r.reason, 'reason'),
    evidence: textOrNull(r.evidence, 'evidence'),
    plan: textOrNull(r.plan, 'plan'),
    setup: r.setup === null || r.setup === undefined ? null : (object(r.setup, 'setup') as never),
    check: r.check === null || r.check === undefined ? null : (object(r.check, 'check') as never),
    guard: list(r.guard ?? [], 'guard').map((g, i) => text(g, `guard[${i}]`)),
    verdict:
      verdict === null
        ? null
        : {
            pass: verdict.pass === true,
            reasons: list(verdict.reasons ?? [], 'verdict reasons').map((x, i) => text(x, `verdict reason ${i}`)),
          },
    commit: r.commit === null || r.commit === undefined ? null : commit(r.commit, 'result commit'),
    diffStat: textOrNull(r.diffStat, 'diffStat'),
    checks: records(r.checks, 'checks'),
    baseline: records(r.baseline, 'baseline'),
    proof: r.proof === null || r.proof === undefined ? null : (object(r.proof, 'proof') as never),
    ...(r.awaitingApproval === true ? { awaitingApproval: true as const } : {}),
    ...(waiting === undefined
      ? {}
      : {
          waitingFor: {
            id: text(waiting.id, 'waitingFor id'),
            files: list(waiting.files, 'waitingFor files').map((f, i) => text(f, `waitingFor file ${i}`)),
          },
        }),
  };
}

/** The event as the port's type has it, or MalformedEventError saying what is wrong. */
export function checkEvent(value: unknown): WorkerEvent {
  const e = object(value, 'event');
  switch (e.kind) {
    case 'claimed': {
      const w = object(e.worker, 'worker');
      const id = text(w.id, 'worker id');
      if (!WORKER_ID.test(id)) throw new MalformedEventError('worker id is not 1–120 printable characters');
      return {
        kind: 'claimed',
        worker: { id, host: text(w.host, 'worker host'), concurrency: count(w.concurrency, 'worker concurrency') },
      };
    }
    case 'phase':
      return { kind: 'phase', phase: oneOf<Phase>(e.phase, PHASES, 'phase') };
    case 'agent':
      return {
        kind: 'agent',
        role: oneOf<Role>(e.role, ROLES, 'role'),
        model: text(e.model, 'model'),
        event: agentEvent(e.event),
      };
    case 'output':
      return { kind: 'output', phase: oneOf<Phase>(e.phase, PHASES, 'phase'), chunk: text(e.chunk, 'output') };
    case 'notice':
      return {
        kind: 'notice',
        message: text(e.message, 'notice'),
        level: oneOf(e.level, ['info', 'warn'] as const, 'notice level'),
      };
    case 'planned':
      return { kind: 'planned', plan: text(e.plan, 'plan'), request: text(e.request, 'plan request') };
    case 'pushed':
      return { kind: 'pushed', branch: text(e.branch, 'pushed branch'), commit: commit(e.commit, 'pushed commit') };
    case 'result':
      return { kind: 'result', result: result(e.result) };
    case 'failed': {
      const f = object(e.error, 'error');
      const detail = f.detail === undefined ? undefined : object(f.detail, 'error detail');
      return {
        kind: 'failed',
        error: {
          kind: oneOf(f.kind, WIRE_KINDS, 'error kind'),
          message: text(f.message, 'error message'),
          ...(detail === undefined ? {} : { detail }),
        },
      };
    }
    default:
      throw new MalformedEventError(`event kind ${JSON.stringify(e.kind)} is unknown`);
  }
}
