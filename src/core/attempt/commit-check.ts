/**
 * The coordinator's own check of a commit it did not make: a worker's attempt that says `verified`. The
 * guard and the checks — against their baseline, with `prove:` when set — run on the task's branch exactly
 * as this repository fetched it, in this machine's sandbox; no agent runs and nothing is committed.
 *
 * Invariant: everything the returned result holds — the commit, the diffstat, the guard's reasons, each
 * check's exit code, output and test counts, the baseline, the proof — comes from git and from this run,
 * never from the worker's message; only `outcome: 'verified'` says the checks passed here.
 */
import type { ConfigReach, DiffSummary } from '../../ports/git.js';
import type { BaselineResult } from '../../domain/types.js';
import { BACKLOG_NAME } from '../../domain/layout.js';
import { guardAttempt } from '../guard/diff-guard.js';
import { checkCommandLine, checksOf, decisive, failureDetail, failureReason, firstFailure } from '../verify/checks.js';
import { CheckedCommits } from '../verify/checked-commits.js';
import type { AttemptInput, AttemptResult, PipelineServices, RecheckOutcome } from './attempt-io.js';
import { failAttempt } from './commands.js';
import type { AttemptWorktree } from './setup-phase.js';
import { rebuiltFrom } from './setup-step.js';
import type { AttemptChecks } from './verify-phase.js';

/** Characters of a baseline's output an attempt keeps (the full output stays in the baseline store). */
const BASELINE_TAIL = 2_000;

/**
 * Runs the checks of a commit into `result` (its checks and decisive check): the failed attempt when a check
 * changed the committed files (the worktree is put back with `reset`) or failed; null when they all passed.
 */
export async function runChecksOn(
  result: AttemptResult,
  run: () => ReturnType<AttemptChecks['run']>,
  reset: () => Promise<void>,
): Promise<AttemptResult | null> {
  const ran = await run();
  result.checks = ran.results;
  result.check = decisive(ran.results);
  if (ran.changed !== null) {
    await reset();
    return failAttempt(
      result,
      'check-failed',
      ran.changed,
      `${ran.changed}. A check must leave the committed files as they are.`,
    );
  }
  const failed = firstFailure(ran.results);
  if (failed === null) return null;
  return failAttempt(
    result,
    'check-failed',
    failureReason(failed),
    failureDetail(failed, ran.results, result.baseline),
  );
}

export function emptyResult(): AttemptResult {
  return {
    outcome: 'running',
    reason: null,
    evidence: null,
    plan: null,
    setup: null,
    check: null,
    guard: [],
    verdict: null,
    commit: null,
    diffStat: null,
    checks: [],
    baseline: [],
    proof: null,
  };
}

/** Baselines as an attempt keeps them: each with a short tail of its output. */
export function keptBaselines(baselines: readonly BaselineResult[]): BaselineResult[] {
  return baselines.map((b) => ({ ...b, outputTail: b.outputTail.slice(-BASELINE_TAIL) }));
}

/**
 * The guard over what `base...HEAD` changes in the task's worktree: the reasons it refuses the diff, none
 * when it passes. `ignored`: untracked ignored paths the check would see beside the commit.
 */
export function guardCommit(
  s: PipelineServices,
  input: AttemptInput,
  summary: DiffSummary,
  ignored: string[],
  reach: ConfigReach,
): Promise<string[]> {
  const { spec, config } = input;
  return guardAttempt({
    git: s.git,
    worktree: input.worktree,
    base: input.base,
    numstat: summary.numstat,
    diff: summary.patch,
    entries: summary.entries,
    maxFiles: config.maxFiles,
    maxLines: config.maxLines,
    maxFileBytes: config.maxFileBytes,
    maxBytes: config.maxBytes,
    tests: config.tests,
    check: checkCommandLine(checksOf(spec, config)),
    ignored,
    // The backlog is the person's: no task may edit it, whatever `protect:` says.
    protect: [...config.protect, `/${BACKLOG_NAME}`],
    allowed: spec.files,
    facts: { reach, setup: [config.setup, spec.setup ?? null] },
  });
}

/**
 * Checks of a task's branch as this repository holds it, no agent involved: the coordinator's check of a
 * worker's commit, the merge queue's re-check, and the record of what passed ({@link CheckedCommits}).
 */
export class CommitCheck {
  readonly #s: PipelineServices;
  readonly #checks: AttemptChecks;
  readonly #worktree: AttemptWorktree;
  readonly #reach: () => Promise<ConfigReach>;
  readonly #checked: CheckedCommits;

  constructor(
    services: PipelineServices,
    checks: AttemptChecks,
    worktree: AttemptWorktree,
    reach: () => Promise<ConfigReach>,
  ) {
    this.#s = services;
    this.#checks = checks;
    this.#worktree = worktree;
    this.#reach = reach;
    this.#checked = new CheckedCommits(services.git);
  }

