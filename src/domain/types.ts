/** Shared vocabulary of the engine. Plain data only: everything here must survive JSON round-trips. */
import type { ForgeSetting } from './forge-setting.js';

export const TASK_STATUSES = ['queued', 'running', 'awaiting-approval', 'verified', 'merged', 'discarded', 'failed', 'conflict'] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

export const PHASES = ['setup', 'explore', 'implement', 'verify'] as const;
export type Phase = (typeof PHASES)[number];

export const ROLES = ['explorer', 'implementer', 'verifier'] as const;
export type Role = (typeof ROLES)[number];

/** Token usage as the Messages API reports it. Every field is a plain count, never null. */
export interface Usage {
  input: number;
  output: number;
  cacheWrite: number;
  cacheRead: number;
}

export const ZERO_USAGE: Readonly<Usage> = Object.freeze({ input: 0, output: 0, cacheWrite: 0, cacheRead: 0 });

export function addUsage(a: Usage, b: Usage): Usage {
  return {
    input: a.input + b.input,
    output: a.output + b.output,
    cacheWrite: a.cacheWrite + b.cacheWrite,
    cacheRead: a.cacheRead + b.cacheRead,
  };
}

/** The `tokens` figure everywhere (gates, status --json) is the sum of all four kinds. */
export function totalTokens(u: Usage): number {
  return u.input + u.output + u.cacheWrite + u.cacheRead;
}

/** Per-task limits. `null` means "no limit". */
export interface TaskGates {
  attempts: number;
  tokens: number | null;
  /** wall clock, milliseconds */
  timeMs: number | null;
  /** US dollars */
  costUsd: number | null;
}

export interface FleetGates {
  tokens: number | null;
  costUsd: number | null;
  timeMs: number | null;
}

/** Price of one million tokens, US dollars. */
export interface ModelPrice {
  input: number;
  cacheWrite5m: number;
  cacheWrite1h: number;
  cacheRead: number;
  output: number;
}

export interface PortRange {
  from: number;
  to: number;
}

/** Fleet settings from BACKLOG.md front matter, defaults applied. */
export interface FleetConfig {
  /** null → the branch checked out in the user's repository when the fleet starts */
  base: string | null;
  concurrency: number;
  check: string | null;
  setup: string | null;
  model: string;
  review: boolean;
  gates: TaskGates;
  fleetGates: FleetGates;
  ports: PortRange;
  notify: string | null;
  /** 'auto' → bubblewrap where available, shell tool off otherwise; 'off' → run unsandboxed, said loudly */
  sandbox: 'auto' | 'off';
  /** guard checks */
  maxFiles: number;
  maxLines: number;
  protect: string[];
  /** guard: the largest file an attempt may add or change, in bytes */
  maxFileBytes: number;
  /** guard: the whole diff in bytes: added and removed lines, binary files by their size */
  maxBytes: number;
  /** gitignore-style patterns of test files, besides the usual conventions (test/, *.test.*, test_*.py, …) */
  tests: string[];
  /** per-model overrides of the price table */
  prices: Record<string, ModelPrice>;
  checkTimeoutMs: number;
  setupTimeoutMs: number;
  /** `env:` — host variables (by name) passed to setup, checks and agents, besides the fixed allow-list */
  env: string[];
  /** `discovered:` — 'hold' (default): items under `## Discovered` are proposals and do not run; 'run': they run */
  discovered: 'hold' | 'run';
  /** `lessons:` — keep and use .loop-worktrees/lessons.md (default true) */
  lessons: boolean;
  /** `autonomy:` — how far a task goes without a person (default 'review'; see Autonomy) */
  autonomy: Autonomy;
  /** hosts (`host` or `host:port`) a CLI agent may reach besides its model endpoint */
  network?: string[];
  /**
   * The checks, in order, when `check:` is a list. Absent or empty → the single `check` string above. For a
   * list, `check` holds the required commands joined with ` && ` so that readers of the single string still
   * see every command that decides a task.
   */
  checks?: CheckSpec[];
  /** after a passing check, show that the new tests fail without the change (`prove: true`) */
  prove?: boolean;
  /** `notify_on:` — the kinds of change the notify command gets; null (absent): every change */
  notifyOn?: string[] | null;
  /** `discover: { every, only }` — `loopfleet --watch` runs discover this often with these finders */
  discover?: { everyMs: number; only: string[] } | null;
  /** `land:` — how a verified task lands: the local merge (default) or a pull request on the forge */
  land?: LandMode;
  /** `remote:` — where task branches are pushed and base is fetched (default origin) */
  remote?: string;
  /** `forge:` — which forge holds the remote's repository (default auto: from the remote's URL) */
  forge?: ForgeSetting;
  /** `pr:` — how pull requests are opened */
  pr?: PrSettings;
}

export const LAND_MODES = ['merge', 'pr'] as const;
export type LandMode = (typeof LAND_MODES)[number];

/** auto: from the remote's URL; none: no forge (land: pr is then refused); or a forge and repository named outright. */
export type { ForgeSetting } from './forge-setting.js';

export interface PrSettings {
  draft: boolean;
  labels: string[];
  reviewers: string[];
  /** how often `--watch` reads the open pull requests, ms */
  syncEveryMs: number;
}

/**
 * A task's pull request (GitHub) or merge request (GitLab), as loopfleet last saw it. `pushed` is the
 * commit loopfleet last pushed to the branch: the lease of its next push. `answered` holds the ids of the
 * comments and reviews that already started an attempt (or were judged not to), so none starts two;
 * `ciAnswered` the head commit whose failing CI already sent the task back.
 */
