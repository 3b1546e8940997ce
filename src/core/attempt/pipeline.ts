import type { ConfigReach } from '../../ports/git.js';
import { RefusedError } from '../../domain/errors.js';
import { exemption } from '../guard/diff-guard.js';
import { parseVerdict } from '../verify/verdict.js';
import { VERDICT_SCHEMA, explorerPrompt, implementerPrompt, reviewerPrompt } from '../roles/prompts.js';
import { checkCommandLine, checksOf, reviewerNotes } from '../verify/checks.js';
import { overlapping, plannedFiles } from '../roles/plan-files.js';
import { reviewDiff } from '../verify/review-diff.js';
import { CHOICE_SCHEMA } from '../roles/choose-prompt.js';
import type { AttemptInput, AttemptResult, PipelineServices, RecheckOutcome } from './attempt-io.js';
import { AttemptCommands, failAttempt } from './commands.js';
import { AttemptChecks } from './verify-phase.js';
import { AttemptWorktree } from './setup-phase.js';
import { SetupTrust } from './setup-trust.js';
import { CommitCheck, emptyResult, guardCommit, keptBaselines, runChecksOn } from './commit-check.js';

/** One attempt of one task: setup (new worktree only) → explore → implement → commit → guard → check → review. */
export class Pipeline {
  readonly #s: PipelineServices;
  /** where the person's git configuration reaches into the repository: read once per run */
  #reach: Promise<ConfigReach> | undefined;
  readonly #run: AttemptCommands;
  readonly #checks: AttemptChecks;
  readonly #worktree: AttemptWorktree;
  readonly #commitCheck: CommitCheck;

  /** `trust` is told of every landing on base (the fleet's merges); a pipeline alone has seen none. */
  constructor(services: PipelineServices, trust: SetupTrust = new SetupTrust(services.git)) {
    this.#s = services;
    this.#run = new AttemptCommands(services);
    this.#checks = new AttemptChecks(services, this.#run);
    this.#worktree = new AttemptWorktree(services, this.#run, trust);
    this.#commitCheck = new CommitCheck(services, this.#checks, this.#worktree, () => this.#configReach());
  }

