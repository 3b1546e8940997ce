import type { PullRequest } from '../../../ports/forge.js';
import type { GitPort } from '../../../ports/git.js';
import { RefusedError } from '../../../domain/errors.js';
import type { FleetConfig, PrRecord, TaskSpec } from '../../../domain/types.js';
import type { TaskPaths } from '../../../domain/layout.js';
import type { TaskLifecycle } from '../../task/lifecycle.js';
import { DEFAULT_PR } from '../../backlog/config-landing.js';
import type { ForgeLink } from './forge-link.js';
import { followUpComment, prBody, prTitle } from './body.js';

/** What the pull-request part needs from its fleet, given once. */
export interface PrServices {
  git: GitPort;
  link: ForgeLink;
  lifecycle: TaskLifecycle;
  paths: TaskPaths;
  /** the branch pull requests target (the fleet's base) */
  base: string;
  spec: (id: string) => TaskSpec | undefined;
  config: () => FleetConfig;
  log: (id: string, message: string, level?: 'info' | 'warn') => void;
}

export interface PublishOptions {
  /** why this push, for the comment on a pull request that exists already (null: a new attempt) */
  why?: string | null;
  /** the comment's diffstat is what changed since the last push (false after a rebase: base's changes would show) */
  diffSincePush?: boolean;
}

/**
 * A verified task's branch onto the forge: pushed under a lease, and its one pull request opened, or found
 * again by its branch and updated.
 *
 * Invariants:
 * - one pull request per task: an open one is found by its head branch (on a rerun with no record, too)
 *   before any is opened;
 * - the push's lease is the commit loopfleet last pushed, or the found PR's head, or none (the branch must
 *   not exist): a branch someone else pushed to since is never overwritten;
 * - the record (`TaskState.pr`) is written after the push and again after the forge answered, so a crash
 *   between them leaves the lease right for the next push.
 */
export class PrPublisher {
  readonly #s: PrServices;

  constructor(services: PrServices) {
    this.#s = services;
  }

