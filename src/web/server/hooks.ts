import type { Hono, MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import {
  parseGitlabBody,
  verifyGithubWebhook,
  verifyGitlabWebhook,
  WebhookDeliveries,
  type Verified,
  type WebhookHeaders,
} from '../../core/tracker/webhook.js';
import { webhookChange, type TrackerChange } from '../../core/tracker/webhook-change.js';
import { json } from './api-read.js';

/** The largest delivery read: GitHub caps its payloads at 25 MB. */
export const MAX_HOOK_BYTES = 25 * 1024 * 1024;

/** What the serve command hands the server for the tracker's webhooks (`tracker:` and a secret). */
export interface WebhookReceiver {
  /** `LOOPFLEET_WEBHOOK_SECRET`; absent or empty refuses every delivery */
  secret: string | undefined;
  /**
   * a verified, fresh delivery's change: the tracker reads the issue itself, with its own checks (a change
   * from a forge other than the tracker's changes nothing)
   */
  hear(change: TrackerChange): Promise<void>;
  /** a refused delivery, for the log (never the body) */
  refused(forge: 'github' | 'gitlab', status: number, reason: string): void;
}

/**
 * `POST /hooks/github` and `POST /hooks/gitlab`, mounted before the token guard: a forge cannot carry the
 * page's token, so a delivery is believed on its signature alone ({@link verifyGithubWebhook}).
 *
 * Invariants:
 * - nothing is heard before the signature (or GitLab's token) verified against the secret; a refused
 *   delivery answers 401 or 400 and calls nothing;
 * - a delivery id seen before answers 202 and calls nothing ({@link WebhookDeliveries});
 * - without a tracker the routes answer 404, so a server without `tracker:` exposes no webhook at all;
 * - the routes sit behind the same Host check and security headers as every other request.
 */
export function hookRoutes(app: Hono, receiver: WebhookReceiver | null, guards: MiddlewareHandler[]): void {
  const deliveries = new WebhookDeliveries();
  const limit = bodyLimit({
    maxSize: MAX_HOOK_BYTES,
    onError: (c) => json(c, { error: `a delivery is at most ${MAX_HOOK_BYTES} bytes` }, 413),
  });
  for (const forge of ['github', 'gitlab'] as const) {
    const path = `/hooks/${forge}`;
    for (const guard of [...guards, limit]) app.use(path, guard);
    app.post(path, async (c) => {
      if (receiver === null)
        return json(c, { error: 'no tracker: BACKLOG.md has no `tracker:` setting, so no webhook is heard' }, 404);
      const raw = Buffer.from(await c.req.arrayBuffer());
      const headers: WebhookHeaders = Object.fromEntries(c.req.raw.headers.entries());
      let verified: Verified =
        forge === 'github'
          ? verifyGithubWebhook(raw, headers, receiver.secret)
          : verifyGitlabWebhook(headers, receiver.secret);
      if (verified.ok && forge === 'gitlab') verified = parseGitlabBody(verified, raw);
      if (!verified.ok) {
        receiver.refused(forge, verified.status, verified.reason);
        return json(c, { error: verified.reason }, verified.status);
      }
      if (verified.delivery !== null && !deliveries.fresh(verified.delivery))
        return json(c, { accepted: false, reason: 'a delivery seen before' }, 202);
      const change = webhookChange(verified);
      await receiver.hear(change);
      return json(c, { accepted: true, change: change.kind }, 202);
    });
  }
}