  async run(input: AttemptInput): Promise<AttemptResult> {
    const result = emptyResult();
    const { spec, config } = input;

    // The check runs agent-written code: without a sandbox it runs only where `sandbox: off` says so.
    const checkCommand = this.#check(input);
    if (checkCommand !== null && !this.#s.sandboxed && config.sandbox !== 'off') {
      const reason = `check \`${checkCommand}\` refused: it runs agent-written code and there is no sandbox (bubblewrap) here; install bubblewrap, or write \`sandbox: off\` to run it unsandboxed`;
      return failAttempt(result, 'check-failed', reason, reason);
    }

    input.observer.phase('setup');
    const prepared = await this.#worktree.ensure(input);
    if (prepared.fresh) {
      const failed = await this.#worktree.setup(input, result, prepared);
      if (failed !== null) return failed;
    }

    const checks = checksOf(spec, config);
    // A branch made for this attempt starts where it was made; an older one's start is asked of git.
    let startCommit =
      checks.length > 0 || (spec.prove ?? config.prove ?? false)
        ? (prepared.start ?? (await this.#s.scratch.mergeBase(input.worktree, input.base)))
        : null;
    if (checks.length > 0 && startCommit !== null) {
      // The full output stays in baselines.json; each attempt keeps a short tail.
      result.baseline = keptBaselines(await this.#checks.baseline(input, checks, startCommit));
    }

    // The implementer's `LESSON:` lines are kept only once the attempt verifies (see the end of run).
    let implementerAnswer: string | null = null;
    if (input.verifyOnly) {
      result.plan = input.previousPlan ?? '(verifying a rebased branch)';
    } else {
      if (input.approvedPlan !== null) {
        result.plan = input.approvedPlan;
      } else {
        input.observer.phase('explore');
        const lessons = await this.#lessons(input);
        const plan = (
          await this.#run.agent(
            input,
            'explorer',
            explorerPrompt(spec, input.attempt, this.#check(input), input.evidence, lessons),
          )
        ).text;
        result.plan = plan.trim() === '' ? '(the explorer gave no plan)' : plan.trim();
        if (input.stopAfterPlan) {
          result.outcome = 'interrupted';
          result.reason = 'the plan awaits approval';
          result.awaitingApproval = true;
          return result;
        }
      }
      const blocker = (await input.observer.planned?.(result.plan)) ?? null;
      if (blocker !== null) {
        result.outcome = 'interrupted';
        result.reason = `waiting: overlaps ${blocker.id} on ${blocker.files.join(', ')}`;
        result.waitingFor = blocker;
        return result;
      }
      if (input.planOnly === true) {
        result.outcome = 'interrupted';
        result.reason = 'planned: the candidates implement the plan';
        return result;
      }
      // The plan is implemented on a base that holds every task it overlaps that has landed by now: after a
      // wait, and whenever base moved under the worktree in the files the plan names. The baseline must then
      // be the new start's, or the check would be judged against a base the branch no longer starts from.
      if (input.rebaseFirst === true || (await this.#baseMovedUnder(input, result.plan))) {
        await this.#rebaseFirst(input);
        if (startCommit !== null) {
          const moved = await this.#s.scratch.mergeBase(input.worktree, input.base);
          if (moved !== startCommit) {
            startCommit = moved;
            if (checks.length > 0)
              result.baseline = keptBaselines(await this.#checks.baseline(input, checks, startCommit));
          }
        }
      }

      input.observer.phase('implement');
      const answer = await this.#run.agent(
        input,
        'implementer',
        implementerPrompt(spec, input.attempt, this.#check(input), result.plan, input.evidence),
      );
      implementerAnswer = answer.text;
    }

    input.observer.phase('verify');
    // The check and the review see exactly the commit: the index is rebuilt from HEAD before it, and a
    // working tree that still differs after it (a nested repository, a file git would not take) fails.
    const snapshot = await this.#s.git.commitSnapshot(
      input.worktree,
      `${spec.id}: ${spec.title}\n\nAttempt ${input.attempt}, committed by loopfleet.`,
      prepared.copied,
      { maxFileBytes: config.maxFileBytes, maxBytes: config.maxBytes, exempt: exemption(spec.files) },
    );
    result.commit = snapshot.commit;
    if (snapshot.refused !== undefined && snapshot.refused.length > 0) {
      result.guard = snapshot.refused;
      return failAttempt(result, 'guard-failed', result.guard.join('; '), result.guard.join('\n'));
    }
    if (snapshot.differs.length > 0) {
      const more = snapshot.differs.length > 10 ? ` and ${snapshot.differs.length - 10} more` : '';
      result.guard = [
        `guard: working tree differs from the commit: ${snapshot.differs.slice(0, 10).join(', ')}${more}`,
      ];
      if (result.commit !== null) await this.#s.git.resetHard(input.worktree, `${result.commit}~1`);
      return failAttempt(result, 'guard-failed', result.guard[0]!, result.guard[0]!);
    }
    const summary = await this.#s.git.diffSummary(input.worktree, input.base);
    const { numstat, patch: diff, stat } = summary;
    if (numstat.length === 0 && spec.everyMs !== undefined) {
      // A recurring task that finds nothing to do has done its job for this run.
      result.outcome = 'unchanged';
      result.reason = 'nothing to change';
      return result;
    }
    if (numstat.length === 0) {
      return failAttempt(
        result,
        'check-failed',
        'the implementer changed nothing',
        'No file differs from the base branch.',
      );
    }
    result.diffStat = stat;

    result.guard = await guardCommit(this.#s, input, summary, snapshot.ignored, await this.#configReach());
    if (result.guard.length > 0) {
      // A refused change must not stay in the branch's history (it may hold a secret): back to the attempt's start.
      if (result.commit !== null) await this.#s.git.resetHard(input.worktree, `${result.commit}~1`);
      return failAttempt(result, 'guard-failed', result.guard.join('; '), result.guard.join('\n'));
    }

    const check = this.#check(input);
    // A check that changed the commit's files fails, and the worktree is put back to the commit.
    const failedChecks = await runChecksOn(
      result,
      () => this.#checks.run(input, checks, result.baseline),
      () => this.#s.git.resetHard(input.worktree, 'HEAD'),
    );
    if (failedChecks !== null) return failedChecks;
    if ((spec.prove ?? config.prove ?? false) && checks.length > 0 && startCommit !== null) {
      const unproved = await this.#checks.prove(
        input,
        result,
        checks,
        startCommit,
        numstat.map((n) => n.path),
      );
      if (unproved !== null) return unproved;
    }

    const review = spec.review ?? config.review;
    if (review || check === null) {
      const shown = reviewDiff({ numstat, patch: diff });
      if (!shown.ok) {
        result.verdict = { pass: false, reasons: [shown.reason] };
        return failAttempt(
          result,
          'vetoed',
          `not reviewed: ${shown.reason}`,
          `The change was not reviewed: ${shown.reason}.`,
        );
      }
      const answer = await this.#run.agent(
        input,
        'verifier',
        reviewerPrompt(
          spec,
          input.attempt,
          result.plan,
          shown,
          result.check,
          reviewerNotes(result.check, result.checks),
        ),
        VERDICT_SCHEMA,
      );
      result.verdict = parseVerdict(answer.text);
      if (!result.verdict.pass) {
        const reasons = result.verdict.reasons.join('; ') || 'no reason given';
        const quoted = [
          {
            label: "the reviewer's reasons (the reviewer read the agent-written diff)",
            text: result.verdict.reasons.map((r) => `- ${r}`).join('\n') || '(no reason given)',
          },
        ];
        return failAttempt(result, 'vetoed', `reviewer veto: ${reasons}`, '', quoted, 'the reviewer vetoed the change');
      }
    }
    result.outcome = 'verified';
    await this.#commitCheck.recordTip(input, result.commit);
    if (implementerAnswer !== null) await this.#learn(input, implementerAnswer);
    return result;
  }

  /** Best-of-N: the reviewer's answer to a {@link choosePrompt}, with read-only tools in `input.worktree`. */
  async choose(input: AttemptInput, prompt: string): Promise<string> {
    return (await this.#run.agent(input, 'verifier', prompt, CHOICE_SCHEMA)).text;
  }

  /**
   * The coordinator's own check of a commit a worker made and says is verified ({@link CommitCheck.check});
   * `made`: the worktree was made here for it, and `setup:` runs first.
   */
  checkCommit(input: AttemptInput, made: { depsCloned: boolean } | null = null): Promise<AttemptResult> {
    return this.#commitCheck.check(input, made);
  }

  /** Whether the tip of task `id`'s branch passed its checks here ({@link CheckedCommits}). */
  checkedHere(id: string, branch: string): Promise<boolean> {
    return this.#commitCheck.checkedHere(id, branch);
  }

  /** The merge queue's re-check of the branch as it is now ({@link CommitCheck.recheck}). */
  recheck(input: AttemptInput): Promise<RecheckOutcome> {
    return this.#commitCheck.recheck(input);
  }

  #configReach(): Promise<ConfigReach> {
    return (this.#reach ??= this.#s.git.configReach());
  }

  /** The lessons for the explorer; an unreadable lessons file costs a warning, not the attempt. */
  async #lessons(input: AttemptInput): Promise<string> {
    try {
      return await this.#s.lessons.forPrompt();
    } catch (error) {
      input.observer.notice(`lessons: ${error instanceof Error ? error.message : String(error)}`, 'warn');
      return '';
    }
  }

  /** The implementer's `LESSON:` lines are kept; a lessons file that cannot be written costs a warning, not the attempt. */
  async #learn(input: AttemptInput, answer: string): Promise<void> {
    try {
      for (const lesson of await this.#s.lessons.learnFromAnswer(answer, input.spec.id))
        input.observer.notice(`lesson kept: ${lesson}`, 'info');
    } catch (error) {
      input.observer.notice(`lessons: ${error instanceof Error ? error.message : String(error)}`, 'warn');
    }
  }

  #check(input: AttemptInput): string | null {
    return checkCommandLine(checksOf(input.spec, input.config));
  }

  /**
   * True when base has moved past the worktree's start and the commits it gained touch a file the plan
   * names: a task that landed after this one's worktree was made, which the implementer must build on.
   */
  async #baseMovedUnder(input: AttemptInput, plan: string): Promise<boolean> {
    const files = plannedFiles(plan);
    if (files === null || files.length === 0) return false;
    const tip = await this.#s.git.revParse(input.base);
    const start = await this.#s.scratch.mergeBase(input.worktree, input.base);
    if (tip === null || tip === start) return false;
    return overlapping(files, await this.#s.scratch.changedFiles(start, tip)).length > 0;
  }

  async #rebaseFirst(input: AttemptInput): Promise<void> {
    try {
      await this.#s.git.rebase(input.worktree, input.base);
    } catch (error) {
      if (!(error instanceof RefusedError)) throw error;
      input.observer.notice(`${error.message}; implementing on the branch as it is`, 'info');
    }
  }
}