  /**
   * The guard and the checks on the tip of `input.branch` in `input.worktree`, as an attempt's verify phase
   * runs them; a pass is recorded. `made`: the worktree was made here for this commit and has had no
   * `setup:` — it runs first, sandboxed, as in a local attempt's new worktree on an agent's branch.
   */
  async check(input: AttemptInput, made: { depsCloned: boolean } | null): Promise<AttemptResult> {
    if (made !== null) {
      const fresh = { depsCloned: made.depsCloned, untrusted: rebuiltFrom(input.branch, true) };
      const failed = await this.#worktree.setup(input, emptyResult(), fresh);
      if (failed !== null) return failed;
    }
    const result = await this.#verify(input);
    if (result.outcome === 'verified') await this.#checked.record(input.spec.id, result.commit!);
    return result;
  }

  /**
   * The task's checks, in order, on its worktree as it is now (a branch the merge queue rebased onto the new
   * base), in the sandbox; no agent runs. A check that fails is judged as in an attempt, without a baseline.
   */
  async recheck(input: AttemptInput): Promise<RecheckOutcome> {
    const checks = checksOf(input.spec, input.config);
    if (checks.length > 0 && !this.#s.sandboxed && input.config.sandbox !== 'off') {
      const reason =
        'there is no sandbox (bubblewrap) to check it in again; install bubblewrap, or write `sandbox: off`';
      return { pass: false, reason, evidence: reason };
    }
    const { results, changed } = await this.#checks.run(input, checks, []);
    if (changed !== null) {
      await this.#s.git.resetHard(input.worktree, 'HEAD');
      return {
        pass: false,
        reason: changed,
        evidence: `${changed}. A check must leave the committed files as they are.`,
      };
    }
    const failed = firstFailure(results);
    if (failed !== null)
      return { pass: false, reason: failureReason(failed), evidence: failureDetail(failed, results, []) };
    await this.recordTip(input);
    return { pass: true };
  }

  /**
   * The tip of the task's branch passed its checks in this process (an attempt here, a re-check): recorded.
   * `checked`: the commit the checks ran on when the caller made it (an attempt's snapshot); else the tip.
   */
  async recordTip(input: AttemptInput, checked: string | null = null): Promise<void> {
    const tip = checked ?? (await this.#s.git.revParse(`refs/heads/${input.branch}`));
    if (tip !== null) await this.#checked.record(input.spec.id, tip);
  }

  /** Whether the tip of task `id`'s branch passed its checks here. */
  async checkedHere(id: string, branch: string): Promise<boolean> {
    return this.#checked.holds(id, await this.#s.git.revParse(`refs/heads/${branch}`));
  }

  async #verify(input: AttemptInput): Promise<AttemptResult> {
    const result = emptyResult();
    const { git, workspace, scratch } = this.#s;
    const { spec, config } = input;
    const commit = await git.revParse(`refs/heads/${input.branch}`);
    if (commit === null || !(await workspace.exists(input.worktree))) {
      const reason = `this repository holds no ${input.branch} to check`;
      return failAttempt(result, 'check-failed', reason, `${reason}: the worker pushed no commit that was fetched.`);
    }
    result.commit = commit;
    const checks = checksOf(spec, config);
    if (checks.length > 0 && !this.#s.sandboxed && config.sandbox !== 'off') {
      const reason =
        'there is no sandbox (bubblewrap) here to check it in; install bubblewrap, or write `sandbox: off`';
      return failAttempt(result, 'check-failed', reason, reason);
    }
    const summary = await git.diffSummary(input.worktree, input.base);
    if (summary.numstat.length === 0)
      return failAttempt(result, 'check-failed', 'the branch changes nothing', 'No file differs from the base branch.');
    result.diffStat = summary.stat;
    // The worktree holds the fetched commit and what this repository copied in (no agent wrote here): no
    // file the check sees is left out of the commit, so nothing is newly ignored.
    result.guard = await guardCommit(this.#s, input, summary, [], await this.#reach());
    if (result.guard.length > 0)
      return failAttempt(result, 'guard-failed', result.guard.join('; '), result.guard.join('\n'));

    const start = checks.length > 0 ? await scratch.mergeBase(input.worktree, input.base) : null;
    if (start !== null) {
      // The worker said what failed on base already; here it is only the yardstick, said once by the worker.
      const quiet = { ...input, observer: { ...input.observer, notice: () => undefined } };
      result.baseline = keptBaselines(await this.#checks.baseline(quiet, checks, start));
    }
    const failedChecks = await runChecksOn(
      result,
      () => this.#checks.run(input, checks, result.baseline),
      () => git.resetHard(input.worktree, 'HEAD'),
    );
    if (failedChecks !== null) return failedChecks;
    if ((spec.prove ?? config.prove ?? false) && start !== null) {
      const paths = summary.numstat.map((n) => n.path);
      const unproved = await this.#checks.prove(input, result, checks, start, paths);
      if (unproved !== null) return unproved;
    }
    result.outcome = 'verified';
    return result;
  }
}
