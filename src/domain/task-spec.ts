/** One backlog item and the backlog it is in, as parsed. Plain data only: every value survives a JSON round-trip. */
import type { CheckSpec } from './check-types.js';
import type { Autonomy, FleetConfig, LandMode } from './config-types.js';

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
  /** where `loopfleet discover` found the task, e.g. `todo lib/parse.py:88`, `dep lodash`, `gh#12` */
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
  /** `split: auto` — the explorer may answer with parts instead of a plan (see Decomposition) */
  split?: 'auto';
  /** `parallel:` — best-of-N: this many implementers per attempt round, from one plan (1 to {@link MAX_PARALLEL}) */
  parallel?: number;
  /** a part (`T-7.1`): the task it is a part of (`T-7`); its unset keys are the parent's */
  parent?: string;
  /**
   * An eval task's test files (path → content): never in the agents' worktree, written over the attempt's
   * commit in a scratch checkout for the check only ({@link checkTree}); the hidden version wins.
   */
  hiddenTests?: Record<string, string>;
}

export const TASK_PRIORITIES = ['high', 'normal', 'low'] as const;
export type TaskPriority = (typeof TASK_PRIORITIES)[number];

export interface Backlog {
  path: string;
  config: FleetConfig;
  tasks: TaskSpec[];
}
