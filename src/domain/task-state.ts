/** A task's record in the state file: its attempts, runs, budget and the fleet's totals. Plain data only: every value survives a JSON round-trip. */
import type { BaselineResult, CheckResult, ProofResult, Verdict } from './check-types.js';
import type { TaskGates } from './config-types.js';
import type { PrRecord } from './pr-types.js';
import type { Phase, Role, TaskStatus } from './vocabulary.js';
import type { Usage } from './usage.js';

export type AttemptOutcome =
  | 'running'
  | 'verified'
  | 'setup-failed'
  | 'check-failed'
  | 'guard-failed'
  | 'vetoed'
  | 'gate'
  | 'error'
  | 'interrupted'
  /** a recurring task's attempt found nothing to change: a success that ends the run */
  | 'unchanged';

export interface AttemptRecord {
  n: number;
  startedAt: string;
  endedAt: string | null;
  plan: string | null;
  usageByRole: Partial<Record<Role, Usage>>;
  costByRole: Partial<Record<Role, number>>;
  costUsd: number;
  setup: CheckResult | null;
  check: CheckResult | null;
  guard: string[];
  verdict: Verdict | null;
  outcome: AttemptOutcome;
  reason: string | null;
  commit: string | null;
  diffStat: string | null;
  /** what the next attempt is told about this one's failure */
  evidence: string | null;
  /** the failure's fingerprint, for the no-progress gate */
  fingerprint: string | null;
  /** every check of the attempt in order (`check` is the decisive one); absent in older state files */
  checks?: CheckResult[];
  /** the checks on the commit the task started from */
  baseline?: BaselineResult[];
  proof?: ProofResult | null;
  /** a best-of-N round (`parallel:`): its candidates, each one attempt toward the attempts gate */
  candidates?: CandidateRecord[];
  /** which candidate of the round became the task's branch, and how it was chosen */
  chosen?: { k: number; by: 'review' | 'rule' } | null;
}

/** One candidate of a best-of-N round: an implementer's branch from the round's plan, checked on its own. */
export interface CandidateRecord {
  /** its number within the task, counting on across rounds (1, 2, 3, then 4, …) */
  k: number;
  outcome: AttemptOutcome;
  reason: string | null;
  commit: string | null;
  /** files changed and lines added plus deleted against base; null when it committed nothing */
  files: number | null;
  lines: number | null;
  /** where it is kept when not chosen (`refs/loopfleet/candidates/<id>/<k>`); null when chosen or empty */
  ref: string | null;
}

export type GateName =
  | 'attempts'
  | 'tokens'
  | 'time'
  | 'cost'
  | 'no-progress'
  | 'fleet_tokens'
  | 'fleet_cost'
  | 'fleet_time';

/** A conflict of a task's branch with the base branch (by its name) or another task's branch (by id). */
export interface ConflictDetail {
  with: string;
  files: string[];
  /** conflict-marker regions (`<<<<<<<` … `>>>>>>>`), a few per file; a modify/delete conflict has none */
  hunks: Array<{ file: string; hunk: string }>;
}

export interface TaskState {
  id: string;
  title: string;
  status: TaskStatus;
  phase: Phase | null;
  /** current or last attempt number, 0 before the first */
  attempt: number;
  maxAttempts: number;
  usage: Usage;
  costUsd: number;
  branch: string | null;
  reason: string | null;
  gate: GateName | null;
  attempts: AttemptRecord[];
  /** total wall clock spent running, ms, across fleet restarts */
  elapsedMs: number;
  startedAt: string | null;
  updatedAt: string;
  /** model names used that the price table does not know */
  unpricedModels: string[];
  /** the task's own limits (its fields over the front matter's), for display; absent in older state files */
  gates?: TaskGates;
  /** the next attempt only verifies (check and review) the branch as it is: set after a rebase */
  verifyOnly: boolean;
  /** a verified branch's predicted conflicts: the base branch's name and task ids, in backlog order */
  conflictsWith?: string[];
  /**
   * What a conflict is made of, for the detail pane and the report: predicted for a verified task (one entry
   * per name in `conflictsWith`), or found for a task in `conflict`. Bounded: a few marker regions per file.
   */
  conflicts?: ConflictDetail[];
  /**
   * The plan a person approved (`autonomy: plan`): the task's attempts skip the explorer and implement it.
   * Absent until approved; cleared by a retry or a discard.
   */
  approvedPlan?: string | null;
  /**
   * The task whose planned files this one's plan overlaps, and the shared paths: the task waits `queued`
   * until that one is merged, discarded or failed, then implements its plan on the new base.
   */
  waitingFor?: { id: string; files: string[] } | null;
  /** the plan of the attempt now running, once its explorer has written it (what overlapping tasks see) */
  currentPlan?: string | null;
  /** where the current budget starts: a retry gives the task fresh attempts, tokens, cost and time */
  budget: TaskBudget;
  /** a recurring task's interval (`every:`), ms, as BACKLOG.md says it now; absent for other tasks */
  everyMs?: number;
  /** a recurring task's finished runs, oldest first; absent for other tasks */
  runs?: RunRecord[];
  /** a recurring task waits in `queued` until this time; null or absent: it may start now */
  nextRunAt?: string | null;
  /** the task's pull request once one was opened or found (`land: pr`); absent otherwise */
  pr?: PrRecord;
  /** the worker that runs the attempt, or ran the last one that ran on a worker; absent without a queue */
  worker?: string;
  /** the last worker whose claim the coordinator's own check contradicted; absent when none was */
  workerFlag?: WorkerFlag;
  /** a task split into parts (`split: auto`): the parts' ids, in their landing order; absent otherwise */
  parts?: string[];
  /** a split task: how many times one of its parts met a conflict on its way to base */
  partConflicts?: number;
}

/** A worker flagged on a task: it said an attempt was verified, and the coordinator's check of the commit disagreed. */
export interface WorkerFlag {
  worker: string;
  attempt: number;
  /** `worker claimed verified; coordinator check failed: …` */
  reason: string;
}

/** One finished run of a recurring task: its own cost and tokens, not the task's running totals. */
export interface RunRecord {
  startedAt: string;
  endedAt: string;
  outcome: 'merged' | 'discarded' | 'unchanged';
  costUsd: number;
  tokens: number;
}

export interface TaskBudget {
  fromAttempt: number;
  usage: Usage;
  costUsd: number;
  elapsedMs: number;
}

export interface FleetTotals {
  usage: Usage;
  costUsd: number;
  elapsedMs: number;
  startedAt: string | null;
}
