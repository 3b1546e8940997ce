/**
 * What the landing transitions do to a task's record — the merge queue's send-back and a pull request's
 * merge, close and requested work — as pure edits of a draft. Only the task lifecycle ({@link TaskLifecycle})
 * calls these, inside its transitions: it stays the one writer.
 */
import type { TaskState } from '../../domain/types.js';
import { clearConflicts, giveEvidence } from './edits.js';

/** Back to the queue for a new attempt told `evidence`; the budget goes on, so the attempts gate bounds the cycle. */
function backToWork(t: TaskState, reason: string, evidence: string): void {
  giveEvidence(t, evidence);
  t.reason = reason;
  t.gate = null;
  t.phase = null;
  t.verifyOnly = false;
  clearConflicts(t);
}

export function sendBack(t: TaskState, reason: string, evidence: string): void {
  backToWork(t, `sent back by the merge queue: ${reason}`, evidence);
}

export function prWork(t: TaskState, reason: string, evidence: string): void {
  backToWork(t, reason, evidence);
}

/** The pull request's branch is gone (merged or closed on the forge): the task keeps no branch. */
function prEnded(t: TaskState, state: 'merged' | 'closed', reason: string | null): void {
  if (t.pr !== undefined) t.pr.state = state;
  t.reason = reason;
  t.phase = null;
  t.branch = null;
  clearConflicts(t);
}

export function prMerged(t: TaskState, reason: string | null): void {
  prEnded(t, 'merged', reason);
}

export function prClosed(t: TaskState, reason: string): void {
  delete t.approvedPlan;
  prEnded(t, 'closed', reason);
}
