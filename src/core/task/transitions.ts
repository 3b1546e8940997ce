/**
 * The vocabulary of the task lifecycle: which statuses each named transition starts from, why a task goes
 * back to the queue, and what its listeners are told. The lifecycle ({@link TaskLifecycle}) is its one user that
 * writes; others only ask `allowedFrom`.
 */
import type { AttemptRecord, TaskState, TaskStatus } from '../../domain/types.js';

/** One change of one task, as its subscribers see it: a copy, never the lifecycle's own record. */
export interface TaskChange {
  task: TaskState;
  /** null when the record was just created */
  previousStatus: TaskStatus | null;
}

export type TaskChangeListener = (change: TaskChange) => void;

/** An attempt that ends with the transition: its number and what it measured. */
export interface EndedAttempt {
  n: number;
  record: Partial<Omit<AttemptRecord, 'n'>>;
}

/** Why a task goes back to `queued`. */
export type RequeueCause =
  /** the fleet stopped during the attempt (quit, signal, fleet gate); the attempt restarts next run */
  | { kind: 'interrupted'; reason: string }
  /** a crash or a kill left it `running`; found when the state is opened */
  | { kind: 'crashed' }
  /** a person retried a failed or discarded task: fresh attempts, tokens, cost and time */
  | { kind: 'retry' }
  /** its branch was rebased onto the new base after a conflict: the next attempt only verifies */
  | { kind: 'rebased' }
  /**
   * its branch conflicted with the new base and was replayed onto it with conflict markers in the working
   * tree: a new attempt resolves them, told `evidence` (the files and hunks)
   */
  | { kind: 'replayed'; evidence: string };

/** A transition asked of a task whose status does not allow it: a bug in the caller, never a person's mistake. */
export class IllegalTransitionError extends Error {
  override readonly name = 'IllegalTransitionError';
  constructor(
    readonly id: string,
    readonly transition: string,
    readonly status: TaskStatus,
    readonly allowed: readonly TaskStatus[],
  ) {
    super(`task ${id} is ${status}: ${transition} applies only to ${allowed.join(', ')} tasks`);
  }
}

/**
 * The statuses each transition starts from. A new transition (or a new status) is added here and as one
 * method below; nothing else in the engine writes a task.
 */
export const FROM = {
  startAttempt: ['queued', 'running'],
  setPhase: ['running'],
  setWorker: ['running'],
  flagWorker: ['running'],
  finishAttempt: ['running'],
  verify: ['running'],
  fail: ['queued', 'running'],
  awaitApproval: ['running'],
  /** its plan overlaps another task's: back to the queue until that one lands or ends */
  waitFor: ['running'],
  /** the explorer answered with parts (`split: auto`): the task waits for them to land */
  split: ['running'],
  /** every part of a split task landed and its own check passed on base: its work is on base */
  partsLanded: ['queued'],
  /** a person approved the plan: the task runs again, implementing it */
  approve: ['awaiting-approval'],
  requeueInterrupted: ['running'],
  requeueCrashed: ['running'],
  requeueRetry: ['failed', 'discarded'],
  requeueRebased: ['conflict'],
  requeueReplayed: ['conflict'],
  merge: ['verified'],
  /** an item ticked `[x]` by hand in BACKLOG.md: merged outside loopfleet, whatever loopfleet thought of it */
  mergeTicked: ['queued', 'awaiting-approval', 'verified', 'failed', 'conflict', 'discarded'],
  discard: ['verified', 'failed', 'conflict', 'awaiting-approval'],
  conflict: ['verified', 'conflict'],
  /** the merge queue could not land a verified task: back to the queue for a new attempt */
  sendBack: ['verified'],
  /** the predicted conflicts of a verified branch (no status change) */
  forecast: ['verified'],
  /** its pull request was merged on the forge (by a person, or by loopfleet under `autonomy: auto`) */
  prMerged: ['verified', 'failed', 'conflict'],
  /** its pull request was closed unmerged on the forge */
  prClosed: ['verified', 'failed', 'conflict'],
  /** its pull request's CI failed, or a reviewer asked for changes: a new attempt, pushed to the same PR */
  prWork: ['verified'],
  /** a recurring task's run ended: found nothing to change (still running), merged, or discarded */
  reschedule: ['running', 'merged', 'discarded'],
} as const satisfies Record<string, readonly TaskStatus[]>;

export type Transition = keyof typeof FROM;

/** The statuses `transition` may start from (for callers that want to ask before they act). */
export function allowedFrom(transition: Transition): readonly TaskStatus[] {
  return FROM[transition];
}
