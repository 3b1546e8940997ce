import type { BaselineResult, CheckResult, CheckSpec, FleetConfig, TaskSpec, TestCounts } from '../../domain/types.js';
import { formatCounts } from './test-counts.js';
import { quoteUntrusted } from '../text/untrusted.js';
import { formatDuration } from '../text/format-units.js';

/**
 * The checks of a task and how an attempt is judged on them.
 *
 * The rule, per check, in this order:
 * 1. timed out or killed → fails;
 * 1a. its test counts disagree (one runner printed summaries that do not say the same: a test may print a
 *    summary of its own) → fails, whatever the exit code; counts that disagree on base are not used;
 * 2. test counts known here and on base, and fewer tests ran than on base → fails ("the check ran 3 tests,
 *    base ran 22"), whatever the exit code;
 * 3. exit 0 → passes;
 * 4. the check is the front matter's shared one (not the task's own `check:`), it fails on base too, test
 *    counts are known on both sides, no more tests fail than on base and, where both outputs name their
 *    failing tests, every test failing now failed on base (so no base-passing test broke and every new test
 *    passes) → passes as `not-worse`. A task's own check is what the task is to make pass: it never passes
 *    by "not worse";
 * 5. otherwise → fails.
 * A check with `required: false` that would fail is a `warning`: reported, never failing the attempt.
 */

export function singleCheck(run: string): CheckSpec {
  return { name: run, run, required: true };
}

/** True when the task sets its own `check:` (then it must pass outright, see rule 4). */
export function ownChecks(spec: TaskSpec): boolean {
  return (spec.checks !== undefined && spec.checks.length > 0) || spec.check !== undefined;
}

/** The task's checks: its own list or command, else the front matter's; empty when there is none. */
export function checksOf(spec: TaskSpec, config: FleetConfig): CheckSpec[] {
  if (spec.checks !== undefined && spec.checks.length > 0) return spec.checks;
  if (spec.check !== undefined) return [singleCheck(spec.check)];
  if (config.checks !== undefined && config.checks.length > 0) return config.checks;
  return config.check === null ? [] : [singleCheck(config.check)];
}

/** What agents are told decides the task: the required commands, `&&`-joined; null when none. */
export function checkCommandLine(checks: readonly CheckSpec[]): string | null {
  const required = checks.filter((c) => c.required).map((c) => c.run);
  return required.length === 0 ? null : required.join(' && ');
}

/** `npm test`, or `lint (npm run lint)` for a named check. */
export function checkLabel(c: { name?: string; command: string }): string {
  return c.name === undefined || c.name === c.command ? `\`${c.command}\`` : `'${c.name}' (\`${c.command}\`)`;
}

function exitWords(r: CheckResult): string {
  if (r.timedOut) return `timed out after ${formatDuration(r.durationMs)}`;
  return r.exitCode === null ? 'was killed' : `exited ${r.exitCode}`;
}

function failingOnBase(base: BaselineResult): string {
  return base.counts === null
    ? `exit ${base.exitCode ?? 'killed'}`
    : `${base.counts.failed} failing test${base.counts.failed === 1 ? '' : 's'}`;
}

/**
 * Judges one run against its base; sets `judged` and `note` on the result and returns it. `notWorseAllowed`
 * is false for a task's own check (rule 4).
 */
export function judgeCheck(
  result: CheckResult,
  spec: CheckSpec,
  base: BaselineResult | null,
  notWorseAllowed: boolean,
): CheckResult {
  const counts = result.counts ?? null;
  const baseCounts = base?.counts?.disagreeing === undefined ? (base?.counts ?? null) : null;
  let failed: string | null = null;
  let notWorse: string | null = null;
  if (result.timedOut || result.exitCode === null) {
    failed = exitWords(result);
  } else if (counts?.disagreeing !== undefined) {
    failed = `${exitWords(result)}, and its test counts disagree (${counts.disagreeing}): a test may be printing a summary of its own, so no count is believed`;
  } else if (counts !== null && baseCounts !== null && counts.total < baseCounts.total) {
    failed = `the check ran ${counts.total} tests, base ran ${baseCounts.total}`;
  } else if (result.exitCode !== 0) {
    const baseFailed = notWorseAllowed && base !== null && (base.timedOut || base.exitCode !== 0);
    const worse = baseFailed && counts !== null && baseCounts !== null ? worseThanBase(counts, baseCounts) : 'unknown';
    if (worse === null) notWorse = `fails on base too (${failingOnBase(base!)}); not worse: ${formatCounts(counts!)}`;
    else failed = `${exitWords(result)}${worse === 'unknown' ? '' : ` — ${worse}`}`;
  }
  result.required = spec.required;
  result.name = spec.name;
  if (failed === null) {
    result.judged = notWorse === null ? 'passed' : 'not-worse';
    result.note = notWorse;
  } else {
    result.judged = spec.required ? 'failed' : 'warning';
    result.note = spec.required ? failed : `${failed} (not required: reported only)`;
  }
  return result;
}

