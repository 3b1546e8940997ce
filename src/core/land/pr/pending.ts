import { ForgeRateLimitError } from '../../../ports/forge.js';
import type { PrPublisher } from './publish.js';
import type { SyncReport, SyncServices } from './sync.js';

/**
 * Verified tasks that land by pull request and have no open one: their PR is opened, or found again by its
 * branch and adopted ({@link PrPublisher.publish} looks before it opens). This is how a creation that failed
 * (a 5xx), or was cut short (the process killed while the forge created it), is made good on the next pass,
 * and how a commit newer than a PR's merge is offered as a follow-up.
 *
 * Invariants: each task is published on its own (one that fails does not hold up those behind it); a rate
 * limit ends the step, as it ends the pass; a task is never published twice in one pass.
 */

export interface PendingServices extends SyncServices {
  publisher: PrPublisher;
  /** whether the task lands through a pull request (`land: pr`) */
  lands: (id: string) => boolean;
  signal: AbortSignal;
}

/** The verified tasks landing by PR whose record has no open PR, in backlog order. */
export function pending(s: PendingServices): string[] {
  return s.order().filter((id) => {
    const t = s.lifecycle.get(id);
    return t?.status === 'verified' && t.pr?.state !== 'open' && s.lands(id);
  });
}

export async function publishPending(s: PendingServices, report: SyncReport): Promise<void> {
  for (const id of pending(s)) {
    if (s.signal.aborted) return;
    try {
      const before = s.lifecycle.get(id)?.pr?.number;
      const pr = await s.publisher.publish(id);
      report.published.push(id);
      if (before !== undefined && before !== pr.number)
        s.log(id, `PR #${pr.number} opened as a follow-up of PR #${before}: ${pr.url}`);
    } catch (error) {
      if (error instanceof ForgeRateLimitError) {
        report.rateLimited = `${error.message} (until ${new Date(error.retryAt).toISOString()})`;
        s.log(id, `sync: ${report.rateLimited}; the next sync goes on`, 'warn');
        return;
      }
      const message = `pull request not opened: ${(error as Error).message}`;
      report.errors.push({ id, message });
      s.log(id, message, 'warn');
    }
  }
}
