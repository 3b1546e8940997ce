import type { FleetSnapshotSummary } from '../core/task/events.js';
import { commandRefusal, type TaskCommand as AnyTaskCommand } from '../domain/task-rules.js';
import type { FleetConfig, TaskState } from '../domain/types.js';
import { discardedRef, taskBranch } from '../domain/layout.js';

/**
 * How the TUI words the task commands. Which status allows which command is the domain's one table
 * ({@link canRun}), the same the engine enforces; the engine has the final word (a command it refuses
 * rejects with a message), the TUI checks only to spare a round trip and explain the key.
 */
export type TaskCommand = Extract<AnyTaskCommand, 'merge' | 'discard' | 'retry' | 'approve'>;

/** Why `command` does not apply to `task`, or null when it does. */
export function refusal(command: TaskCommand, task: TaskState | undefined): string | null {
  if (task === undefined) return 'No task selected';
  return commandRefusal(command, task.id, task.status);
}

export function branchOf(task: TaskState): string {
  return task.branch ?? taskBranch(task.id);
}

/** Whether `m` on the task opens or updates its pull request (`land: pr`) rather than merging locally. */
export function mergesByPr(task: TaskState, config: Pick<FleetConfig, 'land'>): boolean {
  return task.pr?.state === 'open' || config.land === 'pr';
}

/** The question asked before a merge or discard; it names exactly what will happen. */
export function confirmPrompt(command: 'merge' | 'discard', task: TaskState, base: string, pr = false): string {
  const branch = branchOf(task);
  if (command === 'merge' && pr) return `Push ${branch} and open or update its pull request into ${base}? y/n`;
  if (command === 'merge') return `Merge ${branch} into ${base}? y/n`;
  return `Discard ${task.id}: remove its worktree and branch ${branch} (kept as ${discardedRef(task.id)})? y/n`;
}

export function progressText(command: TaskCommand, task: TaskState, base: string, pr = false): string {
  const branch = branchOf(task);
  switch (command) {
    case 'merge':
      return pr ? `Pushing ${branch} for its pull request…` : `Merging ${branch} into ${base}…`;
    case 'discard':
      return `Discarding ${task.id}…`;
    case 'retry':
      return `Queueing ${task.id} again…`;
    case 'approve':
      return `Approving the plan of ${task.id}…`;
  }
}

export function doneText(command: TaskCommand, task: TaskState, base: string, pr = false): string {
  const branch = branchOf(task);
  switch (command) {
    case 'merge':
      return pr ? `Pushed ${branch}: its pull request is open` : `Merged ${branch} into ${base}`;
    case 'discard':
      return `Discarded ${task.id} (recoverable from ${discardedRef(task.id)})`;
    case 'retry':
      return `${task.id} is queued again`;
    case 'approve':
      return `${task.id}'s plan is approved: it is queued to implement it`;
  }
}

/** What `p` does in this fleet state, or why it does nothing. */
export function pauseAction(
  state: FleetSnapshotSummary['state'],
): { action: 'pause' | 'resume' } | { refusal: string } {
  switch (state) {
    case 'paused':
      return { action: 'resume' };
    case 'running':
    case 'idle':
      return { action: 'pause' };
    case 'stopping':
      return { refusal: 'The fleet is stopping: nothing to pause' };
    case 'finished':
      return { refusal: 'The fleet has finished: nothing to pause or resume' };
  }
}

export function errorText(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}
