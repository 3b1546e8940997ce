import type { GitPort } from '../../ports/git.js';
import { RefusedError, UsageError } from '../../domain/errors.js';
import { BACKLOG_NAME, discardedRef, replayedRef, type TaskPaths } from '../../domain/layout.js';
import { committedTick } from '../backlog/committed-tick.js';
import { boundHunks, conflictDetail } from './conflict-forecast.js';
import { replayConflict, type ReplayedConflict } from './conflict-work.js';
import { commandRefusal, type TaskCommand } from '../../domain/task-rules.js';
import type { TaskLifecycle } from '../task/lifecycle.js';
import { candidateRef } from '../../domain/layout.js';
import type { TaskState } from '../../domain/types.js';
import type { SetupTrust } from '../attempt/setup-trust.js';

/** What merge, discard and retry need from the fleet, given once. */
export interface ActionServices {
  git: GitPort;
  lifecycle: TaskLifecycle;
  base: string;
  paths: TaskPaths;
  /** ticks `[x]` on the task's item in BACKLOG.md; false when the item is gone */
  tickDone: (id: string) => Promise<boolean>;
  /** the task was merged or found in conflict during this run (for the run's report) */
  markRan: (id: string) => void;
  log: (message: string, id?: string) => void;
  /** a recurring task (`every:`) is merged without ticking its item: it runs again */
  recurring?: (id: string) => boolean;
  /** told of every landing on base, so that setup on a base holding agent-written code runs sandboxed */
  setupTrust: SetupTrust;
}

/**
 * The person's commands on a finished task. Each asks the domain's command table first (the same one the
 * TUI reads), so a refused command touches nothing; the status changes go through the task lifecycle.
 */
export class FleetActions {
  readonly #s: ActionServices;

  constructor(services: ActionServices) {
    this.#s = services;
  }

