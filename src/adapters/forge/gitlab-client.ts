import { setTimeout as sleep } from 'node:timers/promises';
import { ForgeError, ForgeRateLimitError } from '../../ports/forge.js';
import { DEFAULT_FORGE_TIMEOUT_MS, redact } from './text.js';

/**
 * GitLab's REST API v4 over plain `fetch`. GitLab publishes no official Node client, and the community
 * ones (gitbeaker) track the API at their own pace; the few endpoints loopfleet needs are plain JSON.
 *
 * Invariants: the token travels only as the `PRIVATE-TOKEN` header; a 429 (or a 403 naming a rate limit)
 * waits as `Retry-After` or `RateLimit-Reset` says, at most `maxWaitSeconds` and `maxRetries` times per call,
 * then throws a ForgeRateLimitError; a 5xx or a dropped connection is retried twice with a short backoff
 * (not for a POST, which may have been done);
 * every error's message has the token redacted and no `cause`.
 */

export const DEFAULT_GITLAB_API = 'https://gitlab.com/api/v4';
const SERVER_ERROR_RETRIES = 2;

export interface GitLabClientOptions {
  token: string;
  /** how long one request may take before it is abandoned (default {@link DEFAULT_FORGE_TIMEOUT_MS}) */
  timeoutMs?: number;
  /** ends every request in flight and refuses new ones: a signal to the process */
  signal?: AbortSignal;
  /** GITLAB_API_URL: `https://gitlab.com/api/v4`, or a self-hosted GitLab's `https://HOST/api/v4` */
  apiUrl?: string;
  maxRetries?: number;
  maxWaitSeconds?: number;
  /** milliseconds per second the server names: 1000 in use; tests shorten the waits, never skip them */
  msPerSecond?: number;
}

export interface GitLabResponse<T> {
  status: number;
  data: T;
  headers: Headers;
}

type Query = Record<string, string | number | boolean | undefined>;

export class GitLabClient {
  #base: string;
  #token: string;
  #maxRetries: number;
  #maxWait: number;
  #msPerSecond: number;
  #timeoutMs: number;
  #signal: AbortSignal | undefined;

  constructor(options: GitLabClientOptions) {
    this.#base = (options.apiUrl ?? DEFAULT_GITLAB_API).replace(/\/+$/, '');
    this.#token = options.token;
    this.#maxRetries = options.maxRetries ?? 2;
    this.#maxWait = options.maxWaitSeconds ?? 60;
    this.#msPerSecond = options.msPerSecond ?? 1000;
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_FORGE_TIMEOUT_MS;
    this.#signal = options.signal;
  }

  /** One call; a status in `accept` is returned rather than thrown (404 for "not protected", 409 for a stale sha). */
  async request<T>(
    what: string,
    method: string,
    path: string,
    options: { query?: Query; body?: unknown; accept?: readonly number[]; text?: boolean } = {},
  ): Promise<GitLabResponse<T>> {
    return this.#send<T>(what, method, this.#url(path, options.query), options);
  }

