import type { ForgeKind } from '../../../ports/forge.js';
import { oneLine } from '../../../domain/sanitize.js';
import {
  totalTokens,
  type AttemptRecord,
  type BaselineResult,
  type CheckResult,
  type TaskSpec,
  type TaskState,
} from '../../../domain/types.js';
import { baseFailure } from '../../verify/baseline.js';
import { checkJson, checksOfAttempt, realAttempts } from '../../report/check-facts.js';
import { conflictEntries } from '../../report/morning-report.js';
import { formatDuration, formatTokens, formatUsd } from '../../text/format-units.js';
import { formatChange, formatCounts } from '../../verify/test-counts.js';
import { firstLines, inertBlock, inertLine, lastLines, neutralise } from './text.js';

/**
 * A task's pull request as text: its title, its body (the evidence, from the same task record the morning
 * report reads) and the comment a later attempt leaves on it.
 *
 * Invariant: every piece of text loopfleet did not write — the task's title and description (an issue's
 * words, for a discovered task), plans, file and test names, reasons, outputs — passes {@link inertLine}
 * or {@link inertBlock}, so the only references, mentions and closing keywords in what the forge reads are
 * loopfleet's own: the `Fixes #N` of the task's own `source:`, and the PR numbers of other tasks' pull
 * requests.
 */

export interface BodyInput {
  task: TaskState;
  spec: Pick<TaskSpec, 'description' | 'source'>;
  forge: ForgeKind;
  base: string;
  /** the open pull requests of other tasks, by task id: their conflicts name them */
  pulls: ReadonlyMap<string, number>;
}

/** The marker that says the body is loopfleet's (first line); it names the task, never anything else. */
export function bodyMarker(id: string): string {
  return `<!-- loopfleet ${id.replace(/[^A-Za-z0-9-]/g, '')} -->`;
}

export function prTitle(task: Pick<TaskState, 'id' | 'title'>): string {
  return neutralise(oneLine(`${task.id} ${task.title}`)).slice(0, 250);
}

/**
 * `Fixes #N` (GitHub) or `Closes #N` (GitLab) for a task made from an issue of this forge; `Fixes ENG-12` for a
 * Linear issue on either forge (the words Linear's own GitHub and GitLab integrations read to link the pull
 * request and move the issue when it merges); null otherwise.
 */
export function closingLine(source: string | undefined, forge: ForgeKind): string | null {
  if (/^[A-Z][A-Z0-9]{0,9}-\d+$/.test(source ?? '')) return `Fixes ${source}`;
  const m = /^(gh|gl)#(\d+)$/.exec(source ?? '');
  if (m === null) return null;
  if (m[1] === 'gh' && forge === 'github') return `Fixes #${m[2]}`;
  if (m[1] === 'gl' && forge === 'gitlab') return `Closes #${m[2]}`;
  return null;
}

const MARK: Record<string, string> = { passed: '✔', failed: '✗', warning: '⚠', 'not-worse': '≈' };

function checkLine(r: CheckResult, baseline: readonly BaselineResult[]): string {
  const judged = checkJson(r).judged ?? 'failed';
  const base = baseline.find((b) => b.command === r.command);
  const exit = r.timedOut ? 'timed out' : `exit ${r.exitCode ?? 'killed'}`;
  const counts = r.counts == null ? '' : ` — ${formatChange(base?.counts ?? null, r.counts)}`;
  const optional = r.required === false ? ' · not required' : '';
  const note = r.note ? ` — ${inertLine(r.note)}` : '';
  const label = r.name !== undefined && r.name !== r.command ? `${r.name} (${r.command})` : r.command;
  return `- ${MARK[judged] ?? '?'} ${inertLine(label)} → ${exit} in ${formatDuration(r.durationMs)}${counts}${optional}${note}`;
}

function baselineLines(baseline: readonly BaselineResult[]): string[] {
  if (baseline.length === 0) return [];
  const out = ['', `**Baseline** — the checks on ${baseline[0]!.commit.slice(0, 10)}, before any change:`, ''];
  for (const b of baseline) {
    const fails = baseFailure(b);
    const counts = b.counts == null ? '' : ` — ${formatCounts(b.counts)}`;
    out.push(
      `- ${fails === null ? '✔' : '✗'} ${inertLine(b.name)} → ${b.timedOut ? 'timed out' : `exit ${b.exitCode ?? 'killed'}`}${counts}`,
    );
  }
  return out;
}

