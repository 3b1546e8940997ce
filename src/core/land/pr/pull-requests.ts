import { RefusedError } from '../../../domain/errors.js';
import type { PrRecord } from '../../../domain/types.js';
import type { ForgeLink } from './forge-link.js';
import { landOf } from './forge-link.js';
import { keepMergeable, landReady, type KeepServices } from './keep.js';
import { PrPublisher } from './publish.js';
import { pending, publishPending } from './pending.js';
import { emptyReport, fetchBase, followed, syncPulls, type SyncReport } from './sync.js';

/**
 * The fleet's pull-request part (`land: pr`): the one handle Fleet holds. Invariant: its operations run one
 * after another (a push, a sync pass), so no two touch a task's branch, worktree or PR at once; one that
 * fails does not hold up the next; settled() resolves once every operation started so far has ended.
 */

export type PullRequestServices = Omit<KeepServices, 'link' | 'publisher'> & {
  link: ForgeLink | null;
  /** why there is no forge (no token, no remote), when `link` is null */
  missing: string | null;
};

export interface SyncResult extends SyncReport {
  rebased: string[];
  /** the task whose PR loopfleet merged itself (autonomy auto), if any */
  landed: string | null;
}

export class PullRequests {
  readonly #s: PullRequestServices;
  readonly #publisher: PrPublisher | null;
  #chain: Promise<unknown> = Promise.resolve();

  constructor(services: PullRequestServices) {
    this.#s = services;
    this.#publisher = services.link === null ? null : new PrPublisher({ ...services, link: services.link });
  }

  /** whether the task lands through a pull request (`land: pr`) */
  lands(id: string): boolean {
    return landOf(this.#s.specs().get(id), this.#s.config()) === 'pr';
  }

  /** Push the verified task's branch and open (or find and update) its PR. Refused (RefusedError) without a forge. */
  publish(id: string): Promise<PrRecord> {
    return this.#then(() => this.#need().publisher.publish(id));
  }

  /** A task just verified under `land: pr`: published, a failure said in the log (the task stays verified). */
  async afterVerified(id: string): Promise<void> {
    try {
      await this.publish(id);
    } catch (error) {
      this.#s.log(id, `pull request not opened: ${(error as Error).message}`, 'warn');
    }
  }

  /**
   * One pass over every open PR (see {@link syncPulls} and {@link landReady}); then verified tasks with no
   * open PR have theirs opened or adopted ({@link publishPending}).
   */
  sync(): Promise<SyncResult> {
    return this.#then(async () => {
      const { link, publisher } = this.#need();
      const result: SyncResult = { ...emptyReport(), rebased: [], landed: null };
      const services: KeepServices = { ...this.#s, link, publisher };
      const unpublished = { ...services, lands: (id: string) => this.lands(id) };
      if (followed(services).length === 0 && pending(unpublished).length === 0) return result;
      if (followed(services).length > 0) {
        result.onto = await fetchBase(services);
        await syncPulls(services, result);
      }
      if (result.rateLimited === null) await publishPending(unpublished, result);
      if (result.onto === null || result.rateLimited !== null || this.#s.signal.aborted) return result;
      const kept = await keepMergeable(services, result.onto, this.#s.config());
      result.rebased = kept.rebased;
      result.sentBack.push(...kept.sentBack);
      for (const r of kept.refused) result.errors.push({ id: r.id, message: r.reason });
      result.landed = await landReady(services, result);
      if (result.landed !== null) result.merged.push(result.landed);
      return result;
    });
  }

  /**
   * Base as the remote holds it, fetched now: the ref it was fetched into, or null (said in the log) when it
   * could not be fetched. Refused (RefusedError) without a forge.
   */
  fetchedBase(): Promise<string | null> {
    return this.#then(() => fetchBase({ ...this.#s, link: this.#need().link }));
  }

  /**
   * Verified tasks with no open PR have theirs opened or found again ({@link publishPending}): what a run
   * does at its start, so a creation that failed or was cut short in an earlier run is made good.
   */
  openPending(): Promise<string[]> {
    return this.#then(async () => {
      const report = emptyReport();
      if (this.#s.link === null || this.#publisher === null) return [];
      const services = {
        ...this.#s,
        link: this.#s.link,
        publisher: this.#publisher,
        lands: (id: string) => this.lands(id),
      };
      await publishPending(services, report);
      return report.published;
    });
  }

  async settled(): Promise<void> {
    await this.#chain.catch(() => undefined);
  }

  #need(): { link: ForgeLink; publisher: PrPublisher } {
    if (this.#s.link === null || this.#publisher === null) {
      throw new RefusedError(
        this.#s.missing ??
          'land: pr needs a forge: set `forge:` in the front matter (github or gitlab, or { type, repo }) and a token (GH_TOKEN or GITLAB_TOKEN); `loopfleet doctor` checks both',
      );
    }
    return { link: this.#s.link, publisher: this.#publisher };
  }

  #then<T>(step: () => Promise<T>): Promise<T> {
    const run = this.#chain.then(step, step);
    this.#chain = run.catch(() => undefined);
    return run;
  }
}
