/** What `status --json` prints. Plain data only: every value survives a JSON round-trip. */
import type { CheckJudgement, ProofResult, TestCounts } from './check-types.js';
import type { PrStatusJson } from './pr-types.js';
import type { RunRecord } from './task-state.js';
import type { Phase, TaskStatus } from './vocabulary.js';

/** What `status --json` prints per task, in backlog order. */
export interface TaskStatusJson {
  id: string;
  title: string;
  status: TaskStatus;
  phase: Phase | null;
  attempt: number;
  maxAttempts: number;
  tokens: number;
  costUsd: number;
  branch: string | null;
  reason: string | null;
  /** the last attempt's checks: name, command, exit code, judgement, counts */
  checks?: CheckStatusJson[];
  /** the last measured test counts (summed over the checks that give counts) */
  counts?: TestCounts | null;
  /** the checks on base */
  baseline?: CheckStatusJson[];
  proof?: ProofResult | null;
  /** a verified branch's predicted conflicts (the base branch's name, task ids); [] when none */
  conflictsWith?: string[];
  /** a verified task's predicted conflicts, or a `conflict` task's, with the files (no hunks); [] otherwise */
  conflicts?: Array<{ with: string; files: string[] }>;
  /** a part (`T-7.1`): the task it is a part of; null for every other task */
  parent?: string | null;
  /** a task split into parts: their ids, in landing order; absent otherwise */
  parts?: string[];
  /** a queued task waiting for the task whose planned files overlap its own; null otherwise */
  waitingFor?: string | null;
  /**
   * a queued task that needs a person, while `review_capacity:` is reached: the tasks running and waiting for a
   * person, and the capacity; null otherwise
   */
  waitingForReview?: { running: number; waiting: number; capacity: number } | null;
  /** a recurring task (`every:`): when it runs next, ISO time; null when it is not waiting. Absent otherwise. */
  nextRun?: string | null;
  /** a recurring task's finished runs */
  runs?: RunRecord[];
  /** a tracker task's issue (`tracker:`): which tracker, the task id, the address; absent otherwise */
  source?: { type: string; id: string; url: string | null };
  /** the task's pull request (`land: pr`); null when it has none */
  pr?: PrStatusJson | null;
  /** the worker that runs the attempt, or ran the last one that ran on a worker; absent without a queue */
  worker?: string;
  /** the last worker whose claim of `verified` the coordinator's own check contradicted; absent when none was */
  workerFlag?: { worker: string; attempt: number; reason: string };
  /**
   * a best-of-N task's candidates (`parallel:`), every round's, by number: how each ended, the ref that keeps
   * it (null for the chosen one, whose commit is the task's branch, and for one that committed nothing)
   */
  candidates?: CandidateStatusJson[];
}

export interface CheckStatusJson {
  name: string;
  command: string;
  required: boolean;
  exitCode: number | null;
  timedOut: boolean;
  judged: CheckJudgement | null;
  note: string | null;
  counts: TestCounts | null;
  durationMs: number;
}

/** What `status --json --summary` prints: the fleet in figures, over every task of the backlog. */
export interface StatusSummaryJson {
  counts: Record<TaskStatus, number>;
  tasks: number;
  tokens: number;
  costUsd: number;
  /** tasks that reached verified (merged ones included) and tasks merged */
  verified: number;
  merged: number;
  /** see {@link costPerTask}: null when there is nothing to divide by */
  costPerVerified: number | null;
  costPerMerged: number | null;
}

/** One candidate of a best-of-N task in `status --json`. */
export interface CandidateStatusJson {
  k: number;
  /** how its own attempt ended: verified, check-failed, vetoed, guard-failed, setup-failed, error */
  status: string;
  ref: string | null;
  chosen: boolean;
}
