/**
 * The merge queue: every verified task lands on base in backlog order, each on top of the previous, and
 * base only ever receives a merge whose result passed the task's checks.
 *
 * For each task: its branch is rebased onto base as it is now; its checks run again on the commit it would
 * land, in the coordinator's sandbox — after a rebase always, and otherwise unless that very commit already
 * passed them here ({@link CheckedCommits}: a worker's word never counts); only then is it merged. A
 * rebase conflict or a failing re-check sends the task back for a new attempt with the conflict or the
 * failing output as evidence, and the queue moves on to the next task; a conflict is replayed onto base
 * first, so that attempt resolves the markers rather than redoing the task.
 *
 * Invariant: between two steps the queue asks `stopped()`; a stop leaves base at the last merge that
 * passed, and every task in a state that matches git (merged, verified, or sent back).
 */
import type { RecheckOutcome } from '../attempt/attempt-io.js';

export type RebaseOutcome =
  | { kind: 'unchanged' }
  | { kind: 'rebased' }
  /** `evidence`: what the task's next attempt is told (the branch was replayed onto base with markers) */
  | { kind: 'conflict'; files: string[]; evidence: string }
  /** the worktree holds uncommitted changes to tracked files: git did not touch it */
  | { kind: 'dirty'; files: string[]; evidence: string };

export type LandOutcome =
  | { kind: 'merged'; commit: string }
  | { kind: 'conflict'; files: string[] }
  | { kind: 'refused'; reason: string };

export interface QueueSteps {
  /**
   * rebase the task's branch onto base in its worktree; on conflict the branch is replayed onto base with
   * the conflict markers left in its working tree, for the next attempt to resolve
   */
  rebase(id: string): Promise<RebaseOutcome>;
  /** the task's checks on its worktree as it is now, in the sandbox */
  recheck(id: string): Promise<RecheckOutcome>;
  /** whether the tip of the task's branch passed its checks here already (then an unrebased branch is not checked again) */
  checked(id: string): Promise<boolean>;
  /** merge the (rebased, re-checked) branch into base */
  land(id: string): Promise<LandOutcome>;
  /** verified → queued for a new attempt, with what the next attempt is told */
  sendBack(id: string, reason: string, evidence: string): void;
  /** true once the queue must stop (quit, SIGTERM, a fleet gate) */
  stopped(): boolean;
  log(id: string, message: string): void;
}

export interface QueueResult {
  merged: string[];
  sentBack: Array<{ id: string; reason: string }>;
  /** base moved under the queue (a person's commit) and the merge conflicts: the task is `conflict` now */
  conflicts: Array<{ id: string; files: string[] }>;
  /** a merge refused for a reason of the person's checkout (dirty, base checked out elsewhere): the queue stops */
  refused: { id: string; reason: string } | null;
  /** tasks the queue did not reach (it was stopped or refused) */
  notReached: string[];
}

export async function runMergeQueue(ids: readonly string[], steps: QueueSteps): Promise<QueueResult> {
  const result: QueueResult = { merged: [], sentBack: [], conflicts: [], refused: null, notReached: [] };
  for (const [index, id] of ids.entries()) {
    if (steps.stopped()) {
      result.notReached = ids.slice(index);
      break;
    }
    const rebase = await steps.rebase(id);
    if (rebase.kind === 'conflict' || rebase.kind === 'dirty') {
      const files = rebase.files.join(', ') || 'some files';
      const reason = rebase.kind === 'dirty' ? `dirty worktree: ${files}` : `conflicts with the new base in ${files}`;
      steps.sendBack(id, reason, rebase.evidence);
      result.sentBack.push({ id, reason });
      continue;
    }
    if (rebase.kind === 'rebased' || !(await steps.checked(id))) {
      steps.log(
        id,
        rebase.kind === 'rebased'
          ? 'rebased onto the new base; checking again before it lands'
          : 'not checked here at this commit; checking it before it lands',
      );
      const recheck = await steps.recheck(id);
      // A stop during the check aborts it: the task stays verified, its branch rebased, nothing merged.
      if (steps.stopped()) {
        result.notReached = ids.slice(index);
        break;
      }
      if (!recheck.pass) {
        const rebased = rebase.kind === 'rebased';
        steps.sendBack(
          id,
          `${rebased ? 'on the new base' : 'before it lands'}: ${recheck.reason}`,
          `${rebased ? 'On top of the tasks merged before it' : 'On the commit the merge queue would land'}, the check fails.\n\n${recheck.evidence}`,
        );
        result.sentBack.push({ id, reason: recheck.reason });
        continue;
      }
    }
    const landed = await steps.land(id);
    if (landed.kind === 'merged') {
      result.merged.push(id);
      continue;
    }
    if (landed.kind === 'conflict') {
      // Base moved under the queue (a person's commit): the task is `conflict`, and `r` rebases it again.
      result.conflicts.push({ id, files: landed.files });
      continue;
    }
    result.refused = { id, reason: landed.reason };
    result.notReached = ids.slice(index + 1);
    break;
  }
  return result;
}
