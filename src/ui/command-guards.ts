import type { FleetSnapshotSummary } from '../core/events.js';
import type { TaskState, TaskStatus } from '../domain/types.js';
import { discardedRef, taskBranch } from '../domain/layout.js';

/**
 * Which task commands apply to which statuses, and how the TUI says so. The engine has the final word (a
 * command it refuses rejects with a message); these rules only spare a round trip and explain the key.
 */
export type TaskCommand = 'merge' | 'discard' | 'retry';

const ALLOWED: Readonly<Record<TaskCommand, readonly TaskStatus[]>> = {
  merge: ['verified'],
  discard: ['verified', 'failed', 'conflict'],
  retry: ['failed', 'conflict', 'discarded'],
};

const PAST: Readonly<Record<TaskCommand, string>> = { merge: 'merged', discard: 'discarded', retry: 'retried' };

function list(words: readonly string[]): string {
  if (words.length <= 1) return words.join('');
  return `${words.slice(0, -1).join(', ')} or ${words.at(-1) ?? ''}`;
}

/** Why `command` does not apply to `task`, or null when it does. */
export function refusal(command: TaskCommand, task: TaskState | undefined): string | null {
  if (task === undefined) return 'No task selected';
  const allowed = ALLOWED[command];
  if (allowed.includes(task.status)) return null;
  return `${task.id} is ${task.status}: only ${list(allowed)} tasks can be ${PAST[command]}`;
}

export function branchOf(task: TaskState): string {
  return task.branch ?? taskBranch(task.id);
}

/** The question asked before a merge or discard; it names exactly what will happen. */
export function confirmPrompt(command: 'merge' | 'discard', task: TaskState, base: string): string {
  const branch = branchOf(task);
  if (command === 'merge') return `Merge ${branch} into ${base}? y/n`;
  return `Discard ${task.id}: remove its worktree and branch ${branch} (kept as ${discardedRef(task.id)})? y/n`;
}

export function progressText(command: TaskCommand, task: TaskState, base: string): string {
  const branch = branchOf(task);
  switch (command) {
    case 'merge':
      return `Merging ${branch} into ${base}…`;
    case 'discard':
      return `Discarding ${task.id}…`;
    case 'retry':
      return `Queueing ${task.id} again…`;
  }
}

export function doneText(command: TaskCommand, task: TaskState, base: string): string {
  const branch = branchOf(task);
  switch (command) {
    case 'merge':
      return `Merged ${branch} into ${base}`;
    case 'discard':
      return `Discarded ${task.id} (recoverable from ${discardedRef(task.id)})`;
    case 'retry':
      return `${task.id} is queued again`;
  }
}

/** What `p` does in this fleet state, or why it does nothing. */
export function pauseAction(state: FleetSnapshotSummary['state']): { action: 'pause' | 'resume' } | { refusal: string } {
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
