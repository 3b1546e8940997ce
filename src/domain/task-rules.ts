import type { Autonomy, FleetConfig, TaskSpec, TaskStatus } from './types.js';

/**
 * Rules about a task's status that the engine, the TUI and the CLI all apply. Each exists here once;
 * the engine's lifecycle enforces them, the TUI reads them only to explain a key before a round trip.
 */

export const TASK_COMMANDS = ['merge', 'discard', 'retry', 'approve'] as const;
export type TaskCommand = (typeof TASK_COMMANDS)[number];

/** Which statuses each person's command applies to. */
const ALLOWED: Readonly<Record<TaskCommand, readonly TaskStatus[]>> = {
  merge: ['verified'],
  discard: ['verified', 'failed', 'conflict', 'awaiting-approval'],
  retry: ['failed', 'conflict', 'discarded'],
  approve: ['awaiting-approval'],
};

const PAST: Readonly<Record<TaskCommand, string>> = {
  merge: 'merged',
  discard: 'discarded',
  retry: 'retried',
  approve: 'approved',
};

export function canRun(command: TaskCommand, status: TaskStatus): boolean {
  return ALLOWED[command].includes(status);
}

/** The commands a task in `status` accepts, in TASK_COMMANDS order. */
export function allowedCommands(status: TaskStatus): TaskCommand[] {
  return TASK_COMMANDS.filter((c) => canRun(c, status));
}

/** The statuses `command` applies to. */
export function statusesFor(command: TaskCommand): readonly TaskStatus[] {
  return ALLOWED[command];
}

function list(words: readonly string[]): string {
  if (words.length <= 1) return words.join('');
  return `${words.slice(0, -1).join(', ')} or ${words.at(-1) ?? ''}`;
}

/** Why `command` does not apply to task `id` in `status`, or null when it does. One wording for TUI and CLI. */
export function commandRefusal(command: TaskCommand, id: string, status: TaskStatus): string | null {
  if (canRun(command, status)) return null;
  return `${id} is ${status}: only ${list(ALLOWED[command])} tasks can be ${PAST[command]}`;
}

/**
 * "Done means merged": an item ticked `[x]` in BACKLOG.md is merged, whatever the state file says, except a
 * task still running (it finishes first; the tick applies after). `status` is undefined for a task with no record.
 */
export function statusWhenTicked(done: boolean, status: TaskStatus | undefined): TaskStatus {
  if (status === undefined) return done ? 'merged' : 'queued';
  return done && status !== 'running' ? 'merged' : status;
}

/** A task's `autonomy:`, else the front matter's. */
export function autonomyOf(spec: Pick<TaskSpec, 'autonomy'>, config: Pick<FleetConfig, 'autonomy'>): Autonomy {
  return spec.autonomy ?? config.autonomy;
}
