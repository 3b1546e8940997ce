import type { GitPort } from '../ports/git.js';
import { RefusedError, UsageError } from '../domain/errors.js';
import type { FleetState } from './state.js';
import type { TaskSpec, TaskState, TaskStatus } from '../domain/types.js';

/** What merge, discard and retry need from the fleet. */
export interface ActionContext {
  git: GitPort;
  state: FleetState;
  base: string;
  specs: ReadonlyMap<string, TaskSpec>;
  worktreeOf: (id: string) => string;
  branchOf: (id: string) => string;
  tickDone: (id: string) => Promise<boolean>;
  setStatus: (id: string, status: TaskStatus, change?: (t: TaskState) => void) => void;
  markRan: (id: string) => void;
  /** let the scheduler pick up a task queued again (a rebased one, to be verified again) */
  reverify: () => void;
  log: (message: string, id?: string) => void;
}

import { BACKLOG_NAME } from '../domain/layout.js';

export const DISCARDED_REF = (id: string): string => `refs/loopfleet/discarded/${id}`;

function need(ctx: ActionContext, id: string): TaskState {
  const task = ctx.state.get(id);
  if (task === undefined) throw new UsageError(`no task ${id} in this fleet`);
  return task;
}

/**
 * Merge a verified task's branch into base. Order matters for "never lose work": the merge commit exists
 * on base before the worktree and branch are removed, and the branch is deleted only once git agrees it
 * is merged.
 */
export async function mergeTask(ctx: ActionContext, id: string): Promise<void> {
  const task = need(ctx, id);
  if (task.status !== 'verified') {
    throw new RefusedError(`${id} is ${task.status}: only verified tasks can be merged`);
  }
  const branch = ctx.branchOf(id);
  // BACKLOG.md is the one tracked file loopfleet edits in the checkout (ids, ticks): its own edits must
  // not block the next merge. Agents cannot change it (the guard protects it), so the merge never does.
  const result = await ctx.git.merge(branch, ctx.base, `Merge ${branch}: ${id} ${task.title}\n\nVerified by loopfleet.`, {
    ignoreDirty: [BACKLOG_NAME],
  });
  if (result.kind === 'refused') throw new RefusedError(`merge of ${id} refused: ${result.reason}`);
  if (result.kind === 'conflict') {
    ctx.setStatus(id, 'conflict', (t) => {
      t.reason = `merge into ${ctx.base} conflicts in ${result.files.join(', ') || 'some files'}; ${ctx.base} is untouched (r rebases and verifies again)`;
    });
    ctx.markRan(id);
    return;
  }
  await ctx.git.removeWorktree(ctx.worktreeOf(id), true);
  if (await ctx.git.isMerged(branch, ctx.base)) await ctx.git.deleteBranch(branch, true);
  const ticked = await ctx.tickDone(id);
  ctx.setStatus(id, 'merged', (t) => {
    t.reason = ticked ? null : 'merged; its item was no longer in BACKLOG.md to tick';
    t.phase = null;
  });
  ctx.markRan(id);
  ctx.log(`merged ${branch} into ${ctx.base} (${result.commit.slice(0, 8)})`, id);
}

/** Remove the worktree and branch of a finished task, keeping the branch's commit under a recoverable ref. */
export async function discardTask(ctx: ActionContext, id: string): Promise<void> {
  const task = need(ctx, id);
  if (!['verified', 'failed', 'conflict'].includes(task.status)) {
    throw new RefusedError(`${id} is ${task.status}: only verified, failed or conflict tasks can be discarded`);
  }
  const branch = ctx.branchOf(id);
  const commit = await ctx.git.revParse(`refs/heads/${branch}`);
  if (commit !== null) await ctx.git.updateRef(DISCARDED_REF(id), commit);
  await ctx.git.removeWorktree(ctx.worktreeOf(id), true);
  if (commit !== null) await ctx.git.deleteBranch(branch, true);
  ctx.setStatus(id, 'discarded', (t) => {
    t.reason = commit === null ? 'discarded' : `discarded; recover with: git branch ${branch} ${DISCARDED_REF(id)}`;
    t.phase = null;
    t.branch = null;
  });
}

/** A failed or discarded task goes back to the queue with a fresh budget of attempts, tokens, cost and time. */
export function retryFailed(ctx: ActionContext, id: string): void {
  const task = need(ctx, id);
  if (task.status !== 'failed' && task.status !== 'discarded') {
    throw new RefusedError(`${id} is ${task.status}: only failed, conflict or discarded tasks can be retried`);
  }
  ctx.setStatus(id, 'queued', (t) => {
    t.reason = null;
    t.gate = null;
    t.budget = freshBudget(t);
  });
}

function freshBudget(t: TaskState): TaskState['budget'] {
  return { fromAttempt: t.attempt, usage: { ...t.usage }, costUsd: t.costUsd, elapsedMs: t.elapsedMs };
}

/** A conflict task: rebase its branch onto the new base and verify it again. */
export async function retryConflict(ctx: ActionContext, id: string): Promise<void> {
  const worktree = ctx.worktreeOf(id);
  const rebased = await ctx.git.rebase(worktree, ctx.base);
  if (!rebased) {
    // Never "resolve it in the worktree": its content, nested repositories included, is the agent's, and
    // git run there can run their config. `git diff A...B` in the person's checkout reads commits only.
    const branch = ctx.branchOf(id);
    ctx.setStatus(id, 'conflict', (t) => {
      t.reason = `rebase onto ${ctx.base} conflicts; \`git diff ${ctx.base}...${branch}\` shows the change; \`loopfleet discard ${id}\` then \`loopfleet retry ${id}\` starts it again from ${ctx.base}`;
    });
    return;
  }
  ctx.log(`rebased ${ctx.branchOf(id)} onto ${ctx.base}; verifying again`, id);
  ctx.setStatus(id, 'queued', (t) => {
    t.reason = 'rebased onto the new base; verifying again';
    t.verifyOnly = true;
    t.budget = freshBudget(t);
  });
  ctx.reverify();
}
