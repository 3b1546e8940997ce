import { candidateLine, candidateWords } from './candidate-words.js';
import {
  costPerTask,
  totalTokens,
  type AttemptRecord,
  type BaselineResult,
  type CheckResult,
  type FleetConfig,
  type Role,
  type TaskState,
  type TestCounts,
  type WorkerFlag,
} from '../../domain/types.js';
import { baseFailure } from '../verify/baseline.js';
import { checkJson, checksOfAttempt, progressLine, realAttempts } from './check-facts.js';
import { checkLabel } from '../verify/checks.js';
import type { FleetSnapshotSummary } from '../task/events.js';
import { sandboxNotice } from './sandbox-notice.js';
import type { SandboxCause } from '../../domain/sandbox-cause.js';
import { oneLine, visible } from '../../domain/sanitize.js';
import { prWords } from './pr-words.js';
import { formatDuration, formatTokens, formatUsd } from '../text/format-units.js';
import { reviewWords } from '../task/review-load.js';
import { splitFigures, splitWords } from './split-figures.js';

/**
 * The morning report: enough to review the night's work without reading transcripts. Pure text.
 *
 * Invariant: the report holds no escape sequence or control a terminal or viewer would act on (`cat`,
 * `less -R`, a Markdown preview): titles, reasons, verdicts and notes are one-line fields of the one
 * sanitiser, plans and outputs its multi-line form inside fences they cannot close, and the whole text
 * passes it once more before it is returned.
 */

export interface ReportInput {
  repoRoot: string;
  base: string;
  startedAt: string;
  endedAt: string;
  summary: FleetSnapshotSummary;
  tasks: TaskState[];
  /** ids of the tasks this run touched; the others are listed briefly */
  ran: ReadonlySet<string>;
  config: FleetConfig;
  sandboxed: boolean;
  /** what stops bubblewrap on this host, when the run was unsandboxed under `sandbox: auto` */
  sandboxCause?: SandboxCause | null;
  exitCode: number;
}

const OUTCOME_WORD: Record<string, string> = {
  verified: '✔ verified — ready to merge',
  merged: '✓ merged',
  failed: '✗ failed',
  conflict: '⚠ conflict',
  discarded: '⌫ discarded',
  queued: '· not finished',
  running: '▶ running',
};

