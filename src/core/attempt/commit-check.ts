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
import type { AttemptInput, AttemptResult, PipelineServices } from './attempt-io.js';
import { failAttempt } from './commands.js';
import type { AttemptChecks } from './verify-phase.js';

/** Characters of a baseline's output an attempt keeps (the full output stays in the baseline store). */
const BASELINE_TAIL = 2_000;

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

export class CommitCheck {
  readonly #s: PipelineServices;
  readonly #checks: AttemptChecks;
  readonly #reach: () => Promise<ConfigReach>;

  constructor(services: PipelineServices, checks: AttemptChecks, reach: () => Promise<ConfigReach>) {
    this.#s = services;
    this.#checks = checks;
    this.#reach = reach;
  }

  /** The guard and the checks on the tip of `input.branch` in `input.worktree`, as the attempt's verify phase runs them. */
  async check(input: AttemptInput): Promise<AttemptResult> {
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
    const ran = await this.#checks.run(input, checks, result.baseline);
    result.checks = ran.results;
    result.check = decisive(ran.results);
    if (ran.changed !== null) {
      await git.resetHard(input.worktree, 'HEAD');
      return failAttempt(
        result,
        'check-failed',
        ran.changed,
        `${ran.changed}. A check must leave the committed files as they are.`,
      );
    }
    const failed = firstFailure(ran.results);
    if (failed !== null)
      return failAttempt(
        result,
        'check-failed',
        failureReason(failed),
        failureDetail(failed, ran.results, result.baseline),
      );
    if ((spec.prove ?? config.prove ?? false) && start !== null) {
      const paths = summary.numstat.map((n) => n.path);
      const unproved = await this.#checks.prove(input, result, checks, start, paths);
      if (unproved !== null) return unproved;
    }
    result.outcome = 'verified';
    return result;
  }
}
