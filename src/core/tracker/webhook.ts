/**
 * Webhooks from GitHub and GitLab, as pure functions a server mounts (`loopfleet serve`: `POST /hooks/github`,
 * `POST /hooks/gitlab`): verify a delivery, refuse a replay, and say which tracker change it means.
 *
 * Invariants:
 * - nothing is believed before its signature is: GitHub's `X-Hub-Signature-256` is the HMAC-SHA256 of the
 *   raw body under the secret, compared in constant time ({@link timingSafeEqual}); GitLab's `X-Gitlab-Token`
 *   is compared the same way; no secret (an empty one included) refuses every delivery;
 * - the body is parsed only after it verified, and only as JSON;
 * - a delivery id seen before (GitHub's `X-GitHub-Delivery`, GitLab's `X-Gitlab-Event-UUID`) changes nothing
 *   ({@link WebhookDeliveries}), so a captured request sent again does not act twice;
 * - a change carries numbers, names and states only, never the or comment's text: whoever acts on it
 *   reads the tracker itself, with its own token and its own checks of who may ask.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/** The environment variable that holds the secret both forges sign or send with. */
export const WEBHOOK_SECRET_ENV = 'LOOPFLEET_WEBHOOK_SECRET';

/** Header names in lower case, as Node's `IncomingMessage.headers` and the Fetch API give them. */
export type WebhookHeaders = Record<string, string | string[] | undefined>;

export type Verified =
  | { ok: true; forge: 'github' | 'gitlab'; event: string; delivery: string | null; payload: unknown }
  | { ok: false; status: 400 | 401; reason: string };

function header(headers: WebhookHeaders, name: string): string | null {
  const lower = name.toLowerCase();
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() !== lower) continue;
    const v = Array.isArray(value) ? value[0] : value;
    return typeof v === 'string' ? v : null;
  }
  return null;
}

/** Equal strings in time that does not depend on where they differ (both hashed first: equal lengths). */
function sameSecret(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a, 'utf8').digest();
  const hb = createHash('sha256').update(b, 'utf8').digest();
  return timingSafeEqual(ha, hb) && a.length === b.length;
}

function parsed(raw: Buffer | string): { ok: true; payload: unknown } | { ok: false } {
  try {
    return { ok: true, payload: JSON.parse(typeof raw === 'string' ? raw : raw.toString('utf8')) };
  } catch {
    return { ok: false };
  }
}

/**
 * A GitHub delivery: 401 without a secret, without `X-Hub-Signature-256` or with a wrong one; 400 for a body
 * that is not JSON; otherwise the event (`X-GitHub-Event`), the delivery id and the parsed payload.
 * `rawBody` must be the bytes as received: a re-serialised body does not verify.
 */
export function verifyGithubWebhook(
  rawBody: Buffer | string,
  headers: WebhookHeaders,
  secret: string | undefined,
): Verified {
  if (secret === undefined || secret === '')
    return { ok: false, status: 401, reason: `${WEBHOOK_SECRET_ENV} is not set` };
  const signature = header(headers, 'x-hub-signature-256');
  if (signature === null || !/^sha256=[0-9a-f]{64}$/i.test(signature))
    return { ok: false, status: 401, reason: 'no X-Hub-Signature-256' };
  const expected = createHmac('sha256', secret).update(rawBody).digest();
  const given = Buffer.from(signature.slice('sha256='.length), 'hex');
  if (given.length !== expected.length || !timingSafeEqual(given, expected))
    return { ok: false, status: 401, reason: 'wrong X-Hub-Signature-256' };
  const body = parsed(rawBody);
  if (!body.ok) return { ok: false, status: 400, reason: 'the body is not JSON' };
  return {
    ok: true,
    forge: 'github',
    event: header(headers, 'x-github-event') ?? '',
    delivery: header(headers, 'x-github-delivery'),
    payload: body.payload,
  };
}

/**
 * A GitLab delivery: 401 without a secret, or without the `X-Gitlab-Token` the secret is; otherwise the
 * event (`X-Gitlab-Event`) and the delivery id (`X-Gitlab-Event-UUID`). GitLab sends the token itself, not
 * a signature, so the body is parsed apart: {@link parseGitlabBody}.
 */
export function verifyGitlabWebhook(headers: WebhookHeaders, secret: string | undefined): Verified {
  if (secret === undefined || secret === '')
    return { ok: false, status: 401, reason: `${WEBHOOK_SECRET_ENV} is not set` };
  const token = header(headers, 'x-gitlab-token');
  if (token === null || !sameSecret(token, secret)) return { ok: false, status: 401, reason: 'wrong X-Gitlab-Token' };
  return {
    ok: true,
    forge: 'gitlab',
    event: header(headers, 'x-gitlab-event') ?? '',
    delivery: header(headers, 'x-gitlab-event-uuid'),
    payload: null,
  };
}

/** The JSON body of a GitLab delivery that verified; 400 when it is not JSON. */
export function parseGitlabBody(verified: Extract<Verified, { ok: true }>, rawBody: Buffer | string): Verified {
  const body = parsed(rawBody);
  if (!body.ok) return { ok: false, status: 400, reason: 'the body is not JSON' };
  return { ...verified, payload: body.payload };
}

/**
 * The delivery ids seen lately (at most `capacity`, oldest forgotten first). `fresh(id)` is true the first
 * time an id is seen and false ever after (while it is remembered); a delivery without an id is fresh.
 */
export class WebhookDeliveries {
  readonly #seen = new Set<string>();
  readonly #capacity: number;

  constructor(capacity = 10_000) {
    this.#capacity = capacity;
  }

  fresh(delivery: string | null): boolean {
    if (delivery === null) return true;
    if (this.#seen.has(delivery)) return false;
    this.#seen.add(delivery);
    if (this.#seen.size > this.#capacity) this.#seen.delete(this.#seen.values().next().value as string);
    return true;
  }
}
