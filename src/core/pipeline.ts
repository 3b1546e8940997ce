import type { GitPort } from '../ports/git.js';
import type { AgentEvent, ModelClient } from '../ports/model.js';
import type { ProcessRunner } from '../ports/process.js';
import type { Workspace } from '../ports/workspace.js';
import type { RoleDefinition } from './agents.js';
import { guardDiff } from './guard.js';
import { BACKLOG_NAME } from '../domain/layout.js';
import { parseVerdict } from './verdict.js';
import {
  VERDICT_SCHEMA,
  explorerPrompt,
  failureEvidence,
  implementerPrompt,
  reviewerPrompt,
  systemPrompt,
} from './prompts.js';
import type { AttemptOutcome, CheckResult, FleetConfig, Phase, Role, TaskSpec, Verdict } from '../domain/types.js';

const OUTPUT_TAIL = 8_000;
/** Node timers (and execa) take at most 2^31-1 ms; "no time gate" must not overflow into "fire now". */
const MAX_TIMEOUT_MS = 2 ** 31 - 1;

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
}

export interface AttemptInput {
  spec: TaskSpec;
  config: FleetConfig;
  base: string;
  repoRoot: string;
  worktree: string;
  branch: string;
  attempt: number;
  /** skip explore and implement: verify the branch as it is (after a rebase) */
  verifyOnly: boolean;
  /** the plan of the attempt that produced the branch, for the reviewer of a verify-only attempt */
  previousPlan: string | null;
  env: Record<string, string>;
  evidence: string | null;
  signal: AbortSignal;
  onPhase: (phase: Phase) => void;
  onAgentEvent: (role: Role, model: string, event: AgentEvent) => void;
  onOutput: (phase: Phase, chunk: string) => void;
  /** throws (GateError) when a gate has tripped; called before each model call */
  beforeCall: () => void;
  /** remaining wall clock of the task, bounds every agent and command */
  remainingMs: () => number;
}

export interface AttemptResult {
  outcome: AttemptOutcome;
  reason: string | null;
  /** what the next attempt is told */
  evidence: string | null;
  plan: string | null;
  setup: CheckResult | null;
  check: CheckResult | null;
  guard: string[];
  verdict: Verdict | null;
  commit: string | null;
  diffStat: string | null;
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

  constructor(services: PipelineServices) {
    this.#s = services;
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
    };
    const { spec, config } = input;

    input.onPhase('setup');
    const prepared = await this.#ensureWorktree(input);
    if (prepared.fresh) {
      const setupCommand = spec.setup ?? config.setup;
      if (setupCommand != null && prepared.depsCloned) {
        input.onOutput('setup', `setup \`${setupCommand}\` skipped: the dependencies were cloned from the checkout (identical lockfile)\n`);
      } else if (setupCommand != null) {
        // Setup is the person's own command, not agent-written code: it runs outside the sandbox.
        result.setup = await this.#command(input, 'setup', setupCommand, config.setupTimeoutMs, false);
        if (result.setup.exitCode !== 0) {
          return this.#fail(result, 'setup-failed', `setup \`${setupCommand}\` ${describeExit(result.setup)}`, result.setup.outputTail);
        }
      }
    }

    if (input.verifyOnly) {
      result.plan = input.previousPlan ?? '(verifying a rebased branch)';
    } else {
      input.onPhase('explore');
      const plan = (await this.#agent(input, 'explorer', explorerPrompt(spec, input.attempt, this.#check(input), input.evidence))).text;
      result.plan = plan.trim() === '' ? '(the explorer gave no plan)' : plan.trim();

      input.onPhase('implement');
      await this.#agent(input, 'implementer', implementerPrompt(spec, input.attempt, this.#check(input), result.plan, input.evidence));
    }

    input.onPhase('verify');
    result.commit = await this.#s.git.commitAll(
      input.worktree,
      `${spec.id}: ${spec.title}\n\nAttempt ${input.attempt}, committed by loopfleet.`,
      prepared.copied,
    );
    const { numstat, patch: diff, stat } = await this.#s.git.diffSummary(input.worktree, input.base);
    if (numstat.length === 0) {
      return this.#fail(result, 'check-failed', 'the implementer changed nothing', 'No file differs from the base branch.');
    }
    result.diffStat = stat;

