import { AnthropicError, APIConnectionError, APIConnectionTimeoutError, APIError } from '@anthropic-ai/sdk';
import { RateLimitError } from '../../domain/errors.js';
import { retryAfterOf } from './agent-presets/errors.js';

/**
 * Errors of the model path as the rest of loopfleet sees them. Invariant: no message built here contains
 * a credential — every text that came from the SDK or the server is redacted first, and SDK errors are
 * not kept as `cause` (their request details are not ours to pass on).
 */

export class ModelApiError extends Error {
  override readonly name = 'ModelApiError';
  constructor(
    message: string,
    /** HTTP status; null for a failure without one (connection, error event inside a stream) */
    readonly status: number | null,
    /** the API's error type, e.g. overloaded_error */
    readonly type: string | null,
  ) {
    super(message);
  }
}

export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret.length >= 4) out = out.split(secret).join('[redacted]');
  }
  return out;
}

function causeText(error: Error): string {
  const cause = (error as { cause?: unknown }).cause;
  if (cause instanceof Error) {
    const inner = (cause as { cause?: unknown }).cause;
    return inner instanceof Error ? `${cause.message} (${inner.message})` : cause.message;
  }
  return '';
}

/** The error to throw for a failed model call, after the SDK's own retries. */
export function toModelError(error: unknown, secrets: readonly string[]): Error {
  if (error instanceof APIError && !(error instanceof APIConnectionError)) {
    const status = typeof error.status === 'number' ? error.status : null;
    const type = error.type ?? null;
    const detail = error.apiMessage ?? error.message;
    const where = status === null ? 'in the response stream' : `HTTP ${status}`;
    if (status === 429 || status === 529 || type === 'rate_limit_error' || type === 'overloaded_error') {
      // Still limited after the SDK's retries: a pause for the fleet, not a failure of the task.
      const headers: Record<string, string> = {};
      (error.headers as Headers | undefined)?.forEach((value, name) => (headers[name.toLowerCase()] = value));
      const kind = status === 529 || type === 'overloaded_error' ? 'overloaded' : 'rate';
      return new RateLimitError(
        redact(`Messages API error (${where}${type ? `, ${type}` : ''}): ${detail}`, secrets),
        retryAfterOf(headers),
        kind,
      );
    }
    return new ModelApiError(
      redact(`Messages API error (${where}${type ? `, ${type}` : ''}): ${detail}`, secrets),
      status,
      type,
    );
  }
  if (error instanceof APIConnectionTimeoutError) {
    return new ModelApiError('Messages API: timed out waiting for the response headers', null, 'timeout');
  }
  if (error instanceof APIConnectionError) {
    const cause = causeText(error);
    return new ModelApiError(
      redact(`Messages API connection failed${cause ? `: ${cause}` : ''}`, secrets),
      null,
      'connection',
    );
  }
  if (error instanceof AnthropicError) {
    return new ModelApiError(redact(`Messages API stream failed: ${error.message}`, secrets), null, null);
  }
  if (error instanceof Error) {
    const copy = new Error(redact(error.message, secrets));
    copy.name = error.name;
    if (error.stack) copy.stack = redact(error.stack, secrets);
    return copy;
  }
  return new Error(redact(String(error), secrets));
}
