/**
 * Running things for one attempt: a shell command (setup, a check) in the worktree, sandboxed or not, and
 * an agent of a role. Every run is bounded by the attempt's remaining time and its signal; an aborted run
 * throws the signal's reason, so the attempt ends as the fleet asked.
 */
import type { AttemptOutcome, CheckResult, Phase, Role, TaskSpec, FleetConfig } from '../../domain/types.js';
import { MAX_TIMER_MS } from '../../domain/layout.js';
import type { RoleDefinition } from '../roles/definitions.js';
import type { AttemptInput, AttemptResult, PipelineServices } from './attempt-io.js';
import { failureEvidence, systemPrompt } from '../roles/prompts.js';
import { parseTestCounts } from '../verify/test-counts.js';

const OUTPUT_TAIL = 8_000;

export interface CommandOptions {
  /** folders made mount points of their own in the sandbox (see {@link watchTracked}) */
  pinned?: readonly string[];
  /** hosts the sandboxed command may reach through the egress proxy (setup only), none by default */
  network?: string[];
}

function modelFor(def: RoleDefinition, spec: TaskSpec, config: FleetConfig): string {
  return def.model ?? spec.model ?? config.model;
}

function tail(text: string): string {
  return text.length > OUTPUT_TAIL ? text.slice(-OUTPUT_TAIL) : text;
}

export class AttemptCommands {
  readonly #s: PipelineServices;

  constructor(services: PipelineServices) {
    this.#s = services;
  }

  async command(
    input: AttemptInput,
    phase: Phase,
    command: string,
    limitMs: number,
    sandbox: boolean,
    countTests = false,
    options: CommandOptions = {},
  ): Promise<CheckResult> {
    const pinned = options.pinned ?? [];
    const timeoutMs = Math.max(1, Math.min(limitMs, input.budget.remainingMs(), MAX_TIMER_MS));
    const run = await this.#s.runner.run(command, {
      cwd: input.worktree,
      env: input.env,
      timeoutMs,
      signal: input.signal,
      sandbox: sandbox
        ? {
            writable: [input.worktree],
            mounts: pinned.map((dir) => ({ src: dir, dest: dir, readOnly: false })),
            ...(options.network === undefined ? {} : { network: options.network }),
          }
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

  async agent(input: AttemptInput, role: Role, prompt: string, outputSchema?: Record<string, unknown>) {
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
        ...(def.agent === undefined
          ? {}
          : {
              agent: { preset: def.agent, ...(def.bin ? { bin: def.bin } : {}), network: input.config.network ?? [] },
            }),
        timeoutMs: Math.max(1, Math.min(input.budget.remainingMs(), MAX_TIMER_MS)),
      },
      (event) => input.observer.agentEvent(role, model, event),
    );
  }

  /** A scratch checkout (a baseline's, a proof's) gets the repository's ignored files and dependencies. */
  async prepareScratch(input: AttemptInput, dir: string): Promise<void> {
    await this.#s.workspace.prepare(input.repoRoot, dir);
  }
}

/**
 * Ends the attempt. `detail` is in loopfleet's words (untrusted parts already framed), `quoted` is framed
 * here; `kind` is the evidence's outcome line when `reason` quotes untrusted text.
 */
export function failAttempt(
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
