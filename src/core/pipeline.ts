import type { ConfigReach, GitPort } from '../ports/git.js';
import type { ModelClient } from '../ports/model.js';
import type { ProcessRunner } from '../ports/process.js';
import type { Workspace } from '../ports/workspace.js';
import type { RoleDefinition } from './agents.js';
import type { Lessons } from './lessons.js';
import { exemption, guardAttempt } from './guard.js';
import { BACKLOG_NAME } from '../domain/layout.js';
import { RefusedError } from '../domain/errors.js';
import { parseVerdict } from './verdict.js';
import {
  VERDICT_SCHEMA,
  explorerPrompt,
  failureEvidence,
  implementerPrompt,
  reviewerPrompt,
  systemPrompt,
} from './prompts.js';
import type { AttemptOutcome, BaselineResult, CheckResult, CheckSpec, FleetConfig, Phase, Role, TaskSpec } from '../domain/types.js';
import { MAX_TIMER_MS } from '../domain/layout.js';
import type { BaselineStore, ScratchTrees, TrackedFiles } from '../ports/verification.js';
import { watchTracked } from './check-integrity.js';
import { baseFailure, baselinesFor } from './baseline.js';
import { checkCommandLine, checksOf, decisive, failureDetail, failureReason, firstFailure, judgeCheck, reviewerNotes, ownChecks } from './checks.js';
import { overlapping, plannedFiles } from './plan-files.js';
import { proveAttempt } from './prove.js';
import { parseTestCounts } from './test-counts.js';
import { reviewDiff } from './review-diff.js';
import type { RecheckOutcome } from './merge-queue.js';
import type { AttemptInput, AttemptResult } from './attempt-io.js';
import { SetupTrust } from './setup-trust.js';
import { landedOn, rebuiltFrom, runSetup, type SetupWorktree } from './setup-step.js';

const OUTPUT_TAIL = 8_000;
const BASELINE_TAIL = 2_000;

export interface PipelineServices {
  git: GitPort;
  runner: ProcessRunner;
  /** the API client and the command-line agent client; a role with `command:` uses the latter */
  model: ModelClient;
  cliModel: ModelClient;
  workspace: Workspace;
  roles: Record<Role, RoleDefinition>;
  /** bubblewrap is there and `sandbox:` is not off */
  sandboxed: boolean;
  /** the shell tool may be offered: sandboxed, or `sandbox: off` said explicitly */
  shellAllowed: boolean;
  /** the checks' results on base commits */
  baselines: BaselineStore;
  /** throw-away checkouts for baselines and proofs */
  scratch: ScratchTrees;
  /** what a check does to the tracked files it runs on */
  tracked: TrackedFiles;
  /** `.loop-worktrees/lessons.md`: read for every explorer, added to from implementers' answers */
  lessons: Lessons;
}

function modelFor(def: RoleDefinition, spec: TaskSpec, config: FleetConfig): string {
  return def.model ?? spec.model ?? config.model;
}

function tail(text: string): string {
  return text.length > OUTPUT_TAIL ? text.slice(-OUTPUT_TAIL) : text;
}

/** One attempt of one task: setup (new worktree only) → explore → implement → commit → guard → check → review. */
export class Pipeline {
  readonly #s: PipelineServices;
  /** where the person's git configuration reaches into the repository: read once per run */
  #reach: Promise<ConfigReach> | undefined;
  readonly #trust: SetupTrust;

  /** `trust` is told of every landing on base (the fleet's merges); a pipeline alone has seen none. */
  constructor(services: PipelineServices, trust: SetupTrust = new SetupTrust(services.git)) {
    this.#s = services;
    this.#trust = trust;
  }