  /**
   * Every page of a list, following the `link: rel="next"` GitLab sends; with `maxPages`, only the first
   * that many (the caller asked for the order it wants, newest first).
   */
  async all<T>(what: string, path: string, query: Query = {}, maxPages?: number): Promise<T[]> {
    const items: T[] = [];
    let url: string | null = this.#url(path, { per_page: 100, ...query });
    for (let page = 0; url !== null; page++) {
      if (maxPages !== undefined && page >= maxPages) break;
      if (page >= 100) throw new ForgeError(`GitLab ${what}: more than 100 pages`, null);
      const response: GitLabResponse<T[]> = await this.#send<T[]>(what, 'GET', url, {});
      items.push(...response.data);
      url = nextLink(response.headers.get('link'));
      // Only ever follow a link on the API's own origin: the token goes where the link points.
      if (url !== null && new URL(url).origin !== new URL(this.#base).origin)
        throw new ForgeError(`GitLab ${what}: a next page on another host`, null);
    }
    return items;
  }

  #url(path: string, query: Query = {}): string {
    const url = new URL(`${this.#base}${path}`);
    for (const [name, value] of Object.entries(query))
      if (value !== undefined) url.searchParams.set(name, String(value));
    return url.toString();
  }

  async #send<T>(
    what: string,
    method: string,
    url: string,
    options: { body?: unknown; accept?: readonly number[]; text?: boolean },
  ): Promise<GitLabResponse<T>> {
    let limited = 0;
    let failed = 0;
    // A POST that failed on the way may have been done (a note posted twice): only the others are repeated.
    // A rate limit is a refusal before any work, so it is waited out for every method.
    const idempotent = method !== 'POST';
    for (;;) {
      let response: Response;
      try {
        response = await fetch(url, {
          method,
          headers: {
            'PRIVATE-TOKEN': this.#token,
            'user-agent': 'loopfleet',
            accept: 'application/json',
            ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
          },
          body: options.body === undefined ? undefined : JSON.stringify(options.body),
          signal: AbortSignal.any([
            AbortSignal.timeout(this.#timeoutMs),
            ...(this.#signal === undefined ? [] : [this.#signal]),
          ]),
          redirect: 'error',
        });
      } catch (error) {
        if (this.#signal?.aborted === true) throw this.#error(what, null, 'interrupted');
        if (idempotent && failed++ < SERVER_ERROR_RETRIES) {
          await sleep(failed * failed * this.#msPerSecond);
          continue;
        }
        throw this.#error(what, null, error instanceof Error ? `${error.message}${causeText(error)}` : String(error));
      }
      const raw = await response.text();
      if (response.ok || options.accept?.includes(response.status)) {
        return {
          status: response.status,
          data: (options.text === true ? raw : parseJson(raw)) as T,
          headers: response.headers,
        };
      }
      const message = serverMessage(raw) || response.statusText;
      const retryAt = rateLimitRetryAt(response.status, response.headers, message);
      if (retryAt !== null) {
        const waitSeconds = Math.max(0, Math.ceil((retryAt - Date.now()) / 1000));
        if (limited++ < this.#maxRetries && waitSeconds <= this.#maxWait) {
          await sleep(waitSeconds * this.#msPerSecond);
          continue;
        }
        throw new ForgeRateLimitError(
          redact(`GitLab ${what}: rate limited until ${new Date(retryAt).toISOString()} (${message})`, [this.#token]),
          retryAt,
        );
      }
      if (idempotent && response.status >= 500 && failed++ < SERVER_ERROR_RETRIES) {
        await sleep(failed * failed * this.#msPerSecond);
        continue;
      }
      throw this.#error(what, response.status, message);
    }
  }

  #error(what: string, status: number | null, message: string): ForgeError {
    // GitLab's own messages often begin with the status (`401 Unauthorized`): it is not repeated.
    const prefix = status === null || message.startsWith(`${status} `) ? '' : `${status} `;
    return new ForgeError(redact(`GitLab ${what}: ${prefix}${message}`.slice(0, 500), [this.#token]), status);
  }
}

/** When a refusal's rate limit lifts (ms since the epoch); null when it is no rate limit. */
export function rateLimitRetryAt(status: number, headers: Headers, message: string, now = Date.now()): number | null {
  if (status !== 429 && !(status === 403 && /rate limit/i.test(message))) return null;
  const after = headers.get('retry-after');
  if (after !== null && after.trim() !== '' && Number.isFinite(Number(after))) return now + Number(after) * 1000;
  const reset = Number(headers.get('ratelimit-reset'));
  if (Number.isFinite(reset) && reset > 0) return reset * 1000;
  return now + 60_000;
}

function nextLink(header: string | null): string | null {
  if (header === null) return null;
  for (const part of header.split(',')) {
    const match = /<([^>]+)>\s*;\s*rel="?next"?/.exec(part);
    if (match?.[1] !== undefined) return match[1];
  }
  return null;
}

function parseJson(raw: string): unknown {
  if (raw === '') return null;
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    throw new ForgeError(`GitLab answered something that is not JSON: ${JSON.stringify(raw.slice(0, 80))}`, null);
  }
}

function serverMessage(raw: string): string {
  try {
    const parsed = JSON.parse(raw) as { message?: unknown; error?: unknown };
    const message = parsed.message ?? parsed.error;
    return (typeof message === 'string' ? message : JSON.stringify(message ?? raw)).slice(0, 300);
  } catch {
    return raw.slice(0, 300);
  }
}

function causeText(error: Error): string {
  const cause = error.cause;
  return cause instanceof Error ? ` (${cause.message})` : '';
}
