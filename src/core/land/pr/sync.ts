import { ForgeRateLimitError, type ForgeComment, type PullRequest } from '../../../ports/forge.js';
import type { PrRecord, TaskStatus } from '../../../domain/types.js';
import { remoteBaseRef } from './forge-link.js';
import { ciEvidence, reviewEvidence, startsWork, userName } from './evidence.js';
import { closedOnForge, mergedOnForge, type TickDone } from './landed.js';
import type { PrServices } from './publish.js';

/**
 * One pass over the open pull requests (`loopfleet sync`, and `--watch` on a cadence), in backlog order:
 * each PR's fate drives its task.
 *
 * - merged on the forge → `merged` ({@link mergedOnForge}); closed unmerged → `discarded`;
 * - CI failing on the head loopfleet pushed → back to the queue with the failing checks as evidence, once
 *   per head commit (`PrRecord.ciAnswered`); a head someone else pushed is left to them;
 * - a review asking for changes, or a comment starting with `/loopfleet`, by an author who can write → back
 *   to the queue with those comments (and the line comments that came with them) as evidence. Comments by
 *   authors who cannot write ({@link ForgeComment.authorCanWrite}) never start work: they are logged, with
 *   the permission the forge named. `PrRecord.commentsSince` (the newest comment read) keeps every older
 *   comment from being read as new again; `PrRecord.answered` holds the ids answered or refused at that
 *   boundary, at most {@link MAX_ANSWERED} (the newest), so no comment starts two attempts and state stays
 *   small however many comments a PR gets.
 *
 * Invariants: only a `verified` task is sent back (a task already queued or running is left alone: its
 * attempt will push); a task that `failed` or is in `conflict` still follows its PR's merge or close. A
 * forge rate limit ends the pass (the next pass goes on); any other error is reported for that task only.
 */

/** Comment ids kept per PR: a pass reads a bounded number (ForgePort.comments), and `commentsSince` covers the rest. */
export const MAX_ANSWERED = 500;

/** `answered` and the newly answered ids, the newest MAX_ANSWERED kept. */
function remember(answered: readonly string[], more: readonly ForgeComment[]): string[] {
  return [...answered, ...more.map((c) => c.id)].slice(-MAX_ANSWERED);
}

/** The statuses whose open pull request a sync reads. */
const FOLLOWED: readonly TaskStatus[] = ['verified', 'failed', 'conflict'];

export interface SyncReport {
  merged: string[];
  closed: string[];
  sentBack: Array<{ id: string; reason: string }>;
  /** tasks whose PR was read and left as it was */
  open: string[];
  errors: Array<{ id: string; message: string }>;
  /** the fetched base (`refs/remotes/<remote>/<base>`), null when it could not be fetched */
  onto: string | null;
  /** a rate limit that ended the pass early */
  rateLimited: string | null;
  /** the PR of each task read in this pass */
  pulls: Map<string, PullRequest>;
  /** tasks whose PR was merged at an older head than their last verified commit: still verified, offered again */
  mergedBehind: Array<{ id: string; reason: string }>;
  /** tasks whose PR this pass opened or found again (a creation that failed or was cut short before) */
  published: string[];
}

export interface SyncServices extends PrServices {
  order: () => readonly string[];
  tickDone: TickDone;
}

export function emptyReport(): SyncReport {
  return {
    merged: [],
    closed: [],
    sentBack: [],
    open: [],
    errors: [],
    onto: null,
    rateLimited: null,
    pulls: new Map(),
    mergedBehind: [],
    published: [],
  };
}

/** The tasks whose open pull request a sync reads, in backlog order. */
export function followed(s: SyncServices): string[] {
  return s.order().filter((id) => {
    const t = s.lifecycle.get(id);
    return t?.pr?.state === 'open' && FOLLOWED.includes(t.status);
  });
}

/** Fetches base from the remote into its remote-tracking ref; null (reported) when the fetch fails. */
export async function fetchBase(s: PrServices): Promise<string | null> {
  const onto = remoteBaseRef(s.link.remote, s.base);
  try {
    await s.git.fetch(s.link.remote, [`+refs/heads/${s.base}:${onto}`], s.link.auth);
    return onto;
  } catch (error) {
    s.log('fleet', `sync: could not fetch ${s.base} from ${s.link.remote}: ${(error as Error).message}`, 'warn');
    return null;
  }
}

export async function syncPulls(s: SyncServices, report: SyncReport): Promise<void> {
  for (const id of followed(s)) {
    try {
      await followOne(s, id, report);
    } catch (error) {
      if (error instanceof ForgeRateLimitError) {
        report.rateLimited = `${error.message} (until ${new Date(error.retryAt).toISOString()})`;
        s.log(id, `sync: ${report.rateLimited}; the next sync goes on`, 'warn');
        return;
      }
      const message = (error as Error).message;
      report.errors.push({ id, message });
      s.log(id, `sync: ${message}`, 'warn');
    }
  }
}

/**
 * Why a PR merged on the forge does not make its task `merged`: it was merged at a head that is not the
 * task's last verified commit (the branch's tip) nor one that contains it, and base as fetched (`onto`;
 * unknown when null) lacks that commit — a person merged while a newer attempt was on its way. null when the
 * merge took the work. A head loopfleet cannot read counts as not holding it: told, nothing lost.
 */
