import {
  totalTokens,
  type AttemptRecord,
  type BaselineResult,
  type CheckJudgement,
  type ConflictDetail,
  type TaskState,
  type TestCounts,
} from '../domain/types.js';
import { checkJson, checksOfAttempt, progressLine } from '../core/report/check-facts.js';
import { candidateLine, candidateWords } from '../core/report/candidate-words.js';
import { formatDuration, formatTokens, formatUsd, padEnd, padStart, sanitize, singleLine, wrapLine } from './format.js';
import type { OutputLine, OutputLog } from './output-log.js';
import { outcomeColor, type ColorName } from './theme.js';
import type { DetailTab } from './view-state.js';
import { taskBranch } from '../domain/layout.js';
import { runLines } from './run-history.js';
import { prLines } from './pr-lines.js';
import type { StyledLine } from './styled-text.js';

export type DiffState =
  | { readonly status: 'loading' }
  | { readonly status: 'ready'; readonly text: string }
  | { readonly status: 'error'; readonly message: string };

export interface DetailSources {
  readonly task: TaskState;
  readonly output: OutputLog | undefined;
  readonly phaseOutput: OutputLog | undefined;
  readonly diff: DiffState | null;
  readonly base: string;
  readonly review: boolean;
}

const note = (text: string): StyledLine => ({ text, dim: true });

/** Split on newlines and hard-wrap each line to `width`, every piece keeping the line's style. */
function block(text: string, width: number, style: Omit<StyledLine, 'text'> = {}): StyledLine[] {
  return sanitize(text)
    .split('\n')
    .flatMap((line) => wrapLine(line, width))
    .map((t) => ({ ...style, text: t }));
}

function latest(task: TaskState): AttemptRecord | undefined {
  return task.attempts.at(-1);
}

export function planLines(task: TaskState, width: number): StyledLine[] {
  const attempt = latest(task);
  if (attempt === undefined) return [note('No attempt yet: the plan appears once the explorer has written it.')];
  if (attempt.plan === null || attempt.plan.trim() === '') {
    const earlier = [...task.attempts].reverse().find((a) => a.plan !== null && a.plan.trim() !== '');
    const head = note(`Attempt ${attempt.n} has no plan yet.`);
    if (earlier === undefined) return [head];
    return [head, note(`Plan of attempt ${earlier.n}:`), ...block(earlier.plan ?? '', width)];
  }
  return [{ text: `Plan · attempt ${attempt.n}`, bold: true }, ...block(attempt.plan, width)];
}

function outputStyle(line: OutputLine): Omit<StyledLine, 'text'> {
  switch (line.kind) {
    case 'header':
      return { dim: true, bold: true };
    case 'tool':
      return { color: 'cyan' };
    case 'command':
      return { dim: true };
    case 'text':
      return {};
  }
}

export function logLines(log: OutputLog | undefined, width: number, empty: string): StyledLine[] {
  if (log === undefined || log.lines.length === 0) return [note(empty)];
  const lines: StyledLine[] = [];
  if (log.dropped > 0) lines.push(note(`… ${log.dropped} earlier lines not kept`));
  for (const line of log.lines) {
    const style = outputStyle(line);
    for (const piece of wrapLine(line.text, width)) lines.push({ ...style, text: piece });
  }
  return lines;
}

export function diffLines(diff: DiffState | null, branch: string, base: string, width: number): StyledLine[] {
  if (diff === null || diff.status === 'loading') return [note(`Loading the diff of ${branch} against ${base}…`)];
  if (diff.status === 'error') return [{ text: `Could not read the diff: ${diff.message}`, color: 'red' }];
  if (diff.text.trim() === '') return [note(`No changes on ${branch} against ${base} yet.`)];
  return sanitize(diff.text)
    .split('\n')
    .flatMap((line) => {
      let style: Omit<StyledLine, 'text'> = {};
      if (
        line.startsWith('diff --git') ||
        line.startsWith('+++') ||
        line.startsWith('---') ||
        line.startsWith('index ')
      )
        style = { bold: true };
      else if (line.startsWith('@@')) style = { color: 'cyan' };
      else if (line.startsWith('+')) style = { color: 'green' };
      else if (line.startsWith('-')) style = { color: 'red' };
      return wrapLine(line, width).map((t) => ({ ...style, text: t }));
    });
}

/** Lines of hunks the Conflicts section shows over all its conflicts (file lines included); the rest are counted. */
const MAX_CONFLICT_LINES = 48;
/** Lines shown of one hunk; its closing marker is always among them. */
const MAX_HUNK_LINES = 12;

/**
 * A verified task's predicted conflicts, or those a task in `conflict` ran into; none in any other status
 * (what a task left behind no longer holds). A forecast recorded before details were kept has names only.
 */
function conflictsOf(task: TaskState): readonly ConflictDetail[] {
  if (task.status === 'conflict') return task.conflicts ?? [];
  if (task.status !== 'verified') return [];
  return task.conflicts ?? (task.conflictsWith ?? []).map((name) => ({ with: name, files: [], hunks: [] }));
}