  async publish(id: string, options: PublishOptions = {}): Promise<PrRecord> {
    const { git, lifecycle, link } = this.#s;
    const task = lifecycle.get(id);
    if (task === undefined) throw new RefusedError(`no task ${id}`);
    if (task.status !== 'verified')
      throw new RefusedError(`${id} is ${task.status}: only a verified task's branch is pushed for a pull request`);
    const spec = this.#s.spec(id);
    if (spec === undefined) throw new RefusedError(`${id} is no longer in BACKLOG.md`);
    const branch = this.#s.paths.branchOf(id);
    const commit = await git.revParse(`refs/heads/${branch}`);
    if (commit === null) throw new RefusedError(`${id} has no branch ${branch} to push`);
    const record = task.pr;
    const found = await this.#openPull(record, branch);
    // The open PR's head is the remote's branch as it is now, whoever pushed it: it stands for "ours" only
    // on a rerun that lost its record of what loopfleet pushed. The verified commit itself is ours wherever
    // it is: a worker pushed it there (attempts on workers), and a remote already at it overwrites nothing.
    const known = [...(record?.pushed != null ? [record.pushed] : [found?.headSha ?? null]), commit];
    const lease = await this.#lease(branch, known);
    if (lease !== commit) {
      const pushed = await git.push(link.remote, `refs/heads/${branch}`, `refs/heads/${branch}`, lease, link.auth);
      if (pushed.kind === 'rejected') {
        throw new RefusedError(
          `push of ${branch} to ${link.remote} refused: ${pushed.reason}${lease === null ? '' : ` (expected ${lease.slice(0, 8)} there)`}`,
        );
      }
      if (record !== undefined && record.state === 'open') lifecycle.recordPr(id, { ...record, pushed: commit });
    }
    const config = this.#s.config();
    const settings = config.pr ?? DEFAULT_PR;
    const body = prBody({
      task: lifecycle.get(id)!,
      spec,
      forge: link.forge.kind,
      base: this.#s.base,
      pulls: this.#openPulls(id),
    });
    const title = prTitle(task);
    let pull: PullRequest;
    if (found !== null) {
      await link.forge.updatePullRequest(found.number, { title, body });
      pull = found;
      if (lease !== commit && record !== undefined && record.pushed !== null) {
        const diffStat =
          options.diffSincePush === false
            ? ''
            : ((await git.diffSummary(this.#s.paths.worktreeOf(id), record.pushed).catch(() => null))?.stat ?? '');
        await link.forge.comment(
          found.number,
          followUpComment({
            task: lifecycle.get(id)!,
            sinceAttempt: record.pushedAttempt,
            diffStat,
            why: options.why ?? record.sentBackFor ?? null,
          }),
        );
      }
      this.#s.log(id, `PR #${found.number} updated: ${found.url}`);
    } else {
      pull = await link.forge.openPullRequest({
        head: branch,
        base: this.#s.base,
        title,
        body,
        draft: settings.draft,
        labels: settings.labels,
        reviewers: settings.reviewers,
      });
      this.#s.log(id, `PR #${pull.number} opened${pull.draft ? ' as a draft' : ''}: ${pull.url}`);
    }
    const kept = record?.number === pull.number ? record : undefined;
    const next: PrRecord = {
      number: pull.number,
      url: pull.url,
      state: 'open',
      draft: pull.draft,
      ci: lease === commit ? (kept?.ci ?? 'pending') : 'pending',
      review: kept?.review ?? 'none',
      pushed: commit,
      pushedAttempt: task.attempt,
      answered: kept?.answered ?? [],
      ciAnswered: kept?.ciAnswered ?? null,
      commentsSince: kept?.commentsSince ?? null,
      // Said in this push's comment: the next push has its own reason.
      sentBackFor: null,
    };
    lifecycle.recordPr(id, next);
    return next;
  }

  /**
   * What the remote's branch must hold for the push: nothing when it has no such branch (never pushed, or
   * deleted after a merge or close); else a commit loopfleet knows as its own there (`known`). Anything else
   * was pushed by someone else: refused, never overwritten.
   */
  async #lease(branch: string, known: ReadonlyArray<string | null>): Promise<string | null> {
    const ref = `refs/heads/${branch}`;
    const { git, link } = this.#s;
    const there = (await git.lsRemote(link.remote, [ref], link.auth)).get(ref) ?? null;
    if (there === null || known.includes(there)) return there;
    throw new RefusedError(
      `${branch} on ${link.remote} is at ${there.slice(0, 8)}, a commit loopfleet did not push: not overwritten (fetch it and look, or delete the remote branch to let loopfleet push again)`,
    );
  }

  /** The task's open pull request: the recorded one while it is open, else whichever the forge has open for the branch. */
  async #openPull(record: PrRecord | undefined, branch: string): Promise<PullRequest | null> {
    const forge = this.#s.link.forge;
    if (record !== undefined && record.state === 'open') {
      const known = await forge.getPullRequest(record.number);
      if (known.state === 'open') return known;
      // Closed or merged on the forge while a new attempt ran: that is the person's decision, not a reason to
      // open another PR. The next sync brings it home (discarded or merged).
      throw new RefusedError(
        `PR #${known.number} was ${known.state} on the forge meanwhile: not pushed; \`loopfleet sync\` follows it`,
      );
    }
    const found = await forge.findPullRequest(branch);
    return found !== null && found.state === 'open' ? found : null;
  }

  /** Other tasks' open pull requests by task id, for the conflicts the body names. */
  #openPulls(except: string): Map<string, number> {
    const pulls = new Map<string, number>();
    for (const t of this.#s.lifecycle.all())
      if (t.id !== except && t.pr?.state === 'open') pulls.set(t.id, t.pr.number);
    return pulls;
  }
}