  async run(input: AttemptInput): Promise<AttemptResult> {
    const result: AttemptResult = {
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
    const { spec, config } = input;

    // The check runs agent-written code: without a sandbox it runs only where `sandbox: off` says so.
    const checkCommand = this.#check(input);
    if (checkCommand !== null && !this.#s.sandboxed && config.sandbox !== 'off') {
      const reason = `check \`${checkCommand}\` refused: it runs agent-written code and there is no sandbox (bubblewrap) here; install bubblewrap, or write \`sandbox: off\` to run it unsandboxed`;
      return this.#fail(result, 'check-failed', reason, reason);
    }

    input.observer.phase('setup');
    const prepared = await this.#ensureWorktree(input);
    if (prepared.fresh) {
      const failed = await this.#setup(input, result, prepared);
      if (failed !== null) return failed;
    }

    const checks = checksOf(spec, config);
    let startCommit = checks.length > 0 || (spec.prove ?? config.prove ?? false) ? await this.#s.scratch.mergeBase(input.worktree, input.base) : null;
    if (checks.length > 0 && startCommit !== null) {
      // The full output stays in baselines.json; each attempt keeps a short tail.
      result.baseline = (await this.#baseline(input, checks, startCommit)).map((b) => ({ ...b, outputTail: b.outputTail.slice(-BASELINE_TAIL) }));
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
        const plan = (await this.#agent(input, 'explorer', explorerPrompt(spec, input.attempt, this.#check(input), input.evidence, lessons))).text;
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
      // The plan is implemented on a base that holds every task it overlaps that has landed by now: after a
      // wait, and whenever base moved under the worktree in the files the plan names. The baseline must then
      // be the new start's, or the check would be judged against a base the branch no longer starts from.
      if (input.rebaseFirst === true || (await this.#baseMovedUnder(input, result.plan))) {
        await this.#rebaseFirst(input);
        if (startCommit !== null) {
          const moved = await this.#s.scratch.mergeBase(input.worktree, input.base);
          if (moved !== startCommit) {
            startCommit = moved;
            if (checks.length > 0) result.baseline = (await this.#baseline(input, checks, startCommit)).map((b) => ({ ...b, outputTail: b.outputTail.slice(-BASELINE_TAIL) }));
          }
        }
      }

      input.observer.phase('implement');
      const answer = await this.#agent(input, 'implementer', implementerPrompt(spec, input.attempt, this.#check(input), result.plan, input.evidence));
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
      return this.#fail(result, 'guard-failed', result.guard.join('; '), result.guard.join('\n'));
    }
    if (snapshot.differs.length > 0) {
      const more = snapshot.differs.length > 10 ? ` and ${snapshot.differs.length - 10} more` : '';
      result.guard = [`guard: working tree differs from the commit: ${snapshot.differs.slice(0, 10).join(', ')}${more}`];
      if (result.commit !== null) await this.#s.git.resetHard(input.worktree, `${result.commit}~1`);
      return this.#fail(result, 'guard-failed', result.guard[0]!, result.guard[0]!);
    }
    const { numstat, patch: diff, stat } = await this.#s.git.diffSummary(input.worktree, input.base);
    if (numstat.length === 0 && spec.everyMs !== undefined) {
      // A recurring task that finds nothing to do has done its job for this run.
      result.outcome = 'unchanged';
      result.reason = 'nothing to change';
      return result;
    }
    if (numstat.length === 0) {
      return this.#fail(result, 'check-failed', 'the implementer changed nothing', 'No file differs from the base branch.');
    }
    result.diffStat = stat;

    result.guard = await guardAttempt({
      git: this.#s.git,
      worktree: input.worktree,
      base: input.base,
      numstat,
      diff,
      maxFiles: config.maxFiles,
      maxLines: config.maxLines,
      maxFileBytes: config.maxFileBytes,
      maxBytes: config.maxBytes,
      tests: config.tests,
      check: this.#check(input),
      ignored: snapshot.ignored,
      // The backlog is the person's: no task may edit it, whatever `protect:` says.
      protect: [...config.protect, `/${BACKLOG_NAME}`],
      allowed: spec.files,
      facts: { reach: await (this.#reach ??= this.#s.git.configReach()), setup: [config.setup, spec.setup ?? null] },
    });
    if (result.guard.length > 0) {
      // A refused change must not stay in the branch's history (it may hold a secret): back to the attempt's start.
      if (result.commit !== null) await this.#s.git.resetHard(input.worktree, `${result.commit}~1`);
      return this.#fail(result, 'guard-failed', result.guard.join('; '), result.guard.join('\n'));
    }

    const check = this.#check(input);
    const ran = await this.#runChecks(input, checks, result.baseline);
    result.checks = ran.results;
    result.check = decisive(result.checks);
    if (ran.changed !== null) {
      // What the checks passed on is not the commit: fail, and put the worktree back to the commit.
      await this.#s.git.resetHard(input.worktree, 'HEAD');
      return this.#fail(result, 'check-failed', ran.changed, `${ran.changed}. A check must leave the committed files as they are.`);
    }
    const failed = firstFailure(result.checks);
    if (failed !== null) {
      return this.#fail(result, 'check-failed', failureReason(failed), failureDetail(failed, result.checks, result.baseline));
    }
    if ((spec.prove ?? config.prove ?? false) && checks.length > 0 && startCommit !== null) {
      const unproved = await this.#prove(input, result, checks, startCommit, numstat.map((n) => n.path));
      if (unproved !== null) return unproved;
    }

    const review = spec.review ?? config.review;
    if (review || check === null) {
      const shown = reviewDiff({ numstat, patch: diff });
      if (!shown.ok) {
        result.verdict = { pass: false, reasons: [shown.reason] };
        return this.#fail(result, 'vetoed', `not reviewed: ${shown.reason}`, `The change was not reviewed: ${shown.reason}.`);
      }
      const answer = await this.#agent(
        input,
        'verifier',
        reviewerPrompt(spec, input.attempt, result.plan, shown, result.check, reviewerNotes(result.check, result.checks)),
        VERDICT_SCHEMA,
      );
      result.verdict = parseVerdict(answer.text);
      if (!result.verdict.pass) {
        const reasons = result.verdict.reasons.join('; ') || 'no reason given';
        const quoted = [{ label: "the reviewer's reasons (the reviewer read the agent-written diff)", text: result.verdict.reasons.map((r) => `- ${r}`).join('\n') || '(no reason given)' }];
        return this.#fail(result, 'vetoed', `reviewer veto: ${reasons}`, '', quoted, 'the reviewer vetoed the change');
      }
    }
    result.outcome = 'verified';
    if (implementerAnswer !== null) await this.#learn(input, implementerAnswer);
    return result;
  }

  /**
   * The task's checks, in order, on its worktree as it is now (a branch the merge queue rebased onto the new
   * base), in the sandbox; no agent runs. A check that fails is judged as in an attempt, without a baseline.
   */
  async recheck(input: AttemptInput): Promise<RecheckOutcome> {
    const checks = checksOf(input.spec, input.config);
    if (checks.length > 0 && !this.#s.sandboxed && input.config.sandbox !== 'off') {
      const reason = 'there is no sandbox (bubblewrap) to check it in again; install bubblewrap, or write `sandbox: off`';
      return { pass: false, reason, evidence: reason };
    }
    const { results, changed } = await this.#runChecks(input, checks, []);
    if (changed !== null) {
      await this.#s.git.resetHard(input.worktree, 'HEAD');
      return { pass: false, reason: changed, evidence: `${changed}. A check must leave the committed files as they are.` };
    }
    const failed = firstFailure(results);
    return failed === null ? { pass: true } : { pass: false, reason: failureReason(failed), evidence: failureDetail(failed, results, []) };
  }

  /** `setup:` in a new worktree, where setup-step.ts says; returns the failed result, or null. */
  async #setup(input: AttemptInput, result: AttemptResult, worktree: SetupWorktree): Promise<AttemptResult | null> {
    const { config } = input;
    const outcome = await runSetup(input.spec, config, worktree, this.#s.sandboxed, (text) => input.observer.output('setup', text), (command, place) =>
      place.sandbox
        ? this.#command(input, 'setup', command, config.setupTimeoutMs, true, false, { network: place.network })
        : this.#command({ ...input, env: input.hostEnv }, 'setup', command, config.setupTimeoutMs, false),
    );
    result.setup = outcome.result;
    if (outcome.kind !== 'failed') return null;
    return this.#fail(result, 'setup-failed', outcome.reason, '', [{ label: `the last output of setup \`${outcome.result.command}\``, text: outcome.result.outputTail }]);
  }

  /**
   * `prove:` — the tests the attempt kept must fail with its code set back to base: a check that passes
   * without the change proves nothing. Returns the failed result, or null when proved.
   */
  async #prove(input: AttemptInput, result: AttemptResult, checks: CheckSpec[], startCommit: string, paths: string[]): Promise<AttemptResult | null> {
    const { spec, config } = input;
    // The branch's head: an attempt that committed nothing new is proved on what the branch holds.
    const head = result.commit ?? (await this.#s.git.revParse(input.branch));
    if (head === null) throw new Error(`branch ${input.branch} does not resolve to a commit`);
    result.proof = await proveAttempt(
      { commit: head, base: startCommit, paths, checks, testGlobs: config.tests ?? [], scratchName: `prove-${spec.id}` },
      {
        scratch: this.#s.scratch,
        prepare: (dir) => this.#prepareScratch(input, dir),
        run: async (dir, c) => {
          const { value, changed } = await watchTracked(this.#s.tracked, dir, (pinned) =>
            this.#command({ ...input, worktree: dir }, 'verify', c.run, config.checkTimeoutMs, this.#s.sandboxed, true, { pinned }),
          );
          return { check: value, changed };
        },
      },
    );
    input.observer.output('verify', `${result.proof.message}\n`);
    if (result.proof.status !== 'not-proved' && result.proof.status !== 'no-tests') return null;
    const detail = `${result.proof.message}. Tests kept: ${result.proof.tests.join(', ') || 'none'}; set back to base: ${result.proof.restored.join(', ')}.`;
    return this.#fail(result, 'check-failed', result.proof.message, detail, [{ label: 'the last output of the checks with the code set back to base, printed by code under test', text: result.proof.outputTail }]);
  }

  /**
   * The checks in order, in the sandbox, each judged against its result on base when there is one; the
   * first that fails ends the run. `changed`: what they did to the tracked files, null when nothing.
   */
  async #runChecks(input: AttemptInput, checks: readonly CheckSpec[], baselines: readonly BaselineResult[]): Promise<{ results: CheckResult[]; changed: string | null }> {
    if (checks.length === 0) return { results: [], changed: null };
    const { value: results, changed } = await watchTracked(this.#s.tracked, input.worktree, async (pinned) => {
      const results: CheckResult[] = [];
      for (const c of checks) {
        const run = await this.#command(input, 'verify', c.run, input.config.checkTimeoutMs, this.#s.sandboxed, true, { pinned });
        const base = baselines.find((b) => b.command === c.run) ?? null;
        results.push(judgeCheck(run, c, base, !ownChecks(input.spec)));
        if (run.judged === 'failed') break;
      }
      return results;
    });
    return { results, changed };
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
      for (const lesson of await this.#s.lessons.learnFromAnswer(answer, input.spec.id)) input.observer.notice(`lesson kept: ${lesson}`, 'info');
    } catch (error) {
      input.observer.notice(`lessons: ${error instanceof Error ? error.message : String(error)}`, 'warn');
    }
  }

  #check(input: AttemptInput): string | null {
    return checkCommandLine(checksOf(input.spec, input.config));
  }

  /** The checks on the commit the task started from: cached, or run now in a scratch checkout of it. */
  async #baseline(input: AttemptInput, checks: CheckSpec[], commit: string): Promise<BaselineResult[]> {
    const results = await baselinesFor(checks, commit, `base-${input.spec.id}`, {
      store: this.#s.baselines,
      scratch: this.#s.scratch,
      prepare: (dir) => this.#prepareScratch(input, dir),
      // Quiet: base's output is kept in the result, not streamed as the task's own.
      run: (dir, command) => this.#command({ ...input, worktree: dir, observer: { ...input.observer, output: () => undefined } }, 'setup', command, input.config.checkTimeoutMs, this.#s.sandboxed, true),
    });
    // A task's own check failing on base is the task's starting point; the shared check failing there is news.
    if (ownChecks(input.spec)) return results;
    for (const b of results) {
      const failing = baseFailure(b);
      if (failing !== null) input.observer.notice(`${failing}${b.counts === null ? '' : '; judged by not making it worse'}`, b.counts === null ? 'info' : 'warn');
    }
    return results;
  }

  /**
   * A worktree holding uncommitted work (a conflict replayed onto base, being resolved) stays on the base
   * it was replayed onto: the merge queue brings it up to date once it is verified.
   */
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

  async #prepareScratch(input: AttemptInput, dir: string): Promise<void> {
    await this.#s.workspace.prepare(input.repoRoot, dir);
  }

