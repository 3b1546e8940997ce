import { setTimeout as sleep } from 'node:timers/promises';
import { retry } from '@octokit/plugin-retry';
import { throttling } from '@octokit/plugin-throttling';
import { Octokit } from '@octokit/rest';
import Bottleneck from 'bottleneck';
import { ForgeError, ForgeRateLimitError } from '../../ports/forge.js';
import { DEFAULT_FORGE_TIMEOUT_MS, redact } from './text.js';

/**
 * Octokit as loopfleet uses it: GitHub's recommended throttling (@octokit/plugin-throttling: writes spaced,
 * `retry-after` and `x-ratelimit-reset` honoured) and @octokit/plugin-retry for 5xx answers. A rate limit
 * waits at most `maxWaitSeconds` and at most `maxRetries` times per call; beyond that the call fails with a
 * ForgeRateLimitError naming when the limit lifts. Every error leaving here is a ForgeError or a
 * ForgeRateLimitError whose message has the token redacted, and carries no `cause` (a request error holds
 * the request's headers, the token among them).
 */

export const DEFAULT_GITHUB_API = 'https://api.github.com';

export interface GitHubClientOptions {
  token: string;
  /** GITHUB_API_URL: `https://api.github.com`, or `https://HOST/api/v3` for GitHub Enterprise */
  apiUrl?: string;
  /** how many times one call waits out a rate limit before it fails (default 2) */
  maxRetries?: number;
  /** the longest single wait for a rate limit, in seconds (default 60) */
  maxWaitSeconds?: number;
  /** milliseconds per second the server names: 1000 in use; tests shorten the waits, never skip them */
  msPerSecond?: number;
  /** the spacing of writes (GitHub asks for at least one second); tests pass 0 */
  writeSpacingMs?: number;
  /** how long one request may take before it is abandoned (default {@link DEFAULT_FORGE_TIMEOUT_MS}) */
  timeoutMs?: number;
  /** ends every request in flight and refuses new ones: a signal to the process */
  signal?: AbortSignal;
}

const ThrottledOctokit = Octokit.plugin(throttling, retry);
export type GitHubOctokit = InstanceType<typeof ThrottledOctokit>;

const CLIENT_ERRORS = Array.from({ length: 100 }, (_, i) => 400 + i);
const QUIET = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

/**
 * Node's fetch with every request bounded: aborted after `timeoutMs`, or at once when `signal` fires. Octokit
 * takes it as its `request.fetch`, so paginated and GraphQL requests are bounded alike.
 */
function boundedFetch(timeoutMs: number, signal: AbortSignal | undefined): typeof fetch {
  return (input, init) => {
    const signals = [AbortSignal.timeout(timeoutMs), ...(signal === undefined ? [] : [signal])];
    if (init?.signal != null) signals.push(init.signal);
    return fetch(input, { ...init, signal: AbortSignal.any(signals) });
  };
}

export function githubOctokit(options: GitHubClientOptions): GitHubOctokit {
  const maxRetries = options.maxRetries ?? 2;
  const maxWait = options.maxWaitSeconds ?? 60;
  const msPerSecond = options.msPerSecond ?? 1000;
  const spacing = options.writeSpacingMs;
  // Waits within the bounds; anything over them surfaces as the 403/429 that `githubCall` turns into a ForgeRateLimitError.
  const onLimit = (retryAfter: number, _options: unknown, _octokit: unknown, retryCount: number): boolean =>
    retryCount < maxRetries && retryAfter <= maxWait;
  return new ThrottledOctokit({
    auth: options.token,
    baseUrl: (options.apiUrl ?? DEFAULT_GITHUB_API).replace(/\/+$/, ''),
    userAgent: 'loopfleet',
    log: QUIET,
    request: { fetch: boundedFetch(options.timeoutMs ?? DEFAULT_FORGE_TIMEOUT_MS, options.signal) },
    throttle: {
      // One key per API root: every client of this process shares GitHub's write spacing for that host.
      id: `loopfleet ${options.apiUrl ?? DEFAULT_GITHUB_API}`,
      retryAfterBaseValue: msPerSecond,
      fallbackSecondaryRateRetryAfter: 60,
      onRateLimit: onLimit,
      onSecondaryRateLimit: onLimit,
      ...(spacing === undefined
        ? {}
        : {
            write: new Bottleneck.Group({ maxConcurrent: 1, minTime: spacing }),
            notifications: new Bottleneck.Group({ maxConcurrent: 1, minTime: spacing }),
          }),
    },
    // A 4xx is an answer (403 and 429 are the throttling plugin's to wait out): the retry plugin takes 5xx only.
    retry: { doNotRetry: CLIENT_ERRORS, retries: 2, retryAfterBaseValue: msPerSecond },
  });
}

