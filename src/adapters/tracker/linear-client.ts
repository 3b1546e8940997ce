import { setTimeout as sleep } from 'node:timers/promises';
import { ForgeError, ForgeRateLimitError } from '../../ports/forge.js';
import { DEFAULT_FORGE_TIMEOUT_MS, redact } from '../forge/text.js';

/**
 * Linear's GraphQL API over plain `fetch`: one POST per operation, the documents written out in
 * {@link LinearTracker}. Linear's own SDK (@linear/sdk) is not a dependency: the handful of operations
 * loopfleet needs are plain JSON, and the SDK's lazy model objects would hide how many requests a pass makes.
 *
 * Invariants: the key travels only as the `Authorization` header (a personal API key is sent as it is,
 * without `Bearer`); a rate limit (`RATELIMITED`, HTTP 400 or 429) waits until
 * `X-RateLimit-Requests-Reset` (epoch ms), at most `maxWaitSeconds` and `maxRetries` times per call, then
 * throws a ForgeRateLimitError; a 5xx or a dropped connection is retried twice with a short backoff, but
 * never for an operation that creates something (it may have been done); every error's message has the key
 * redacted and no `cause`.
 */

export const DEFAULT_LINEAR_API = 'https://api.linear.app/graphql';
const SERVER_ERROR_RETRIES = 2;

export interface LinearClientOptions {
  key: string;
  /** LINEAR_API_URL: the GraphQL endpoint, `https://api.linear.app/graphql` by default */
  apiUrl?: string;
  timeoutMs?: number;
  signal?: AbortSignal;
  maxRetries?: number;
  maxWaitSeconds?: number;
  /** milliseconds per second the server names: 1000 in use; tests shorten the waits, never skip them */
  msPerSecond?: number;
}

/** A Linear answer that is not a rate limit: the HTTP status and Linear's error code (`AUTHENTICATION_ERROR`, …). */
export class LinearError extends ForgeError {
  readonly code: string | null;
  constructor(message: string, status: number | null, code: string | null) {
    super(message, status);
    this.name = 'LinearError';
    this.code = code;
  }

  /** the key was refused: no retry, and a run says so rather than running without its tracker */
  get refusedKey(): boolean {
    return this.status === 401 || this.code === 'AUTHENTICATION_ERROR';
  }
}

interface GraphQLError {
  message?: unknown;
  extensions?: { code?: unknown; userPresentableMessage?: unknown };
}

export class LinearClient {
  readonly #url: string;
  readonly #key: string;
  readonly #maxRetries: number;
  readonly #maxWait: number;
  readonly #msPerSecond: number;
  readonly #timeoutMs: number;
  readonly #signal: AbortSignal | undefined;

  constructor(options: LinearClientOptions) {
    this.#url = options.apiUrl ?? DEFAULT_LINEAR_API;
    this.#key = options.key;
    this.#maxRetries = options.maxRetries ?? 2;
    this.#maxWait = options.maxWaitSeconds ?? 60;
    this.#msPerSecond = options.msPerSecond ?? 1000;
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_FORGE_TIMEOUT_MS;
    this.#signal = options.signal;
  }

  /**
   * One operation; `creates` when repeating it after a failure on the way could do it twice. The answer's
   * `data`, or a LinearError naming `what` with Linear's first error.
   */
  async request<T>(what: string, query: string, variables: Record<string, unknown>, creates = false): Promise<T> {
    let limited = 0;
    let failed = 0;
    for (;;) {
      let response: Response;
      try {
        response = await fetch(this.#url, {
          method: 'POST',
          headers: {
            authorization: this.#key,
            'content-type': 'application/json',
            accept: 'application/json',
            'user-agent': 'loopfleet',
          },
          body: JSON.stringify({ query, variables }),
          signal: AbortSignal.any([
            AbortSignal.timeout(this.#timeoutMs),
            ...(this.#signal === undefined ? [] : [this.#signal]),
          ]),
          redirect: 'error',
        });
      } catch (error) {
        if (this.#signal?.aborted === true) throw this.#error(what, null, null, 'interrupted');
        if (!creates && failed++ < SERVER_ERROR_RETRIES) {
          await sleep(failed * failed * this.#msPerSecond);
          continue;
        }
        throw this.#error(what, null, null, error instanceof Error ? error.message : String(error));
      }
      const raw = await response.text();
      const body = parse(raw);
      const first = body?.errors?.[0];
      const code = typeof first?.extensions?.code === 'string' ? first.extensions.code : null;
      const message = typeof first?.message === 'string' ? first.message : response.statusText;
      if (code === 'RATELIMITED' || response.status === 429) {
        const reset = Number(response.headers.get('x-ratelimit-requests-reset'));
        const retryAt = Number.isFinite(reset) && reset > 0 ? reset : Date.now() + 60_000;
        const waitSeconds = Math.max(0, Math.ceil((retryAt - Date.now()) / 1000));
        if (limited++ < this.#maxRetries && waitSeconds <= this.#maxWait) {
          await sleep(Math.max(1, waitSeconds) * this.#msPerSecond);
          continue;
        }
        throw new ForgeRateLimitError(
          redact(`Linear ${what}: rate limited until ${new Date(retryAt).toISOString()} (${message})`, [this.#key]),
          retryAt,
        );
      }
      if (response.status >= 500 && !creates && failed++ < SERVER_ERROR_RETRIES) {
        await sleep(failed * failed * this.#msPerSecond);
        continue;
      }
      if (first !== undefined || !response.ok || body?.data == null)
        throw this.#error(what, response.ok ? null : response.status, code, message || 'no data');
      return body.data as T;
    }
  }

  #error(what: string, status: number | null, code: string | null, message: string): LinearError {
    const prefix = status === null ? '' : `${status} `;
    const named = code === null ? '' : ` (${code})`;
    return new LinearError(
      redact(`Linear ${what}: ${prefix}${message}${named}`.slice(0, 500), [this.#key]),
      status,
      code,
    );
  }
}

function parse(raw: string): { data?: unknown; errors?: GraphQLError[] } | null {
  try {
    const parsed = JSON.parse(raw) as unknown;
    return typeof parsed === 'object' && parsed !== null
      ? (parsed as { data?: unknown; errors?: GraphQLError[] })
      : null;
  } catch {
    // Not JSON (a proxy's HTML page): the caller reports the HTTP status, or "no data" for a 200.
    return null;
  }
}
