/** Fleet and task settings from BACKLOG.md's front matter, defaults applied. Plain data only: every value survives a JSON round-trip. */
import type { CheckSpec } from './check-types.js';
import type { ForgeSetting } from './forge-setting.js';
import type { TrackerSetting } from './tracker-setting.js';

/**
 * How far a task goes on its own: `plan` waits for a person to approve the explorer's plan, `review` (the
 * default) waits for a person to merge the verified branch, `auto` merges a verified task by itself.
 */
export const AUTONOMY_LEVELS = ['plan', 'review', 'auto'] as const;
export type Autonomy = (typeof AUTONOMY_LEVELS)[number];

/** The kinds of change `notify_on:` may name; a run that ends sends one `summary`. */
export const NOTIFY_KINDS = [
  'verified',
  'failed',
  'conflict',
  'awaiting-approval',
  'paused',
  'gate',
  'idle',
  'summary',
  'review',
] as const;
export type NotifyKind = (typeof NOTIFY_KINDS)[number];

/** The finders of `loopfleet discover` (and of `discover: { only }`). */
export const DISCOVER_SOURCES = ['todo', 'tests', 'lint', 'deps', 'issues'] as const;
export type DiscoverSource = (typeof DISCOVER_SOURCES)[number];

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
  /** `parallel:` — the tasks' default number of candidates per attempt round (1: one implementer) */
  parallel: number;
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
  notifyOn?: NotifyKind[] | null;
  /** `discover: { every, only }` — `loopfleet --watch` runs discover this often with these finders */
  discover?: { everyMs: number; only: DiscoverSource[] } | null;
  /** `land:` — how a verified task lands: the local merge (default) or a pull request on the forge */
  land?: LandMode;
  /** `remote:` — where task branches are pushed and base is fetched (default origin) */
  remote?: string;
  /** `forge:` — which forge holds the remote's repository (default auto: from the remote's URL) */
  forge?: ForgeSetting;
  /** `pr:` — how pull requests are opened */
  pr?: PrSettings;
  /**
   * `review_capacity:` — at most this many tasks running or waiting for a person (verified unlanded branches,
   * open unreviewed pull requests, plans awaiting approval); null (absent): no cap
   */
  reviewCapacity?: number | null;
  /** `tracker:` — an issue tracker whose labelled issues are tasks too, and which hears back */
  tracker?: TrackerSetting;
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
  /** forge user names whose comments and reviews count whatever their permission on the repository */
  allow: string[];
  /** how long one forge request may take before it is abandoned, ms */
  timeoutMs: number;
}