interface RequestErrorLike {
  status: number;
  message: string;
  response?: { headers?: Record<string, string | number | undefined>; data?: unknown };
}

function isRequestError(error: unknown): error is RequestErrorLike {
  return typeof error === 'object' && error !== null && typeof (error as { status?: unknown }).status === 'number';
}

/** When a rate-limit answer says the limit lifts (ms since the epoch), or null when `error` is no rate limit. */
export function rateLimitRetryAt(error: RequestErrorLike, now = Date.now()): number | null {
  const headers = error.response?.headers ?? {};
  const retryAfter = Number(headers['retry-after']);
  const remaining = String(headers['x-ratelimit-remaining'] ?? '');
  const reset = Number(headers['x-ratelimit-reset']);
  const limited =
    error.status === 429 ||
    (error.status === 403 &&
      ((Number.isFinite(retryAfter) && headers['retry-after'] !== undefined) ||
        remaining === '0' ||
        /rate limit/i.test(error.message)));
  if (!limited) return null;
  if (headers['retry-after'] !== undefined && Number.isFinite(retryAfter)) return now + retryAfter * 1000;
  if (remaining === '0' && Number.isFinite(reset) && reset > 0) return reset * 1000;
  // A secondary limit without `retry-after`: GitHub's guidance is to wait at least a minute.
  return now + 60_000;
}

/**
 * Runs one GitHub call; its failure becomes a ForgeError or ForgeRateLimitError with `token` redacted. A
 * plain 429 (no "secondary rate limit" message, no `x-ratelimit-remaining: 0`: those the throttling plugin
 * waits out) waits here as its `retry-after` says, within the same bounds.
 */
export async function githubCall<T>(what: string, options: GitHubClientOptions, call: () => Promise<T>): Promise<T> {
  const maxRetries = options.maxRetries ?? 2;
  const maxWait = options.maxWaitSeconds ?? 60;
  for (let retries = 0; ; retries++) {
    try {
      return await call();
    } catch (error) {
      if (
        retries < maxRetries &&
        isRequestError(error) &&
        error.status === 429 &&
        !/\bsecondary rate\b/i.test(error.message) &&
        String(error.response?.headers?.['x-ratelimit-remaining'] ?? '') !== '0'
      ) {
        const retryAt = rateLimitRetryAt(error) ?? Date.now();
        const waitSeconds = Math.max(0, Math.ceil((retryAt - Date.now()) / 1000));
        if (waitSeconds <= maxWait) {
          await sleep(waitSeconds * (options.msPerSecond ?? 1000));
          continue;
        }
      }
      if (options.signal?.aborted === true) throw new ForgeError(`GitHub ${what}: interrupted`, null);
      if (error instanceof Error && /aborted due to timeout/i.test(error.message))
        throw new ForgeError(`GitHub ${what}: no answer within ${waited(options.timeoutMs)}`, null);
      throw githubError(what, options.token, error);
    }
  }
}

function waited(ms = DEFAULT_FORGE_TIMEOUT_MS): string {
  return ms >= 1000 ? `${Math.round(ms / 1000)}s` : `${ms}ms`;
}

export function githubError(what: string, token: string, error: unknown): Error {
  if (error instanceof ForgeError || error instanceof ForgeRateLimitError) return error;
  if (!isRequestError(error))
    return new ForgeError(
      redact(`GitHub ${what}: ${error instanceof Error ? error.message : String(error)}`, [token]),
      null,
    );
  const detail = firstLine(error.message);
  const retryAt = rateLimitRetryAt(error);
  if (retryAt !== null) {
    return new ForgeRateLimitError(
      redact(`GitHub ${what}: rate limited until ${new Date(retryAt).toISOString()} (${detail})`, [token]),
      retryAt,
    );
  }
  return new ForgeError(redact(`GitHub ${what}: ${error.status} ${detail}`, [token]), error.status);
}

function firstLine(text: string): string {
  // Octokit appends ` - https://docs.github.com/…` to the server's message.
  return (text.split('\n')[0] ?? '').replace(/ - https:\/\/docs\.github\.com\S*$/, '').slice(0, 300);
}
