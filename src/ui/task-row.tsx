import { memo, type ReactNode } from 'react';
import { Text } from 'ink';
import { totalTokens, type TaskGates, type TaskState } from '../domain/types.js';
import { formatDuration, formatTokens, formatUsd, meter, nextRunText, padEnd, padStart, sanitize, truncate, width } from './format.js';
import { progressLine } from '../core/check-facts.js';
import type { RowColumns } from './row-columns.js';
import { Styled } from './styled-text.js';
import { ratioColor, STATUS_COLOR, STATUS_SYMBOL } from './theme.js';

export interface TaskRowProps {
  task: TaskState;
  selected: boolean;
  /** live elapsed time; passed as a number so only running rows re-render as the clock ticks */
  elapsedMs: number;
  cols: RowColumns;
  gates: TaskGates;
  /** the clock, for a recurring task waiting for its next run (see `waitsForNextRun`); 0 for every other row */
  now: number;
}

/** A recurring task that ran and waits `queued` for its next run. */
export function waitsForNextRun(task: TaskState): boolean {
  return task.status === 'queued' && task.nextRunAt != null && (task.waitingFor ?? null) === null;
}

const NO_METER = ' '.repeat(7);

/** ` ▮▮▯▯▯ `: the meter with the gaps around it, always 7 cells. */
function Meter({ used, limit }: { used: number; limit: number | null }): ReactNode {
  if (limit === null || limit <= 0) return <Text>{NO_METER}</Text>;
  const ratio = used / limit;
  return (
    <>
      <Text> </Text>
      <Styled color={ratioColor(ratio)}>{meter(ratio)}</Styled>
      <Text> </Text>
    </>
  );
}

function oneLine(text: string): string {
  return sanitize(text).replace(/\s+/g, ' ').trim();
}

/** The title, and for a failed or conflict task its reason after a dash, cut to the column together. */
function TitleCell({ task, size, now }: { task: TaskState; size: number; now: number }): ReactNode {
  // One cell of the column is the gap before the next column.
  const room = Math.max(1, size - 1);
  const title = oneLine(task.title);
  const waiting = task.status === 'queued' && (task.waitingFor ?? null) !== null;
  const showReason = (task.status === 'failed' || task.status === 'conflict' || waiting) && task.reason !== null;
  const conflicts = task.status === 'verified' ? (task.conflictsWith ?? []) : [];
  if (conflicts.length > 0) {
    // A predicted conflict is what the person must know before pressing m: it comes before the counts.
    const mark = truncate(`  ⚠ conflicts with ${conflicts.join(', ')}`, Math.max(0, room - 8));
    const head = truncate(title, Math.max(1, room - width(mark)));
    return (
      <>
        <Text>{head}</Text>
        <Styled color="yellow">{padEnd(mark, size - width(head))}</Styled>
      </>
    );
  }
  if (waitsForNextRun(task)) {
    // When it runs next, after the title, the title giving way first: "Bump deps  ↻ next 14:05".
    const when = nextRunText(Date.parse(task.nextRunAt ?? ''), now);
    const mark = truncate(`  ↻ ${when === 'due' || when.startsWith('in ') ? when : `next ${when}`}`, Math.max(0, room - 8));
    const head = truncate(title, Math.max(1, room - width(mark)));
    return (
      <>
        <Text>{head}</Text>
        <Styled color="cyan">{padEnd(mark, size - width(head))}</Styled>
      </>
    );
  }
  const tests = showReason ? null : progressLine(task);
  if (!showReason && tests !== null) {
    // The test counts after the title, the title giving way first: "Fix parser  7/22 failing → 1/22".
    const counts = truncate(`  ${tests}`, Math.max(0, room - 8));
    const head = truncate(title, Math.max(1, room - width(counts)));
    return (
      <>
        <Text>{head}</Text>
        <Styled dim>{padEnd(counts, size - width(head))}</Styled>
      </>
    );
  }
  if (!showReason) return <Text>{padEnd(truncate(title, room), size)}</Text>;
  const head = truncate(title, Math.max(1, Math.floor(room / 2)));
  const reason = truncate(` — ${oneLine(task.reason ?? '')}`, Math.max(0, room - width(head)));
  return (
    <>
      <Text>{head}</Text>
      <Styled color={STATUS_COLOR[task.status]}>{padEnd(reason, size - width(head))}</Styled>
    </>
  );
}

/**
 * One task on one terminal line. Memoised: it re-renders only when its own snapshot, its selection, its
 * live elapsed time, the column layout or (for a task waiting for its next run) the clock change.
 */
export const TaskRow = memo(function TaskRow({ task, selected, elapsedMs, cols, gates, now }: TaskRowProps): ReactNode {
  const tokens = totalTokens(task.usage);
  const budgetTokens = tokens - totalTokens(task.budget.usage);
  const budgetCost = task.costUsd - task.budget.costUsd;
  const status = `${STATUS_SYMBOL[task.status]} ${task.status}`;
  // A task that has not spent anything yet shows blanks, not a row of zeros.
  const spent = tokens > 0 || task.costUsd > 0;
  // A task's own `tokens:` / `cost:` limits win over the front matter's.
  const limits = task.gates ?? gates;
  return (
    <Styled wrap="truncate-end" bold={selected}>
      <Styled color="cyan">{selected ? '› ' : '  '}</Styled>
      <Styled inverse={selected}>{truncate(task.id, cols.id - 1)}</Styled>
      <Text>{' '.repeat(Math.max(1, cols.id - Math.min(task.id.length, cols.id - 1)))}</Text>
      <Styled color={STATUS_COLOR[task.status]}>{padEnd(status, cols.status)}</Styled>
      <TitleCell task={task} size={cols.title} now={now} />
      {cols.phase > 0 && <Styled dim>{padEnd(task.phase ?? '', cols.phase)}</Styled>}
      {cols.attempt > 0 && <Text>{padEnd(task.attempt > 0 ? `${task.attempt}/${task.maxAttempts}` : `–/${task.maxAttempts}`, cols.attempt)}</Text>}
      {cols.tokens > 0 && (
        <>
          <Text>{padStart(spent ? formatTokens(tokens) : '', 6)}</Text>
          {cols.meters && spent ? <Meter used={budgetTokens} limit={limits.tokens} /> : <Text>{cols.meters ? NO_METER : ' '}</Text>}
        </>
      )}
      {cols.cost > 0 && (
        <>
          <Text>{padStart(spent ? formatUsd(task.costUsd) : '', 7)}</Text>
          {cols.meters && spent ? <Meter used={budgetCost} limit={limits.costUsd} /> : <Text>{cols.meters ? NO_METER : ' '}</Text>}
        </>
      )}
      {cols.elapsed > 0 && <Text>{padStart(elapsedMs > 0 || task.status === 'running' ? formatDuration(elapsedMs) : '', 8)}</Text>}
    </Styled>
  );
});
