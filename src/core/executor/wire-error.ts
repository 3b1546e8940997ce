/**
 * Errors across the wire between a worker and the coordinator: the class by name and what it needs, so the
 * coordinator settles a worker's error exactly as the local path would settle the same error thrown in
 * process. What a worker sends is untrusted: a detail that does not fit its class makes a plain Error.
 */
import {
  GateError,
  RateLimitError,
  RefusedError,
  ResourceLimitError,
  StopError,
  type LimitCode,
} from '../../domain/errors.js';
import type { GateName } from '../../domain/types.js';
import type { WireError } from '../../ports/attempt-queue.js';

/** An error message from a worker is shown and stored: bounded like any other reason. */
const MAX_MESSAGE = 4_000;

const GATES: readonly GateName[] = [
  'attempts',
  'tokens',
  'time',
  'cost',
  'no-progress',
  'fleet_tokens',
  'fleet_cost',
  'fleet_time',
];
const LIMIT_KINDS: readonly RateLimitError['kind'][] = ['rate', 'usage', 'overloaded'];
const LIMIT_CODES: readonly LimitCode[] = ['EMFILE', 'ENFILE', 'ENOMEM'];

export function toWireError(error: unknown): WireError {
  if (error instanceof GateError)
    return { kind: 'gate', message: error.message, detail: { gate: error.gate, scope: error.scope } };
  if (error instanceof StopError) return { kind: 'stop', message: error.message };
  if (error instanceof RateLimitError)
    return { kind: 'rate-limit', message: error.message, detail: { resetAt: error.resetAt, limit: error.kind } };
  const limit = ResourceLimitError.of(error);
  if (limit !== null) return { kind: 'resource-limit', message: limit.message, detail: { code: limit.code } };
  if (error instanceof RefusedError) return { kind: 'refused', message: error.message };
  return { kind: 'error', message: error instanceof Error ? error.message : String(error) };
}

/** The error the local path would have thrown; anything malformed is a plain Error saying what came. */
export function fromWireError(wire: WireError): Error {
  const message = String(wire.message).slice(0, MAX_MESSAGE);
  const detail = wire.detail ?? {};
  switch (wire.kind) {
    case 'gate': {
      const gate = detail.gate as GateName;
      const scope = detail.scope;
      if (GATES.includes(gate) && (scope === 'task' || scope === 'fleet')) return new GateError(gate, scope, message);
      return new Error(`a worker reported a gate it cannot name: ${message}`);
    }
    case 'stop':
      return new StopError(message);
    case 'rate-limit': {
      const resetAt = detail.resetAt;
      const kind = detail.limit as RateLimitError['kind'];
      const at = typeof resetAt === 'number' && Number.isFinite(resetAt) ? resetAt : null;
      return new RateLimitError(message, at, LIMIT_KINDS.includes(kind) ? kind : 'rate');
    }
    case 'resource-limit': {
      const code = detail.code as LimitCode;
      return LIMIT_CODES.includes(code) ? new ResourceLimitError(code) : new Error(message);
    }
    case 'refused':
      return new RefusedError(message);
    default:
      return new Error(message);
  }
}
