/**
 * Review pacing (`review_capacity:`): which tasks count against what people said they can review. One rule for
 * the scheduler, `status --json` and the TUI.
 *
 * Invariants:
 * - a task counts only when a person has to act on it before it lands: a task that lands by itself
 *   (`autonomy: auto`, or `--auto-merge`) never counts, running or not;
 * - a counting task weighs one while it is running (or about to run), and one while it waits for a person:
 *   a verified branch not yet landed (or in `conflict`) under `land: merge`, a verified task whose pull request
 *   is not open yet or is open and not approved under `land: pr`, a plan awaiting approval;
 * - nothing else weighs: queued, failed, merged and discarded tasks wait for nobody.
 */
import { autonomyOf } from '../../domain/task-rules.js';
import type { FleetConfig, TaskSpec, TaskState } from '../../domain/types.js';

/** The load against `review_capacity:` at one moment. */
export interface ReviewLoad {
  /** counting tasks running (or enqueued to run) */
  running: number;
  /** counting tasks waiting for a person: to merge, discard, approve or review */
  waiting: number;
  capacity: number;
}

/** `waiting for review: 5 of 5` — the words of the TUI, the log, the notify command and the report. */
export function reviewWords(load: ReviewLoad): string {
  return `waiting for review: ${load.running + load.waiting} of ${load.capacity}`;
}

/** Whether the task lands only through a person (so it counts against the capacity). */
export function needsPerson(
  spec: Pick<TaskSpec, 'autonomy'>,
  config: Pick<FleetConfig, 'autonomy'>,
  autoMerge: boolean,
): boolean {
  return !autoMerge && autonomyOf(spec, config) !== 'auto';
}

/** Whether `task` waits for a person's merge, discard, approval or review. */
export function waitsForPerson(
  task: Pick<TaskState, 'status' | 'pr'>,
  spec: Pick<TaskSpec, 'land'>,
  config: Pick<FleetConfig, 'land'>,
): boolean {
  switch (task.status) {
    case 'awaiting-approval':
    case 'conflict':
      return true;
    case 'verified': {
      if ((spec.land ?? config.land ?? 'merge') === 'merge') return true;
      // Under `land: pr`: until a person with write access approved its open pull request.
      const pr = task.pr;
      return pr === undefined || (pr.state === 'open' && pr.review !== 'approved');
    }
    default:
      return false;
  }
}

/**
 * The load of the tasks in `order` against `capacity`; `inFlight(id)` says a task is enqueued to run (it
 * counts as running before its status says so). Null when there is no cap.
 */
export function reviewLoad(
  order: readonly string[],
  task: (id: string) => Pick<TaskState, 'status' | 'pr'> | undefined,
  spec: (id: string) => Pick<TaskSpec, 'autonomy' | 'land'> | undefined,
  config: Pick<FleetConfig, 'autonomy' | 'land' | 'reviewCapacity'>,
  autoMerge: boolean,
  inFlight: (id: string) => boolean = () => false,
): ReviewLoad | null {
  const capacity = config.reviewCapacity ?? null;
  if (capacity === null) return null;
  const load: ReviewLoad = { running: 0, waiting: 0, capacity };
  for (const id of order) {
    const t = task(id);
    const s = spec(id);
    if (t === undefined || s === undefined || !needsPerson(s, config, autoMerge)) continue;
    if (waitsForPerson(t, s, config)) load.waiting++;
    else if (t.status === 'running' || inFlight(id)) load.running++;
  }
  return load;
}
