import type { RunRecord, TaskState } from '../domain/types.js';
import type { StyledLine } from './styled-text.js';
import {
  dayClock,
  formatDuration,
  formatLimitDuration,
  formatTokens,
  formatUsd,
  padEnd,
  padStart,
  wrapLine,
} from './format.js';
import type { ColorName } from './theme.js';
import { STATUS_COLOR, STATUS_SYMBOL } from './theme.js';

/** Runs the section lists, newest first; the earlier ones are counted. */
export const MAX_RUNS_SHOWN = 20;

const OUTCOME: Readonly<Record<RunRecord['outcome'], { mark: string; color: ColorName }>> = {
  merged: { mark: STATUS_SYMBOL.merged, color: STATUS_COLOR.merged },
  discarded: { mark: STATUS_SYMBOL.discarded, color: STATUS_COLOR.discarded },
  // nothing to change: a success for a recurring task
  unchanged: { mark: '=', color: 'green' },
};

/** One line hard-wrapped to `width`, every piece keeping its style. */
const wrapped = (line: StyledLine, width: number): StyledLine[] =>
  wrapLine(line.text, width).map((text) => ({ ...line, text }));

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

/**
 * What the section's title says after the count: the next run while the task waits for it, with the
 * interval it was scheduled with (the engine counts it from the instant the last run ended); or that a
 * run is under way.
 */
function nextText(task: TaskState, last: RunRecord | undefined): string {
  if (task.status === 'running') return ' · running now';
  if (task.status !== 'queued' || task.nextRunAt == null) return '';
  const at = Date.parse(task.nextRunAt);
  if (task.everyMs !== undefined) return ` · next ${dayClock(at)}`;
  // A state written before the interval was recorded: the gap the engine scheduled says it.
  const after = last === undefined ? NaN : at - Date.parse(last.endedAt);
  return ` · next ${dayClock(at)}${after > 0 ? `, ${formatLimitDuration(after)} after the last one ended` : ''}`;
}

/**
 * The run history of a recurring task (one that has `runs`), newest first and bounded, each run with its
 * start (local time), duration, outcome, tokens and cost; with the totals and the next run. None for other tasks.
 */
export function runLines(task: TaskState, width: number): StyledLine[] {
  return unwrapped(task).flatMap((line) => wrapped(line, width));
}

function unwrapped(task: TaskState): StyledLine[] {
  if (task.runs === undefined && task.everyMs === undefined) return [];
  const runs = task.runs ?? [];
  const every = task.everyMs === undefined ? '' : `every ${formatLimitDuration(task.everyMs)} · `;
  const title = (text: string): StyledLine => ({ text: `↻ Runs · ${every}${text}`, color: 'cyan', bold: true });
  if (runs.length === 0) return [title(`none yet${nextText(task, undefined)}`)];
  const lines: StyledLine[] = [title(`${plural(runs.length, 'run')}${nextText(task, runs.at(-1))}`)];
  const cost = runs.reduce((sum, r) => sum + r.costUsd, 0);
  const tokens = runs.reduce((sum, r) => sum + r.tokens, 0);
  lines.push({ text: `${formatUsd(cost)} and ${formatTokens(tokens)} tokens in all`, dim: true });
  lines.push({
    text: `${padEnd('started', 14)}${padEnd('took', 9)}${padEnd('outcome', 13)}${padStart('tokens', 6)}${padStart('cost', 9)}`,
    bold: true,
  });
  for (const run of runs.slice(-MAX_RUNS_SHOWN).reverse()) {
    const style = OUTCOME[run.outcome];
    const took = formatDuration(Date.parse(run.endedAt) - Date.parse(run.startedAt));
    lines.push({
      text: `${padEnd(dayClock(Date.parse(run.startedAt)), 14)}${padEnd(took, 9)}${padEnd(`${style.mark} ${run.outcome}`, 13)}${padStart(formatTokens(run.tokens), 6)}${padStart(formatUsd(run.costUsd), 9)}`,
      color: style.color,
    });
  }
  const earlier = runs.length - MAX_RUNS_SHOWN;
  if (earlier > 0) lines.push({ text: `… ${plural(earlier, 'earlier run')}`, dim: true });
  return lines;
}