  /**
   * Ends the attempt. `detail` is in loopfleet's words (untrusted parts already framed), `quoted` is framed
   * here; `kind` is the evidence's outcome line when `reason` quotes untrusted text.
   */
  #fail(
    result: AttemptResult,
    outcome: AttemptOutcome,
    reason: string,
    detail: string,
    quoted: ReadonlyArray<{ label: string; text: string }> = [],
    kind = reason,
  ): AttemptResult {
    result.outcome = outcome;
    result.reason = reason;
    result.evidence = failureEvidence(kind, detail, quoted);
    return result;
  }

  /**
   * A new worktree gets its ignored files and dependencies; an existing one (a later attempt, a resume) is
   * used as it is, and only the list of copied files is worked out again so they stay out of commits.
   */
  async #ensureWorktree(input: AttemptInput): Promise<SetupWorktree & { fresh: boolean; copied: string[] }> {
    if (await this.#s.workspace.exists(input.worktree)) {
      return { fresh: false, copied: await this.#s.workspace.included(input.repoRoot), depsCloned: false, untrusted: rebuiltFrom(input.branch, true) };
    }
    const { git } = this.#s;
    // A branch left by an earlier attempt (the worktree deleted, a retry) is rebuilt as it is: whatever it
    // holds may be an agent's. A new branch starts on base, trusted unless an agent's work landed there.
    const tip = (await git.branchExists(input.branch)) ? await git.revParse(input.branch) : null;
    const agentCommits = tip !== null && tip !== (await git.revParse(input.base));
    await git.addWorktree(input.worktree, input.branch, input.base);
    const head = tip ?? (await git.revParse(input.branch));
    if (head === null) throw new Error(`branch ${input.branch} does not resolve to a commit after its worktree was added`);
    const landed = tip === null ? await this.#trust.landedIn(head) : null;
    const untrusted = tip !== null ? rebuiltFrom(input.branch, agentCommits) : landed !== null ? landedOn(input.base, landed) : null;
    const prepared = await this.#s.workspace.prepare(input.repoRoot, input.worktree);
    if (prepared.deps.method !== 'none') {
      input.observer.output('setup', `dependencies cloned into the worktree (${prepared.deps.method}, ${prepared.deps.ms} ms)\n`);
    }
    return { fresh: true, copied: prepared.copied, depsCloned: prepared.deps.method !== 'none', untrusted };
  }

  /**
   * `pinned`: folders made mount points of their own in the sandbox (see check-integrity.ts); `network`: hosts
   * the sandboxed command may reach through the egress proxy (setup only), none by default.
   */
  async #command(
    input: AttemptInput,
    phase: Phase,
    command: string,
    limitMs: number,
    sandbox: boolean,
    countTests = false,
    options: { pinned?: readonly string[]; network?: string[] } = {},
  ): Promise<CheckResult> {
    const pinned = options.pinned ?? [];
    const timeoutMs = Math.max(1, Math.min(limitMs, input.budget.remainingMs(), MAX_TIMER_MS));
    const run = await this.#s.runner.run(command, {
      cwd: input.worktree,
      env: input.env,
      timeoutMs,
      signal: input.signal,
      sandbox: sandbox
        ? { writable: [input.worktree], mounts: pinned.map((dir) => ({ src: dir, dest: dir, readOnly: false })), ...(options.network === undefined ? {} : { network: options.network }) }
        : null,
      onOutput: (chunk) => input.observer.output(phase, chunk),
      maxOutputBytes: 64 * 1024,
    });
    if (run.aborted) throw input.signal.reason instanceof Error ? input.signal.reason : new Error('aborted');
    return {
      command,
      exitCode: run.exitCode,
      timedOut: run.timedOut,
      outputTail: tail(run.output),
      durationMs: run.durationMs,
      ...(countTests ? { counts: parseTestCounts(run.output) } : {}),
    };
  }

  async #agent(input: AttemptInput, role: Role, prompt: string, outputSchema?: Record<string, unknown>) {
    const def = this.#s.roles[role];
    const model = modelFor(def, input.spec, input.config);
    const client = def.command !== undefined || def.agent !== undefined ? this.#s.cliModel : this.#s.model;
    return client.runAgent(
      {
        role,
        model,
        system: systemPrompt(role, def.prompt),
        prompt,
        workdir: input.worktree,
        access: role === 'implementer' ? 'write' : 'read-only',
        shell: role === 'implementer' && this.#s.shellAllowed,
        env: input.env,
        maxTurns: def.maxTurns,
        maxTokens: def.maxTokens,
        ...(outputSchema === undefined ? {} : { outputSchema }),
        signal: input.signal,
        beforeCall: () => input.budget.beforeCall(),
        ...(def.command === undefined ? {} : { command: def.command }),
        ...(def.agent === undefined ? {} : { agent: { preset: def.agent, ...(def.bin ? { bin: def.bin } : {}), network: input.config.network ?? [] } }),
        timeoutMs: Math.max(1, Math.min(input.budget.remainingMs(), MAX_TIMER_MS)),
      },
      (event) => input.observer.agentEvent(role, model, event),
    );
  }
}