function attemptRows(attempts: readonly AttemptRecord[]): string[] {
  const rows = attempts.map(
    (a) => `| ${a.n} | ${a.outcome} | ${a.reason ? inertLine(a.reason.slice(0, 160)) : ''} | ${formatUsd(a.costUsd)} |`,
  );
  return ['| attempt | outcome | why | cost |', '| --- | --- | --- | --- |', ...rows];
}

function conflictLines(input: BodyInput): string[] {
  const entries = conflictEntries(input.task);
  if (entries.length === 0) return [];
  const out = ['', '### Predicted conflicts', ''];
  for (const e of entries) {
    const pull = input.pulls.get(e.with);
    const who =
      e.with === input.base
        ? `\`${inertLine(e.with)}\``
        : pull === undefined
          ? inertLine(e.with)
          : `${inertLine(e.with)} (#${pull})`;
    out.push(
      `- with ${who}${e.files.length === 0 ? '' : ` in ${e.files.slice(0, 10).map(inertLine).join(', ')}${e.files.length > 10 ? ` and ${e.files.length - 10} more` : ''}`}`,
    );
  }
  return out;
}

/** The evidence: what a reviewer needs to judge the change without opening a transcript. */
export function prBody(input: BodyInput): string {
  const { task, spec } = input;
  const real = realAttempts(task);
  const last = real.at(-1);
  const out = [bodyMarker(task.id), '', `**${inertLine(task.id)}** ${inertLine(task.title)}`, ''];
  if (spec.description.trim() !== '') out.push(...inertBlock(spec.description.trim()), '');
  out.push(
    `Verified by loopfleet in ${real.length} of ${task.maxAttempts} attempt${task.maxAttempts === 1 ? '' : 's'} · ` +
      `${formatTokens(totalTokens(task.usage))} tokens · ${formatUsd(task.costUsd)}`,
  );
  if (last?.plan) out.push('', '### Plan (summary)', '', ...inertBlock(firstLines(last.plan, 12)));
  if (last?.diffStat) out.push('', '### Diffstat', '', ...inertBlock(last.diffStat.trimEnd()));
  const checks = last === undefined ? [] : checksOfAttempt(last);
  if (checks.length > 0) out.push('', '### Checks', '', ...checks.map((c) => checkLine(c, last?.baseline ?? [])));
  out.push(...baselineLines(last?.baseline ?? []));
  if (last?.proof) {
    const tests = last.proof.tests.length > 0 ? ` (tests: ${last.proof.tests.map(inertLine).join(', ')})` : '';
    out.push('', `**Proof:** ${last.proof.status} — ${inertLine(last.proof.message)}${tests}`);
  }
  if (last?.verdict) {
    out.push(
      '',
      `### Reviewer: ${last.verdict.pass ? 'pass' : 'veto'}`,
      '',
      ...last.verdict.reasons.map((r) => `- ${inertLine(r)}`),
    );
  }
  if (real.length > 0) out.push('', '### Attempts', '', ...attemptRows(real));
  out.push(...conflictLines(input));
  const closing = closingLine(spec.source, input.forge);
  if (closing !== null) out.push('', closing);
  out.push('');
  return out.join('\n');
}

/** What a later attempt changed on the pull request and what it cost: the comment loopfleet leaves. */
export function followUpComment(input: {
  task: TaskState;
  sinceAttempt: number;
  diffStat: string;
  why: string | null;
}): string {
  const { task } = input;
  const newer = realAttempts(task).filter((a) => a.n > input.sinceAttempt);
  const cost = newer.reduce((sum, a) => sum + a.costUsd, 0);
  const tokensUsed = newer.reduce(
    (sum, a) => sum + Object.values(a.usageByRole).reduce((s, u) => s + (u === undefined ? 0 : totalTokens(u)), 0),
    0,
  );
  const last = newer.at(-1);
  const out = [
    `loopfleet pushed a new attempt of ${inertLine(task.id)}${input.why === null ? '' : ` — ${inertLine(input.why)}`}.`,
    '',
    `${newer.length} attempt${newer.length === 1 ? '' : 's'} since the last push · ${formatTokens(tokensUsed)} tokens · ${formatUsd(cost)}`,
  ];
  if (input.diffStat.trim() !== '')
    out.push('', '**What changed since the last push**', '', ...inertBlock(lastLines(input.diffStat, 30)));
  const checks = last === undefined ? [] : checksOfAttempt(last);
  if (checks.length > 0) out.push('', '**Checks**', '', ...checks.map((c) => checkLine(c, last?.baseline ?? [])));
  out.push('');
  return out.join('\n');
}