  /**
   * Merge a verified task's branch into base. Order matters for "never lose work": the merge commit exists
   * on base before the worktree and branch are removed, and the branch is deleted only once git agrees it
   * is merged.
   */
  async merge(id: string): Promise<void> {
    const { git, lifecycle, base } = this.#s;
    const task = this.#allowed('merge', id);
    const branch = this.#s.paths.branchOf(id);
    // BACKLOG.md is the one tracked file loopfleet edits in the checkout (ids, ticks): its own edits must
    // not block the next merge. Agents cannot change it (the guard protects it), so the merge never does.
    // The tick goes into the merge commit, so the checkout is clean after it; the person's uncommitted
    // BACKLOG.md edits stay uncommitted (tickDone below makes the same tick in their copy).
    const recurring = this.#s.recurring?.(id) === true;
    const result = await this.#s.setupTrust.landing(() =>
      git.merge(branch, base, `Merge ${branch}: ${id} ${task.title}\n\nVerified by loopfleet.`, {
        ignoreDirty: [BACKLOG_NAME],
        ...(recurring
          ? {}
          : {
              fileEdit: {
                path: BACKLOG_NAME,
                edit: (committed: string, working: string | null) => committedTick(committed, working, id),
              },
            }),
      }),
    );
    if (result.kind === 'refused') throw new RefusedError(`merge of ${id} refused: ${result.reason}`);
    if (result.kind === 'conflict') {
      const forecast = await git.forecastConflicts(base, branch);
      lifecycle.conflict(
        id,
        `merge into ${base} conflicts in ${result.files.join(', ') || 'some files'}; ${base} is untouched (r rebases it onto ${base}, or lets a new attempt resolve the conflict)`,
        boundHunks([conflictDetail(base, forecast)]),
      );
      this.#s.markRan(id);
      return;
    }
    await git.removeWorktree(this.#s.paths.worktreeOf(id), true);
    if (await git.isMerged(branch, base)) await git.deleteBranch(branch, true);
    const ticked = recurring || (await this.#s.tickDone(id));
    // The merge commit carries the tick, so the checkout's BACKLOG.md changed with it: the backlog watcher
    // may have seen the `[x]` and marked the task merged already. Either way it is merged exactly once.
    if (lifecycle.get(id)?.status === 'verified')
      lifecycle.merge(id, ticked ? null : 'merged; its item was no longer in BACKLOG.md to tick');
    this.#s.markRan(id);
    this.#s.log(`merged ${branch} into ${base} (${result.commit.slice(0, 8)})`, id);
  }

  /** Approve the plan of a task awaiting approval: `plan` (a person's edit) or the explorer's own. */
  approve(id: string, plan?: string): void {
    const task = this.#allowed('approve', id);
    const proposed = task.attempts.findLast((a) => a.plan !== null)?.plan ?? null;
    const approved = plan !== undefined && plan.trim() !== '' ? plan.trim() : proposed;
    if (approved === null) throw new RefusedError(`${id} has no plan to approve`);
    this.#s.lifecycle.approve(id, approved);
    this.#s.log(plan === undefined ? 'plan approved' : 'edited plan approved', id);
  }

  /** Remove the worktree and branch of a finished task, keeping the branch's commit under a recoverable ref. */
  async discard(id: string): Promise<void> {
    const { git } = this.#s;
    this.#allowed('discard', id);
    const branch = this.#s.paths.branchOf(id);
    const commit = await git.revParse(`refs/heads/${branch}`);
    if (commit !== null) await git.updateRef(discardedRef(id), commit);
    await git.removeWorktree(this.#s.paths.worktreeOf(id), true);
    if (commit !== null) await git.deleteBranch(branch, true);
    // An explicit discard is the one way a best-of-N task's kept candidates go (see CandidateRound).
    const task = this.#s.lifecycle.get(id);
    for (const c of (task?.attempts ?? []).flatMap((a) => a.candidates ?? []))
      if (c.ref !== null) await git.deleteRef(candidateRef(id, c.k));
    // A branch replayed onto base for a conflict to be resolved holds its change uncommitted: what it was
    // before is under the replayed ref, and the person must be told so, or the discard looks like a loss.
    const replayed = await git.revParse(replayedRef(id));
    const before =
      replayed !== null && replayed !== commit ? `; before its conflict was replayed: ${replayedRef(id)}` : '';
    this.#s.lifecycle.discard(
      id,
      commit === null
        ? `discarded${before}`
        : `discarded; recover with: git branch ${branch} ${discardedRef(id)}${before}`,
    );
  }

  /**
   * A failed or discarded task goes back to the queue with a fresh budget of attempts, tokens, cost and time.
   * A conflict task has its branch rebased onto the new base and is verified again; when the rebase
   * conflicts, the branch is replayed onto base with the conflict markers in its worktree, and a new attempt
   * resolves them (the old tip kept under a ref). Returns true when the task was queued again.
   */
  async retry(id: string): Promise<boolean> {
    const task = this.#allowed('retry', id);
    if (task.status !== 'conflict') {
      this.#s.lifecycle.requeue(id, { kind: 'retry' });
      return true;
    }
    const worktree = this.#s.paths.worktreeOf(id);
    const branch = this.#s.paths.branchOf(id);
    const { base } = this.#s;
    let replayed: ReplayedConflict;
    try {
      if (await this.#s.git.rebase(worktree, base)) {
        this.#s.log(`rebased ${branch} onto ${base}; verifying again`, id);
        this.#s.lifecycle.requeue(id, { kind: 'rebased' });
        return true;
      }
      replayed = await replayConflict(this.#s.git, { id, worktree, branch, base });
    } catch (error) {
      if (!(error instanceof RefusedError)) throw error;
      // Never "resolve it in the worktree" by hand: its content, nested repositories included, is the
      // agent's, and git run there can run their config. `git diff A...B` in the checkout reads commits only.
      this.#s.lifecycle.conflict(
        id,
        `rebase onto ${base} conflicts and the branch could not be replayed onto it (${error.message}); \`git diff ${base}...${branch}\` shows the change; \`loopfleet discard ${id}\` then \`loopfleet retry ${id}\` starts it again from ${base}`,
        task.conflicts ?? [],
      );
      return false;
    }
    this.#s.log(
      `${branch} conflicts with ${base} in ${replayed.files.join(', ') || 'some files'}: replayed onto ${base} with conflict markers for a new attempt to resolve`,
      id,
    );
    this.#s.lifecycle.requeue(id, { kind: 'replayed', evidence: replayed.evidence });
    return true;
  }

  #allowed(command: TaskCommand, id: string): Readonly<TaskState> {
    const task = this.#s.lifecycle.get(id);
    if (task === undefined) throw new UsageError(`no task ${id} in this fleet`);
    const refusal = commandRefusal(command, id, task.status);
    if (refusal !== null) throw new RefusedError(refusal);
    return task;
  }
}