/** null: not worse; otherwise how it is worse. */
function worseThanBase(now: TestCounts, base: TestCounts): string | null {
  if (now.failed > base.failed) return `${now.failed} failing, base had ${base.failed}`;
  if (now.failing !== undefined && base.failing !== undefined) {
    const before = new Set(base.failing);
    const fresh = now.failing.filter((n) => !before.has(n));
    if (fresh.length > 0)
      return `failing now but not on base: ${fresh.slice(0, 5).join(', ')}${fresh.length > 5 ? ', …' : ''}`;
  }
  return null;
}

/** The first failed required check, or null when the attempt passes its checks. */
export function firstFailure(results: readonly CheckResult[]): CheckResult | null {
  return results.find((r) => r.judged === 'failed') ?? null;
}

/** The result kept in the attempt's single `check` field: the failure, else the first required check. */
export function decisive(results: readonly CheckResult[]): CheckResult | null {
  return firstFailure(results) ?? results.find((r) => r.required !== false) ?? results[0] ?? null;
}

/** The attempt's reason for a failed check. */
export function failureReason(r: CheckResult): string {
  const counts =
    r.counts != null && !/failing|ran \d+ tests|disagree/.test(r.note ?? '') ? ` (${formatCounts(r.counts)})` : '';
  return `check ${checkLabel(r)} ${r.note ?? exitWords(r)}${counts}`;
}

/**
 * The marker line the no-progress fingerprint keeps ({@link failureFingerprint}): "9 failing then 1
 * failing" are different failures even though the fingerprint blanks other digits.
 */
export function countsMarker(c: TestCounts): string {
  return `Failing tests: ${c.failed} of ${c.total}`;
}

/** What the next attempt is told about a failed check: counts against base, warnings, the output tail. */
export function failureDetail(
  failed: CheckResult,
  results: readonly CheckResult[],
  baseline: readonly BaselineResult[],
): string {
  const lines: string[] = [];
  if (failed.counts?.disagreeing !== undefined)
    lines.push(`The check's test counts disagree (${failed.counts.disagreeing}): none is believed.`);
  else if (failed.counts != null) {
    lines.push(countsMarker(failed.counts));
    const base = baseline.find((b) => b.command === failed.command);
    if (base?.counts != null) lines.push(`On base: ${base.counts.failed} of ${base.counts.total} failing`);
    if (failed.counts.failing !== undefined && failed.counts.failing.length > 0)
      lines.push(`Failing: ${failed.counts.failing.slice(0, 20).join(', ')}`);
  }
  for (const w of results.filter((r) => r.judged === 'warning'))
    lines.push(`Also failing (not required): ${checkLabel(w)}`);
  if (lines.length > 0) lines.push('');
  lines.push(quoteUntrusted(`the last output of ${checkLabel(failed)}, printed by code under test`, failed.outputTail));
  return lines.join('\n');
}

/**
 * What loopfleet tells the reviewer of the checks, in its own words beside the output: a pass by "not worse"
 * or a warning of another check is said, so that an exit code of 1 is not read as a failed check.
 */
export function reviewerNotes(decisiveResult: CheckResult | null, results: readonly CheckResult[]): string[] {
  if (decisiveResult === null) return [];
  const notes: string[] = [];
  if (decisiveResult.judged === 'not-worse')
    notes.push(`loopfleet judged this check passed: it ${decisiveResult.note ?? 'is not worse than on base'}.`);
  for (const w of results.filter((r) => r.judged === 'warning'))
    notes.push(`The check ${checkLabel(w)} is not required and failed: ${w.note ?? ''}`);
  return notes;
}