    result.guard = guardDiff({
      numstat,
      diff,
      maxFiles: config.maxFiles,
      maxLines: config.maxLines,
      // The backlog is the person's: no task may edit it, whatever `protect:` says.
      protect: [...config.protect, `/${BACKLOG_NAME}`],
      allowed: spec.files,
    });
    if (result.guard.length > 0) {
      // A refused change must not stay in the branch's history (it may hold a secret): back to the attempt's start.
      if (result.commit !== null) await this.#s.git.resetHard(input.worktree, `${result.commit}~1`);
      return this.#fail(result, 'guard-failed', result.guard.join('; '), result.guard.join('\n'));
    }

    const check = this.#check(input);
    if (check !== null) {
      result.check = await this.#command(input, 'verify', check, config.checkTimeoutMs, this.#s.sandboxed);
      if (result.check.exitCode !== 0) {
        return this.#fail(result, 'check-failed', `check \`${check}\` ${describeExit(result.check)}`, result.check.outputTail);
      }
    }

    const review = spec.review ?? config.review;
    if (review || check === null) {
      const answer = await this.#agent(
        input,
        'verifier',
        reviewerPrompt(spec, input.attempt, result.plan, diff, result.check),
        VERDICT_SCHEMA,
      );
      result.verdict = parseVerdict(answer.text);
      if (!result.verdict.pass) {
        const reasons = result.verdict.reasons.join('; ') || 'no reason given';
        return this.#fail(result, 'vetoed', `reviewer veto: ${reasons}`, result.verdict.reasons.map((r) => `- ${r}`).join('\n'));
      }
    }
    result.outcome = 'verified';
    return result;
  }

  #check(input: AttemptInput): string | null {
    return input.spec.check ?? input.config.check;
  }

  #fail(result: AttemptResult, outcome: AttemptOutcome, reason: string, detail: string): AttemptResult {
    result.outcome = outcome;
    result.reason = reason;
    result.evidence = failureEvidence(reason, detail);
    return result;
  }

  /**
   * A new worktree gets its ignored files and dependencies; an existing one (a later attempt, a resume) is
   * used as it is, and only the list of copied files is worked out again so they stay out of commits.
   */
  async #ensureWorktree(input: AttemptInput): Promise<{ fresh: boolean; copied: string[]; depsCloned: boolean }> {
    if (await this.#s.workspace.exists(input.worktree)) {
      return { fresh: false, copied: await this.#s.workspace.included(input.repoRoot), depsCloned: false };
    }
    await this.#s.git.addWorktree(input.worktree, input.branch, input.base);
    const prepared = await this.#s.workspace.prepare(input.repoRoot, input.worktree);
    if (prepared.deps.method !== 'none') {
      input.onOutput('setup', `dependencies cloned into the worktree (${prepared.deps.method}, ${prepared.deps.ms} ms)\n`);
    }
    return { fresh: true, copied: prepared.copied, depsCloned: prepared.deps.method !== 'none' };
  }

  async #command(input: AttemptInput, phase: Phase, command: string, limitMs: number, sandbox: boolean): Promise<CheckResult> {
    const timeoutMs = Math.max(1, Math.min(limitMs, input.remainingMs(), MAX_TIMEOUT_MS));
    const run = await this.#s.runner.run(command, {
      cwd: input.worktree,
      env: input.env,
      timeoutMs,
      signal: input.signal,
      sandbox: sandbox ? { writable: [input.worktree] } : null,
      onOutput: (chunk) => input.onOutput(phase, chunk),
      maxOutputBytes: 64 * 1024,
    });
    if (run.aborted) throw input.signal.reason instanceof Error ? input.signal.reason : new Error('aborted');
    return {
      command,
      exitCode: run.exitCode,
      timedOut: run.timedOut,
      outputTail: tail(run.output),
      durationMs: run.durationMs,
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
        beforeCall: input.beforeCall,
        ...(def.command === undefined ? {} : { command: def.command }),
        ...(def.agent === undefined ? {} : { agent: { preset: def.agent, ...(def.bin ? { bin: def.bin } : {}), network: input.config.network ?? [] } }),
        timeoutMs: Math.max(1, Math.min(input.remainingMs(), MAX_TIMEOUT_MS)),
      },
      (event) => input.onAgentEvent(role, model, event),
    );
  }
}

function describeExit(r: CheckResult): string {
  if (r.timedOut) return `timed out after ${Math.round(r.durationMs / 1000)}s`;
  return r.exitCode === null ? 'was killed' : `exited ${r.exitCode}`;
}