export interface PrRecord {
  number: number;
  url: string;
  state: 'open' | 'merged' | 'closed';
  draft: boolean;
  ci: 'pending' | 'passing' | 'failing' | 'none';
  review: 'none' | 'approved' | 'changes-requested';
  pushed: string | null;
  /** the attempt whose commit was last pushed: a later push's comment counts what came after it */
  pushedAttempt: number;
  answered: string[];
  ciAnswered: string | null;
  /** the newest comment time (ISO) a sync has read: the next reads only what came after */
  commentsSince?: string | null;
  /** why the PR sent its task back (red CI, a review): the next push's comment says so */
  sentBackFor?: string | null;
}

/** What `status --json` says of a task's pull request. */
export interface PrStatusJson {
  number: number;
  url: string;
  state: PrRecord['state'];
  draft: boolean;
  ci: PrRecord['ci'];
  review: PrRecord['review'];
}

/** One named check. A check with `required: false` is run and reported but never fails a task. */
export interface CheckSpec {
  name: string;
  run: string;
  required: boolean;
}

/** What a test runner's summary says. `failing` names the failing tests where the output names them. */
export interface TestCounts {
  /** node:test, vitest, jest, mocha, ava, pytest, go, cargo */
  runner: string;
  passed: number;
  failed: number;
  skipped: number;
  total: number;
  failing?: string[];
  /**
   * set when one runner's summaries in the output do not all say the same (a test printing a summary of
   * its own): what they said. Such counts are not believed: the check fails (checks.ts).
   */
  disagreeing?: string;
}

/** One checklist item of BACKLOG.md. Per-task settings are undefined when the item does not set them. */
export interface TaskSpec {
  id: string;
  title: string;
  /** 1-based line of the `- [ ]` item in BACKLOG.md */
  line: number;
  done: boolean;
  description: string;
  check?: string;
  setup?: string;
  attempts?: number;
  tokens?: number;
  timeMs?: number;
  costUsd?: number;
  model?: string;
  after: string[];
  files: string[];
  review?: boolean;
  /** where `loopfleet discover` found the task, e.g. `todo src/parse.ts:88`, `dep lodash`, `gh#12` */
  source?: string;
  priority?: TaskPriority;
  /** the item is under a `## Discovered` heading: a proposal that runs only with `discovered: run` */
  discovered?: true;
  /** a list `check:` of this task (then `check` holds its required commands joined with ` && `) */
  checks?: CheckSpec[];
  prove?: boolean;
  autonomy?: Autonomy;
  /** `every:` — a recurring task: queued again this many milliseconds after each run ends */
  everyMs?: number;
  /** `land:` of this task, over the front matter's */
  land?: LandMode;
}

/**
 * How far a task goes on its own: `plan` waits for a person to approve the explorer's plan, `review` (the
 * default) waits for a person to merge the verified branch, `auto` merges a verified task by itself.
 */
export const AUTONOMY_LEVELS = ['plan', 'review', 'auto'] as const;
export type Autonomy = (typeof AUTONOMY_LEVELS)[number];

export const TASK_PRIORITIES = ['high', 'normal', 'low'] as const;
export type TaskPriority = (typeof TASK_PRIORITIES)[number];

export interface Backlog {
  path: string;
  config: FleetConfig;
  tasks: TaskSpec[];
}

export interface CheckResult {
  command: string;
  exitCode: number | null;
  timedOut: boolean;
  /** the last lines of combined stdout+stderr, bounded */
  outputTail: string;
  durationMs: number;
  /** the check's name (its command unless named); absent on results written before named checks */
  name?: string;
  /** false: reported, never fails the task */
  required?: boolean;
  /** test counts parsed from the output, null when no known runner's summary was found */
  counts?: TestCounts | null;
  /** how the attempt was judged on this check (see checks.ts) */
  judged?: CheckJudgement;
  /** why, in words, when it is not a plain pass */
  note?: string | null;
}

/**
 * passed: exit 0; failed: fails the attempt; warning: a `required: false` check failed; not-worse: failed
 * on base already and this attempt did not make it worse.
 */
export type CheckJudgement = 'passed' | 'failed' | 'warning' | 'not-worse';

/** A check run once on the commit a task starts from, cached by commit and command. */
export interface BaselineResult {
  name: string;
  command: string;
  commit: string;
  exitCode: number | null;
  timedOut: boolean;
  counts: TestCounts | null;
  durationMs: number;
  outputTail: string;
}

/**
 * `prove: true`: the attempt's tests run against the base's code. proved: the check failed there;
 * not-proved: it passed, so the tests do not exercise the change; no-tests: the diff holds no test file;
 * tests-only: the diff holds nothing but tests, so there is no change to prove (not a failure).
 */
export interface ProofResult {
  status: 'proved' | 'not-proved' | 'no-tests' | 'tests-only';
  /** test files of the diff kept in the scratch copy */
  tests: string[];
  /** non-test files set back to base */
  restored: string[];
  command: string | null;
  exitCode: number | null;
  counts: TestCounts | null;
  outputTail: string;
  message: string;
}

export interface Verdict {
  pass: boolean;
  reasons: string[];
}

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
  /** a queued task waiting for the task whose planned files overlap its own; null otherwise */
  waitingFor?: string | null;
  /** a recurring task (`every:`): when it runs next, ISO time; null when it is not waiting. Absent otherwise. */
  nextRun?: string | null;
  /** a recurring task's finished runs */
  runs?: RunRecord[];
  /** the task's pull request (`land: pr`); null when it has none */
  pr?: PrStatusJson | null;
  /** the worker that runs the attempt, or ran the last one that ran on a worker; absent without a queue */
  worker?: string;
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