async function mergedBehind(
  s: SyncServices,
  id: string,
  pull: PullRequest,
  onto: string | null,
): Promise<string | null> {
  const branch = s.paths.branchOf(id);
  const tip = await s.git.revParse(`refs/heads/${branch}`);
  if (tip === null || tip === pull.headSha) return null;
  if (onto !== null && (await s.git.isMerged(branch, onto))) return null;
  // A head someone pushed on top of the tip holds it (a teammate's fix, then a squash): the work is in.
  if (await holds(s, branch, pull.headSha, tip)) return null;
  return `PR #${pull.number} was merged at ${pull.headSha.slice(0, 8)}, not at the last verified commit ${tip.slice(0, 8)}, which ${s.base} lacks: that commit is offered as a follow-up pull request`;
}

/** Whether commit `head` (fetched with the remote's branch when it is not here yet) contains `tip`. */
async function holds(s: SyncServices, branch: string, head: string, tip: string): Promise<boolean> {
  if (!/^[0-9a-f]{40}$/.test(head)) return false;
  if ((await s.git.revParse(head)) === null) {
    const into = remoteBaseRef(s.link.remote, branch);
    await s.git.fetch(s.link.remote, [`+refs/heads/${branch}:${into}`], s.link.auth).catch(() => undefined);
    if ((await s.git.revParse(head)) === null) return false;
  }
  return s.git.isMerged(tip, head);
}

async function followOne(s: SyncServices, id: string, report: SyncReport): Promise<void> {
  const { forge } = s.link;
  const task = s.lifecycle.get(id)!;
  const record = task.pr!;
  const pull = await forge.getPullRequest(record.number);
  report.pulls.set(id, pull);
  if (pull.state === 'merged') {
    const behind = task.status === 'verified' ? await mergedBehind(s, id, pull, report.onto) : null;
    if (behind !== null) {
      s.lifecycle.prMergedBehind(id, { ...record, state: 'merged', url: pull.url }, behind);
      s.log(id, behind, 'warn');
      report.mergedBehind.push({ id, reason: behind });
      return;
    }
    await mergedOnForge(s, id, pull, report.onto, s.tickDone);
    report.merged.push(id);
    return;
  }
  if (pull.state === 'closed') {
    await closedOnForge(s, id, pull);
    report.closed.push(id);
    return;
  }
  const [ci, review] = await Promise.all([forge.ci(pull.headSha), forge.review(pull.number)]);
  const seen: PrRecord = { ...record, url: pull.url, draft: pull.draft, ci: ci.state, review };
  if (task.status !== 'verified') {
    s.lifecycle.recordPr(id, seen);
    report.open.push(id);
    return;
  }
  // CI on a head someone else pushed is theirs to fix: loopfleet answers only the CI of its own push.
  if (ci.state === 'failing' && record.ciAnswered !== pull.headSha && pull.headSha === record.pushed) {
    const names = ci.failing.map((f) => f.name).join(', ') || 'a check';
    const reason = `PR #${pull.number}: CI failing (${names.slice(0, 200)}); a new attempt fixes it`;
    s.lifecycle.recordPr(id, {
      ...seen,
      ciAnswered: pull.headSha,
      sentBackFor: `the CI failed (${names.slice(0, 200)})`,
    });
    s.lifecycle.prWork(id, reason, ciEvidence(pull.number, pull.headSha, ci));
    s.log(id, reason, 'warn');
    report.sentBack.push({ id, reason });
    return;
  }
  const answered = new Set(record.answered);
  const read = await forge.comments(pull.number, record.commentsSince ?? undefined);
  const fresh = read.filter((c) => !answered.has(c.id));
  const newest = read.reduce<string | null>(
    (max, c) => (max === null || c.createdAt > max ? c.createdAt : max),
    record.commentsSince ?? null,
  );
  seen.commentsSince = newest;
  const work = fresh.filter(startsWork);
  const refused = fresh.filter((c) => !c.authorCanWrite && startsWork({ ...c, authorCanWrite: true }));
  if (refused.length > 0) {
    const who = [...new Set(refused.map((c) => `${userName(c.author)} (${userName(c.permission)})`))];
    s.log(
      id,
      `PR #${pull.number}: ${refused.length} review${refused.length === 1 ? '' : 's'} or comment${refused.length === 1 ? '' : 's'} by ${who.slice(0, 5).join(', ')}${who.length > 5 ? ` and ${who.length - 5} more` : ''} not acted on: no write permission on the repository`,
      'warn',
    );
  }
  if (work.length === 0) {
    s.lifecycle.recordPr(id, { ...seen, answered: remember(record.answered, refused) });
    report.open.push(id);
    return;
  }
  // The line comments by writers that came with a review belong to it: they are answered with it.
  const context = fresh.filter(
    (c: ForgeComment) => c.authorCanWrite && c.kind === 'review-comment' && !work.includes(c),
  );
  const used = [...work, ...context];
  const asked = work.some((c) => c.kind === 'review') ? 'changes requested' : 'asked for a new attempt';
  const reason = `PR #${pull.number}: ${asked} by a reviewer; a new attempt answers it`;
  s.lifecycle.recordPr(id, {
    ...seen,
    answered: remember(record.answered, [...refused, ...used]),
    sentBackFor: `${asked} by a reviewer`,
  });
  s.lifecycle.prWork(id, reason, reviewEvidence(pull.number, used));
  s.log(id, reason);
  report.sentBack.push({ id, reason });
}
