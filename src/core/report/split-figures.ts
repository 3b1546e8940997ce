import type { TaskState } from '../../domain/types.js';
import { formatDuration } from '../text/format-units.js';

/** What a split task's parts did: the figures the morning report and the benchmark give. */
export interface SplitFigures {
  parts: number;
  /** the most parts that were in an attempt at the same moment */
  atOnce: number;
  /** times a part's branch met a conflict on its way to base */
  conflicts: number;
  /** from the first part's first attempt to the end of the last part's last attempt, ms */
  wallMs: number;
  /** the parts' running time added up: what one task doing the same work in turn would take, ms */
  serialMs: number;
}

/**
 * The figures of split task `task` from its parts' records (`part(id)`); null for a task that is not split.
 * Attempts still running count up to `now`.
 */
export function splitFigures(
  task: Readonly<TaskState>,
  part: (id: string) => Readonly<TaskState> | undefined,
  now: number,
): SplitFigures | null {
  if (task.parts === undefined || task.parts.length === 0) return null;
  const records = task.parts.map(part).filter((t) => t !== undefined);
  const spans = records.flatMap((t) =>
    t.attempts.map((a) => [Date.parse(a.startedAt), a.endedAt === null ? now : Date.parse(a.endedAt)] as const),
  );
  // Sweep over the spans' starts and ends: an end at the very moment of a start does not overlap it.
  const edges = spans.flatMap(([from, to]) => [
    [from, 1],
    [to, -1],
  ]) as Array<[number, number]>;
  edges.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let open = 0;
  let atOnce = 0;
  for (const [, step] of edges) atOnce = Math.max(atOnce, (open += step));
  const starts = spans.map(([from]) => from);
  const ends = spans.map(([, to]) => to);
  return {
    parts: task.parts.length,
    atOnce,
    conflicts: task.partConflicts ?? 0,
    wallMs: spans.length === 0 ? 0 : Math.max(...ends) - Math.min(...starts),
    serialMs: spans.reduce((sum, [from, to]) => sum + (to - from), 0),
  };
}

/** `4 parts (T-1.1, …), at most 3 at once, 0 conflicts met at landing; 2m against 5m one after another` */
export function splitWords(task: Readonly<TaskState>, figures: SplitFigures): string {
  const conflicts = `${figures.conflicts} conflict${figures.conflicts === 1 ? '' : 's'} met at landing`;
  return `${figures.parts} (${(task.parts ?? []).join(', ')}); at most ${figures.atOnce} ran at once; ${conflicts}; wall time ${formatDuration(figures.wallMs)} against ${formatDuration(figures.serialMs)} for the same attempts one after another`;
}