function cutHunk(hunk: string): string[] {
  const lines = hunk.split('\n');
  if (lines.length <= MAX_HUNK_LINES) return lines;
  return [...lines.slice(0, MAX_HUNK_LINES - 2), `… ${lines.length - MAX_HUNK_LINES + 1} more lines`, lines.at(-1)!];
}

const isMarker = (line: string): boolean => /^(<{7}|={7}|>{7}|\|{7})( |$)/.test(line);

/** The Conflicts section: per conflict "with <name>: <files>", then its marker regions, bounded. */
export function conflictLines(task: TaskState, width: number): StyledLine[] {
  const conflicts = conflictsOf(task);
  if (conflicts.length === 0) return [];
  const title = task.status === 'verified' ? '⚠ Conflicts · predicted, nothing is merged yet' : '⚠ Conflicts';
  const lines: StyledLine[] = [{ text: title, color: 'yellow', bold: true }];
  let room = MAX_CONFLICT_LINES;
  for (const c of conflicts) {
    lines.push(
      ...block(`with ${c.with}${c.files.length === 0 ? '' : `: ${c.files.join(', ')}`}`, width, { bold: true }),
    );
    let hidden = 0;
    for (const { file, hunk } of c.hunks) {
      const shown = [
        ...block(`── ${file}`, width, { dim: true }),
        ...cutHunk(sanitize(hunk)).flatMap((line) =>
          block(line, width, isMarker(line) ? { color: 'cyan', bold: true } : {}),
        ),
      ];
      if (shown.length > room) {
        hidden += 1;
        continue;
      }
      room -= shown.length;
      lines.push(...shown);
    }
    if (hidden > 0) lines.push(note(`… ${hidden} more hunk${hidden === 1 ? '' : 's'} not shown`));
  }
  return lines;
}

const JUDGED: Record<CheckJudgement, { mark: string; color: ColorName }> = {
  passed: { mark: '✔', color: 'green' },
  failed: { mark: '✗', color: 'red' },
  warning: { mark: '⚠', color: 'yellow' },
  'not-worse': { mark: '≈', color: 'yellow' },
};

function countsText(c: TestCounts | null | undefined): string {
  return c == null ? '' : ` · ${c.failed}/${c.total} failing${c.skipped > 0 ? `, ${c.skipped} skipped` : ''}`;
}

function baselineLines(baseline: readonly BaselineResult[], width: number): StyledLine[] {
  if (baseline.length === 0) return [];
  const lines: StyledLine[] = [{ text: `On base ${baseline[0]!.commit.slice(0, 10)}`, bold: true }];
  for (const b of baseline) {
    const fails = b.timedOut || b.exitCode !== 0;
    const how = b.timedOut ? 'timed out' : `exit ${b.exitCode ?? '?'}`;
    lines.push(
      ...block(
        `${fails ? '✗' : '✔'} ${b.name} · ${how}${countsText(b.counts)}${fails ? ' · fails on base already' : ''}`,
        width,
        { color: fails ? 'yellow' : 'green' },
      ),
    );
  }
  lines.push({ text: '' });
  return lines;
}

export function checkLines(task: TaskState, live: OutputLog | undefined, width: number): StyledLine[] {
  const withCheck = [...task.attempts]
    .reverse()
    .find((a) => a.check !== null || a.setup !== null || (a.checks?.length ?? 0) > 0);
  const lines: StyledLine[] = [];
  const current = latest(task);
  const runningNow = task.status === 'running' && (current === undefined || current.check === null);
  if (runningNow && live !== undefined && live.lines.length > 0) {
    lines.push({ text: 'Live output', bold: true }, ...logLines(live, width, ''));
    if (withCheck === undefined) return lines;
    lines.push({ text: '' });
  }
  if (withCheck === undefined) return lines.length > 0 ? lines : [note('No check has run yet.')];
  const progress = progressLine(task);
  if (progress !== null) lines.push({ text: `Tests ${progress}`, bold: true }, { text: '' });
  lines.push(...baselineLines(withCheck.baseline ?? [], width));
  for (const result of [withCheck.setup, ...checksOfAttempt(withCheck)]) {
    if (result === null) continue;
    const judged =
      result === withCheck.setup
        ? result.exitCode === 0 && !result.timedOut
          ? 'passed'
          : 'failed'
        : (checkJson(result).judged ?? 'failed');
    const style = JUDGED[judged];
    const how = result.timedOut ? 'timed out' : `exit ${result.exitCode ?? '?'}`;
    const name = result.name !== undefined && result.name !== result.command ? `${result.name}: ` : '';
    lines.push({ text: singleLine(`${style.mark} ${name}$ ${result.command}`), color: style.color, bold: true });
    const optional = result.required === false ? ' · not required' : '';
    lines.push(
      note(
        `attempt ${withCheck.n} · ${how} · ${formatDuration(result.durationMs)}${countsText(result.counts)}${optional}`,
      ),
    );
    if (result.note) lines.push(...block(result.note, width, { color: style.color }));
    lines.push(...(result.outputTail.trim() === '' ? [note('(no output)')] : block(result.outputTail, width)));
  }
  const proof = withCheck.proof;
  if (proof != null) {
    const ok = proof.status === 'proved' || proof.status === 'tests-only';
    lines.push({ text: '' }, { text: `${ok ? '✔' : '✗'} ${proof.message}`, color: ok ? 'green' : 'red', bold: true });
    if (proof.tests.length > 0) lines.push(...block(`tests kept: ${proof.tests.join(', ')}`, width, { dim: true }));
  }
  return lines;
}

