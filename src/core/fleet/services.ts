/** What a fleet is given: its ports and engine parts (FleetServices) and the run's settings (FleetOptions). */
import type { Clock } from '../../ports/clock.js';
import type { StateStore } from '../../ports/state-store.js';
import type { Workspace } from '../../ports/workspace.js';
import type { Backlog } from '../../domain/types.js';
import type { AttemptExecutor } from '../executor/attempt-executor.js';
import type { ForgeLink } from '../land/pr/forge-link.js';
import type { PipelineServices } from '../attempt/attempt-io.js';

export interface FleetServices extends PipelineServices {
  store: StateStore;
  clock: Clock;
  workspace: Workspace;
  /** ticks `[x]` on the task's item in BACKLOG.md; false when the item is gone */
  tickDone: (id: string) => Promise<boolean>;
  /**
   * writes a split task's parts (BACKLOG.md lines) right under its item; false when the item is gone or its
   * parts are there already. Absent: the parts live in this run's memory only.
   */
  writeParts?: (parent: string, lines: string) => Promise<boolean>;
  /** runs the `notify:` command with the event on stdin; resolves when it has ended (it never rejects) */
  notify: (command: string, payload: Record<string, unknown>) => Promise<void>;
  /** the forge pull requests go to (`land: pr`); null or absent: none configured */
  forge?: ForgeLink | null;
  /** why there is no forge, for the refusal of a pull request */
  forgeMissing?: string;
  /** where attempts run; absent: the fleet's own pipeline, in this process */
  executor?: AttemptExecutor;
}

export interface FleetOptions {
  repoRoot: string;
  backlog: Backlog;
  base: string;
  /** land each verified task through the merge queue as it is verified */
  autoMerge: boolean;
  parentEnv: NodeJS.ProcessEnv;
  /** --no-wait: a rate or usage limit fails the task and stops the run instead of holding the fleet */
  noWait?: boolean;
}
