import { RefusedError } from '../../../domain/errors.js';
import type { FleetConfig, TaskSpec } from '../../../domain/types.js';
import type { Landing } from '../landing.js';
import { mergedOnForge } from './landed.js';
import type { PrPublisher } from './publish.js';
import type { SyncReport, SyncServices } from './sync.js';

/**
 * Open pull requests kept mergeable, and landed by loopfleet under `autonomy: auto` — the merge queue's
 * rule applied to PRs.
 *
 * Kept mergeable: once base (as fetched) has moved past a verified task's branch, the branch is rebased onto
 * it, checked again in the sandbox (the merge queue's verify-only path) and pushed under its lease; a
 * conflict, or a check that fails there, sends the task back for a new attempt as the local queue does
 * (the conflict replayed onto base for the attempt to resolve).
 *
 * Landed: the first verified task in backlog order whose autonomy lets it land and whose PR is ready — not
 * a draft, CI passing, no changes requested, its branch containing base, and base's protection satisfied
 * (approvals) — is merged with `ForgePort.merge` on the head loopfleet pushed. At most one per pass: base
 * moves with it, so the next waits to be rebased and checked on it, exactly as in the local queue.
 */

export interface KeepServices extends SyncServices {
  landing: Landing;
  publisher: PrPublisher;
  specs: () => ReadonlyMap<string, TaskSpec>;
  /** whether the task may land without a person (`autonomy: auto` or --auto-merge) */
  autoLand: (id: string) => boolean;
  signal: AbortSignal;
}

/** The verified tasks with an open PR whose branch does not contain `onto`, in backlog order. */
async function behind(s: KeepServices, onto: string): Promise<string[]> {
  const ids: string[] = [];
  for (const id of s.order()) {
    const t = s.lifecycle.get(id);
    if (t?.status !== 'verified' || t.pr?.state !== 'open') continue;
    if (!(await s.git.isMerged(onto, s.paths.branchOf(id)))) ids.push(id);
  }
  return ids;
}

export interface KeepResult {
  rebased: string[];
  sentBack: Array<{ id: string; reason: string }>;
  refused: Array<{ id: string; reason: string }>;
}

export async function keepMergeable(s: KeepServices, onto: string, config: FleetConfig): Promise<KeepResult> {
  const result: KeepResult = { rebased: [], sentBack: [], refused: [] };
  const ids = await behind(s, onto);
  if (ids.length === 0) return result;
  const queue = await s.landing.queue(ids, s.specs(), config, s.signal, onto, async (id) => {
    try {
      const pushed = await s.publisher.publish(id, {
        why: `rebased onto ${s.base} as it is now and checked again`,
        diffSincePush: false,
      });
      result.rebased.push(id);
      return { kind: 'merged', commit: pushed.pushed ?? '' };
    } catch (error) {
      if (!(error instanceof RefusedError)) throw error;
      result.refused.push({ id, reason: error.message });
      s.log(id, error.message, 'warn');
      // A refused push stops nothing else: each PR is its own branch.
      return { kind: 'conflict', files: [] };
    }
  });
  result.sentBack.push(...queue.sentBack);
  return result;
}

/** The one PR loopfleet merges in this pass, if any is ready (see above); returns its task's id. */
export async function landReady(s: KeepServices, report: SyncReport): Promise<string | null> {
  const { forge } = s.link;
  if (report.onto === null) return null;
  let protection: Awaited<ReturnType<typeof forge.branchProtection>> | null = null;
  for (const id of s.order()) {
    const t = s.lifecycle.get(id);
    const pull = report.pulls.get(id);
    if (t?.status !== 'verified' || t.pr?.state !== 'open' || pull === undefined || !s.autoLand(id)) continue;
    const pr = t.pr;
    if (
      pr.draft ||
      pr.ci !== 'passing' ||
      pr.review === 'changes-requested' ||
      pull.mergeable === false ||
      pr.pushed !== pull.headSha
    )
      continue;
    if (!(await s.git.isMerged(report.onto, s.paths.branchOf(id)))) continue;
    protection ??= await forge.branchProtection(s.base);
    if (protection.requiredApprovals > 0 && pr.review !== 'approved') continue;
    const outcome = await forge.merge(
      pr.number,
      pull.headSha,
      `Merge ${s.paths.branchOf(id)}: ${id}\n\nVerified by loopfleet.`,
    );
    if (!outcome.merged) {
      s.log(id, `PR #${pr.number} not merged: ${outcome.reason}`, 'warn');
      continue;
    }
    s.log(id, `PR #${pr.number} merged by loopfleet (autonomy auto)`);
    // Base moved: fetch it again so the kept-branch decision sees the merge.
    await s.git.fetch(s.link.remote, [`+refs/heads/${s.base}:${report.onto}`], s.link.auth);
    await mergedOnForge(s, id, { ...pull, state: 'merged' }, report.onto, s.tickDone);
    return id;
  }
  return null;
}
