import { parentOf } from '../core/backlog/scan.js';
import { memo, type ReactNode } from 'react';
import { Text } from 'ink';
import { totalTokens, type TaskGates, type TaskState } from '../domain/types.js';
import {
  formatDuration,
  formatTokens,
  formatUsd,
  meter,
  nextRunText,
  padEnd,
  padStart,
  sanitize,
  truncate,
  width,
} from './format.js';
import { progressLine } from '../core/report/check-facts.js';
import { TITLE_KEEP, type RowColumns } from './row-columns.js';
import { Styled } from './styled-text.js';
import { ratioColor, STATUS_COLOR, STATUS_SYMBOL, type ColorName } from './theme.js';
import { prWords } from '../core/report/pr-words.js';
import { prColor } from './pr-lines.js';

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

/**
 * The title and an annotation after it, the title first: the whole title when both fit; else the title cut
 * no shorter than its first TITLE_KEEP characters beside the first form of the annotation that still fits;
 * else the title alone (the detail pane has the rest).
 */
export function fitTitle(title: string, marks: readonly string[], room: number): { head: string; mark: string } {
  const keep = width(title) <= TITLE_KEEP ? width(title) : TITLE_KEEP + 1;
  for (const mark of marks) {
    if (width(title) + width(mark) <= room) return { head: title, mark };
    if (keep + width(mark) <= room) return { head: truncate(title, room - width(mark)), mark };
  }
  return { head: truncate(title, room), mark: '' };
}

/** The title, then what matters most about the task now: a predicted conflict, the next run, the test counts or why it stopped. */
function TitleCell({ task, size, now }: { task: TaskState; size: number; now: number }): ReactNode {
  // One cell of the column is the gap before the next column.
  const room = Math.max(1, size - 1);
  const title = oneLine(task.title);
  const { marks, color, dim } = annotation(task, now, room);
  const { head, mark } = fitTitle(title, marks, room);
  if (mark === '') return <Text>{padEnd(head, size)}</Text>;
  return (
    <>
      <Text>{head}</Text>
      <Styled color={color} dim={dim}>
        {padEnd(mark, size - width(head))}
      </Styled>
    </>
  );
}

/** An annotation in its forms, longest first, each with the gap before it; none for a plain row. */
function annotation(task: TaskState, now: number, room: number): { marks: string[]; color?: ColorName; dim?: boolean } {
  // A task that landed by pull request: the PR's state is what the person acts on (on the forge).
  if (task.pr !== undefined && (task.status === 'verified' || task.pr.state !== 'open')) {
    const words = prWords(task.pr);
    return { marks: [`  ${words}`, `  PR #${task.pr.number}`], color: prColor(task.pr) };
  }
  const conflicts = task.status === 'verified' ? (task.conflictsWith ?? []) : [];
  // A predicted conflict is what the person must know before pressing m.
  if (conflicts.length > 0)
    return {
      marks: [`  ⚠ conflicts with ${conflicts.join(', ')}`, `  ⚠ ${conflicts.join(', ')}`, '  ⚠'],
      color: 'yellow',
    };
  if (waitsForNextRun(task)) {
    const when = nextRunText(Date.parse(task.nextRunAt ?? ''), now);
    return { marks: [`  ↻ ${when === 'due' || when.startsWith('in ') ? when : `next ${when}`}`, '  ↻'], color: 'cyan' };
  }
  const waiting = task.status === 'queued' && (task.waitingFor ?? null) !== null;
  if ((task.status === 'failed' || task.status === 'conflict' || waiting) && task.reason !== null) {
    // A reason is cut to whatever the title leaves, but only where a few words of it still fit.
    const reason = ` — ${oneLine(task.reason)}`;
    const left = room - Math.min(width(oneLine(task.title)), TITLE_KEEP + 1);
    return { marks: left >= 12 ? [truncate(reason, left)] : [], color: STATUS_COLOR[task.status] };
  }
  // Attempts that run on workers (a queue): where this one runs.
  // A flagged worker (its claim of verified failed the coordinator's check) is marked wherever it shows.
  const flagged = task.workerFlag !== undefined && task.workerFlag.worker === task.worker ? ' ⚑' : '';
  if (task.status === 'running' && task.worker !== undefined)
    return { marks: [`  @${oneLine(task.worker)}${flagged}`, `  @${flagged}`], dim: flagged === '' };
  const tests = progressLine(task);
  if (tests === null) return { marks: [] };
  // "7/22 failing → 1/22", or its end alone ("→ 1/22") where the whole does not fit.
  const arrow = tests.lastIndexOf('→');
  return { marks: arrow > 0 ? [`  ${tests}`, `  ${tests.slice(arrow)}`] : [`  ${tests}`], dim: true };
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
  // A part (`T-7.1`) sits under its task, which the backlog lists just above it.
  const id = parentOf(task.id) === null ? task.id : `└ ${task.id}`;
  return (
    <Styled wrap="truncate-end" bold={selected}>
      <Styled color="cyan">{selected ? '› ' : '  '}</Styled>
      <Styled inverse={selected}>{truncate(id, cols.id - 1)}</Styled>
      <Text>{' '.repeat(Math.max(1, cols.id - Math.min(id.length, cols.id - 1)))}</Text>
      <Styled color={STATUS_COLOR[task.status]}>{padEnd(status, cols.status)}</Styled>
      <TitleCell task={task} size={cols.title} now={now} />
      {cols.phase > 0 && <Styled dim>{padEnd(task.phase ?? '', cols.phase)}</Styled>}
      {cols.attempt > 0 && (
        <Text>
          {padEnd(task.attempt > 0 ? `${task.attempt}/${task.maxAttempts}` : `–/${task.maxAttempts}`, cols.attempt)}
        </Text>
      )}
      {cols.tokens > 0 && (
        <>
          <Text>{padStart(spent ? formatTokens(tokens) : '', 6)}</Text>
          {cols.meters && spent ? (
            <Meter used={budgetTokens} limit={limits.tokens} />
          ) : (
            <Text>{cols.meters ? NO_METER : ' '}</Text>
          )}
        </>
      )}
      {cols.cost > 0 && (
        <>
          <Text>{padStart(spent ? formatUsd(task.costUsd) : '', 7)}</Text>
          {cols.meters && spent ? (
            <Meter used={budgetCost} limit={limits.costUsd} />
          ) : (
            <Text>{cols.meters ? NO_METER : ' '}</Text>
          )}
        </>
      )}
      {cols.elapsed > 0 && (
        <Text>{padStart(elapsedMs > 0 || task.status === 'running' ? formatDuration(elapsedMs) : '', 8)}</Text>
      )}
    </Styled>
  );
});