/** A fenced block of `text`: the fence is longer than any backtick run inside, so the text cannot close it. */
function fenced(text: string): string[] {
  const longest = Math.max(0, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = '`'.repeat(Math.max(3, longest + 1));
  return [fence, text, fence];
}

function firstLines(text: string, n: number): string {
  const lines = text.trim().split('\n');
  return lines.slice(0, n).join('\n') + (lines.length > n ? '\n…' : '');
}

function lastLines(text: string, n: number): string {
  const lines = text.trimEnd().split('\n');
  return (lines.length > n ? '…\n' : '') + lines.slice(-n).join('\n');
}

function roleRows(attempts: AttemptRecord[]): string[] {
  const roles: Role[] = ['explorer', 'implementer', 'verifier'];
  const rows: string[] = [];
  for (const role of roles) {
    let input = 0,
      output = 0,
      cw = 0,
      cr = 0,
      cost = 0;
    for (const a of attempts) {
      const u = a.usageByRole[role];
      if (u !== undefined) {
        input += u.input;
        output += u.output;
        cw += u.cacheWrite;
        cr += u.cacheRead;
      }
      cost += a.costByRole[role] ?? 0;
    }
    if (input + output + cw + cr === 0) continue;
    rows.push(
      `| ${role} | ${formatTokens(input)} / ${formatTokens(output)} / ${formatTokens(cw)} / ${formatTokens(cr)} | ${formatUsd(cost)} |`,
    );
  }
  return rows;
}

function roleTable(attempts: AttemptRecord[]): string[] {
  const rows = roleRows(attempts);
  return rows.length === 0
    ? []
    : ['| role | tokens (in / out / cache write / cache read) | cost |', '| --- | --- | --- |', ...rows];
}

const JUDGED_MARK: Record<string, string> = { passed: '✔', failed: '✗', warning: '⚠', 'not-worse': '≈' };

function countsWords(c: TestCounts | null | undefined): string {
  return c == null ? '' : ` — ${c.failed}/${c.total} failing${c.skipped > 0 ? `, ${c.skipped} skipped` : ''}`;
}

/** One check's line: mark, label, exit, time, counts against base, and why when it is not a plain pass. */
function checkLine(r: CheckResult, baseline: readonly BaselineResult[]): string {
  const judged = checkJson(r).judged ?? 'failed';
  const base = baseline.find((b) => b.command === r.command);
  const vsBase = base?.counts != null && r.counts != null ? ` (base: ${base.counts.failed}/${base.counts.total})` : '';
  const exit = r.timedOut ? 'timed out' : `exit ${r.exitCode ?? 'killed'}`;
  const optional = r.required === false ? ' · not required' : '';
  const note = r.note ? ` — ${r.note}` : '';
  return oneLine(
    `- ${JUDGED_MARK[judged] ?? '?'} ${checkLabel(r)} → ${exit} in ${formatDuration(r.durationMs)}${countsWords(r.counts)}${vsBase}${optional}${note}`,
  );
}

function baselineSection(baseline: readonly BaselineResult[]): string[] {
  if (baseline.length === 0) return [];
  const out = ['', `**Baseline** (the checks on ${baseline[0]!.commit.slice(0, 10)}, before any change)`, ''];
  for (const b of baseline) {
    const fails = baseFailure(b);
    out.push(
      oneLine(
        `- ${fails === null ? '✔' : '✗'} ${b.name === b.command ? `\`${b.command}\`` : `'${b.name}' (\`${b.command}\`)`} → ${b.timedOut ? 'timed out' : `exit ${b.exitCode ?? 'killed'}`}${countsWords(b.counts)}${fails === null ? '' : ' — fails on base already'}`,
      ),
    );
  }
  return out;
}

function attemptSection(a: AttemptRecord): string[] {
  const out = ['', `### Attempt ${a.n} — ${a.outcome}${a.reason ? `: ${oneLine(a.reason)}` : ''}`, ''];
  const round = candidateWords(a);
  if (round !== null)
    out.push(
      `**Candidates:** ${round}`,
      ...(a.candidates ?? []).map((c) => `- ${oneLine(candidateLine(c, a.chosen?.k ?? null))}`),
      '',
    );
  if (a.plan) out.push('**Plan (summary)**', '', ...fenced(firstLines(visible(a.plan), 8)), '');
  if (a.diffStat) out.push('**Diffstat**', '', ...fenced(visible(a.diffStat.trimEnd())), '');
  const checks = checksOfAttempt(a);
  if (checks.length > 0) out.push('**Checks**', '', ...checks.map((c) => checkLine(c, a.baseline ?? [])), '');
  if (a.guard.length > 0) out.push('**Guard:**', ...a.guard.map((g) => `- ${oneLine(g)}`), '');
  if (a.verdict)
    out.push(
      `**Reviewer:** ${a.verdict.pass ? 'pass' : 'veto'}`,
      ...a.verdict.reasons.map((r) => `- ${oneLine(r)}`),
      '',
    );
  if (a.proof)
    out.push(
      oneLine(
        `**Proof:** ${a.proof.message}${a.proof.tests.length > 0 ? ` (tests: ${a.proof.tests.join(', ')})` : ''}`,
      ),
      '',
    );
  const roles = roleRows([a]);
  out.push(`**Cost:** ${formatUsd(a.costUsd)}${roles.length > 0 ? '' : ' (no model calls)'}`);
  if (roles.length > 0)
    out.push('', '| role | tokens (in / out / cache write / cache read) | cost |', '| --- | --- | --- |', ...roles);
  return out;
}

/** Files named per conflict in the report; the rest are counted. */
const MAX_FILES_NAMED = 10;

function fileList(files: readonly string[]): string {
  if (files.length <= MAX_FILES_NAMED) return files.join(', ');
  return `${files.slice(0, MAX_FILES_NAMED).join(', ')} and ${files.length - MAX_FILES_NAMED} more files`;
}

/**
 * With whom a task conflicts and in which files: predicted for a verified task, found for one in
 * `conflict`; none for any other status (what a task left behind is no longer true). The hunks are the
 * detail pane's.
 */
export function conflictEntries(task: TaskState): Array<{ with: string; files: string[] }> {
  if (task.status === 'conflict') return task.conflicts ?? [];
  if (task.status !== 'verified') return [];
  return task.conflicts ?? (task.conflictsWith ?? []).map((name) => ({ with: name, files: [] }));
}

function conflictWords(entry: { with: string; files: string[] }): string {
  return `⚠ conflicts with ${entry.with}${entry.files.length === 0 ? '' : ` in ${fileList(entry.files)}`}`;
}

function conflictLines(task: TaskState): string[] {
  const entries = conflictEntries(task);
  if (entries.length === 0) return [];
  const head =
    task.status === 'verified' ? '- **Predicted conflicts** (computed before any merge):' : '- **Conflicts:**';
  return [head, ...entries.map((e) => `  - ${oneLine(conflictWords(e))}`)];
}

/** A flagged worker, one line: who, on which attempt, and how its claim and the coordinator's check disagreed. */
export function workerFlagWords(flag: WorkerFlag): string {
  return oneLine(`⚑ worker ${flag.worker} flagged on attempt ${flag.attempt}: ${flag.reason}`);
}

function taskSection(
  task: TaskState,
  cfg: FleetConfig,
  base: string,
  part: (id: string) => TaskState | undefined,
  endedAt: string,
): string[] {
  const out = [oneLine(`## ${task.id} ${task.title}`), ''];
  out.push(
    `- **Outcome:** ${OUTCOME_WORD[task.status] ?? task.status}${task.reason === null ? '' : ` — ${oneLine(task.reason)}`}`,
  );
  if (task.gate !== null) out.push(`- **Gate:** ${task.gate}`);
  const real = realAttempts(task);
  // A best-of-N round's candidates are attempts each, as the attempts gate counts them.
  const used = real.reduce(
    (sum, a) => sum + Math.max(1, a.candidates?.filter((c) => c.outcome !== 'interrupted').length ?? 1),
    0,
  );
  out.push(`- **Attempts:** ${used} of ${task.maxAttempts}`);
  const lastRound = real.findLast((a) => (a.candidates?.length ?? 0) > 0);
  if (lastRound !== undefined) out.push(`- **Best of N:** ${candidateWords(lastRound)}`);
  out.push(
    `- **Tokens:** ${formatTokens(totalTokens(task.usage))} (in ${formatTokens(task.usage.input)}, out ${formatTokens(task.usage.output)}, cache write ${formatTokens(task.usage.cacheWrite)}, cache read ${formatTokens(task.usage.cacheRead)}) · **Cost:** ${formatUsd(task.costUsd)}`,
  );
  const progress = progressLine(task);
  if (progress !== null) out.push(`- **Tests:** ${progress}`);
  if (task.unpricedModels.length > 0)
    out.push(
      `- **Unpriced models** (cost not counted): ${task.unpricedModels.join(', ')}; set \`prices:\` in the front matter`,
    );
  if (task.pr !== undefined) out.push(oneLine(`- **Pull request:** ${prWords(task.pr)} — ${task.pr.url}`));
  const split = splitFigures(task, part, Date.parse(endedAt));
  if (split !== null) out.push(`- **Parts:** ${splitWords(task, split)}`);
  if (task.workerFlag !== undefined) out.push(`- **Worker:** ${workerFlagWords(task.workerFlag)}`);
  if (task.branch !== null && task.pr?.state !== 'open') {
    const next: Partial<Record<TaskState['status'], string>> = {
      verified: `\`loopfleet merge ${task.id}\` or \`loopfleet discard ${task.id}\``,
      // Not the worktree: its content is the agent's, and git run there can run a nested repository's config.
      failed: `\`git diff ${base}...${task.branch}\` shows the work so far; \`loopfleet retry ${task.id}\` or \`loopfleet discard ${task.id}\``,
      conflict: `\`loopfleet retry ${task.id}\` rebases it onto the base and verifies it again (when the rebase conflicts, a new attempt resolves the conflict); or \`loopfleet discard ${task.id}\``,
    };
    const hint = next[task.status];
    if (hint !== undefined) out.push(`- **Branch:** \`${task.branch}\` — ${hint}`);
  }
  out.push(...conflictLines(task));
  const roles = roleTable(task.attempts);
  if (roles.length > 0) out.push('', ...roles);
  const last = real.at(-1);
  if (last !== undefined) out.push(...baselineSection(last.baseline ?? []));
  if (last !== undefined && checksOfAttempt(last).length === 0 && cfg.check === null)
    out.push('', '**Check:** none configured');
  for (const a of real) out.push(...attemptSection(a));
  if (last !== undefined) {
    const shown =
      checksOfAttempt(last).find((c) => (c.judged ?? (c.exitCode === 0 ? 'passed' : 'failed')) !== 'passed') ??
      last.check;
    if (shown) {
      out.push(
        '',
        oneLine(`**Output of ${checkLabel(shown)}** (attempt ${last.n}, last lines)`),
        '',
        ...fenced(lastLines(visible(shown.outputTail), 20)),
      );
    }
  }
  out.push('');
  return out;
}

/** One task's section of the report, as it would read now (`get_task` of `loopfleet mcp` returns it). */
export function taskReport(
  task: TaskState,
  config: FleetConfig,
  base: string,
  part: (id: string) => TaskState | undefined,
  now: string,
): string {
  return visible(taskSection(task, config, base, part, now).join('\n')).trimEnd();
}

/**
 * The fleet's cost divided by the tasks it brought to verified (or merged) in this run ({@link costPerTask});
 * and, when tasks of the run landed, divided by those.
 */
function costPerVerified(input: ReportInput): string {
  const c = costPerTask(input.tasks.filter((t) => input.ran.has(t.id)));
  const spent = formatUsd(c.costUsd);
  const verified =
    c.costPerVerified === null
      ? `**Cost per verified task:** none verified; ${spent} spent on the tasks of this run.`
      : `**Cost per verified task:** ${formatUsd(c.costPerVerified)} (${spent} over ${c.verified} verified task${c.verified === 1 ? '' : 's'}, failed attempts included).`;
  return c.costPerMerged === null
    ? verified
    : `${verified} **Cost per merged task:** ${formatUsd(c.costPerMerged)} (${c.merged} merged).`;
}

/** `review_capacity:` over the night: its peak, how long it held new tasks back, and what waits now. */
function reviewQueue(review: NonNullable<FleetSnapshotSummary['review']>): string {
  const held =
    review.heldMs > 0 || review.held
      ? `it held new tasks back for ${formatDuration(review.heldMs)} in all`
      : 'it never held a task back';
  const now = review.held ? `; at the end, ${reviewWords(review)}` : '';
  return `**Review queue:** capacity ${review.capacity}; at most ${review.peak} task${review.peak === 1 ? '' : 's'} running or waiting for a person at once; ${held}; ${review.waiting} waiting for a person at the end${now}.`;
}

export function renderReport(input: ReportInput): string {
  const { summary } = input;
  const c = summary.counts;
  const lines = [
    `# loopfleet report — ${input.endedAt.slice(0, 16).replace('T', ' ')}`,
    '',
    `Repository \`${input.repoRoot}\`, base \`${input.base}\`. Run from ${input.startedAt} to ${input.endedAt} (${formatDuration(Date.parse(input.endedAt) - Date.parse(input.startedAt))}); exit code ${input.exitCode}.`,
    '',
    `**${c.verified} verified · ${c.merged} merged · ${c.failed} failed · ${c.conflict} conflict · ${c.queued} queued · ${c.discarded} discarded** — ` +
      `${formatTokens(totalTokens(summary.totals.usage))} tokens, ${formatUsd(summary.totals.costUsd)} in all.`,
    '',
    costPerVerified(input),
  ];
  if (summary.review !== undefined) lines.push('', reviewQueue(summary.review));
  if (summary.stoppedBy !== null)
    lines.push(
      '',
      `**The run was stopped by the fleet gate \`${summary.stoppedBy}\`.** Unfinished tasks stay queued for the next run.`,
    );
  const notice = sandboxNotice(input.config.sandbox, input.sandboxed, input.sandboxCause ?? null);
  if (notice !== null) lines.push('', `**Unsandboxed:** ${notice}.`);
  lines.push('');
  const ran = input.tasks.filter((t) => input.ran.has(t.id));
  const rest = input.tasks.filter((t) => !input.ran.has(t.id));
  const byId = new Map(input.tasks.map((t) => [t.id, t]));
  for (const task of ran)
    lines.push(...taskSection(task, input.config, input.base, (id) => byId.get(id), input.endedAt));
  if (rest.length > 0) {
    lines.push('## Not run this time', '');
    for (const t of rest) {
      const conflicts = conflictEntries(t)
        .map((e) => ` ${conflictWords(e)}`)
        .join(';');
      const pr = t.pr === undefined ? '' : ` · ${prWords(t.pr)} ${t.pr.url}`;
      lines.push(oneLine(`- ${t.id} ${t.title} — ${t.status}${t.reason ? ` (${t.reason})` : ''}${conflicts}${pr}`));
    }
    lines.push('');
  }
  return visible(lines.join('\n'));
}