export function reviewLines(task: TaskState, review: boolean, width: number): StyledLine[] {
  const attempt = [...task.attempts].reverse().find((a) => a.verdict !== null || a.guard.length > 0);
  if (attempt === undefined)
    return [
      note(
        review ? 'No verdict yet: the reviewer runs after the check passes.' : 'The reviewer is off (review: false).',
      ),
    ];
  const lines: StyledLine[] = [];
  if (attempt.guard.length > 0) {
    lines.push({ text: `✗ guard checks failed · attempt ${attempt.n}`, color: 'red', bold: true });
    for (const g of attempt.guard) lines.push(...block(`  • ${g}`, width));
  }
  if (attempt.verdict !== null) {
    const { pass, reasons } = attempt.verdict;
    lines.push({
      text: `${pass ? '✔ reviewer passed' : '✗ reviewer vetoed'} · attempt ${attempt.n}`,
      color: pass ? 'green' : 'red',
      bold: true,
    });
    for (const r of reasons) lines.push(...block(`  • ${r}`, width));
    if (reasons.length === 0) lines.push(note('  (no reasons given)'));
  }
  return lines;
}

export function attemptTokens(a: AttemptRecord): number {
  return Object.values(a.usageByRole).reduce((sum, u) => sum + (u === undefined ? 0 : totalTokens(u)), 0);
}

export function historyLines(task: TaskState, width: number): StyledLine[] {
  if (task.attempts.length === 0) return [note('No attempts yet.')];
  const lines: StyledLine[] = [
    {
      text: `${padStart('#', 3)}  ${padEnd('outcome', 13)}${padStart('tokens', 7)}${padStart('cost', 9)}  reason`,
      bold: true,
    },
  ];
  for (const a of task.attempts) {
    // An attempt replaced after an interruption keeps its number, negated; show it as that number.
    const head = `${padStart(String(Math.abs(a.n)), 3)}  ${padEnd(a.outcome, 13)}${padStart(formatTokens(attemptTokens(a)), 7)}${padStart(formatUsd(a.costUsd), 9)}  `;
    const reason = a.reason === null ? '' : singleLine(a.reason);
    const [first = '', ...rest] = wrapLine(head + reason, width);
    lines.push({ text: first, color: outcomeColor(a.outcome) });
    for (const more of rest) lines.push({ text: more });
    // A best-of-N round: its summary, then each candidate (agent text sanitized: a reason may quote one).
    const round = candidateWords(a);
    if (round !== null) lines.push(...wrapLine(`     ${round}`, width).map((text) => ({ text })));
    for (const c of a.candidates ?? [])
      for (const text of wrapLine(`       ${sanitize(candidateLine(c, a.chosen?.k ?? null))}`, width))
        lines.push({ text, color: outcomeColor(c.outcome) });
  }
  if (task.reason !== null)
    lines.push(
      { text: '' },
      ...block(`${task.status}: ${task.reason}`, width, { color: task.status === 'failed' ? 'red' : 'yellow' }),
    );
  return lines;
}

/** The lines of one tab. Pure: the same sources and width give the same lines. */
export function detailLines(tab: DetailTab, src: DetailSources, width: number): StyledLine[] {
  const w = Math.max(10, width);
  switch (tab) {
    case 'plan':
      return planLines(src.task, w);
    case 'output':
      return logLines(src.output, w, 'No agent output yet.');
    case 'diff': {
      const diff = diffLines(src.diff, src.task.branch ?? taskBranch(src.task.id), src.base, w);
      const conflicts = conflictLines(src.task, w);
      return conflicts.length === 0 ? diff : [...conflicts, { text: '' }, ...diff];
    }
    case 'check':
      return checkLines(src.task, src.phaseOutput, w);
    case 'review': {
      // A task that lands by pull request: the PR comes first, with its URL.
      const pr = prLines(src.task, w);
      return pr.length === 0
        ? reviewLines(src.task, src.review, w)
        : [...pr, { text: '' }, ...reviewLines(src.task, src.review, w)];
    }
    case 'history': {
      // A recurring task's runs come first: the attempts below are those of its runs.
      const runs = runLines(src.task, w);
      return runs.length === 0 ? historyLines(src.task, w) : [...runs, { text: '' }, ...historyLines(src.task, w)];
    }
  }
}
