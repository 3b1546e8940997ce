import type { Usage } from '../../domain/types.js';
import type { AgentEvent, AgentRequest, AgentResult, ModelClient } from '../../ports/model.js';
import type { ProcessRunner, RunResult } from '../../ports/process.js';
import { abortError } from './abort-error.js';
import { CliOutputReader, type CliFinal } from './cli-agent-output.js';
import { presetOf } from './agent-presets/index.js';
import { prepareLaunch } from './agent-presets/launch.js';
import { watchReadOnly } from '../git/worktree-snapshot.js';
import { MAX_TIMER_MS } from '../../domain/layout.js';
import { AgentSetupError } from '../../domain/errors.js';
import { invisibleProgram } from '../sandbox/visible.js';
import { formatLimitDuration } from '../../core/text/format-units.js';

/**
 * A role played by an external command-line agent.
 *
 * - `agent:` (a preset: claude-code, codex, gemini, opencode): loopfleet builds the command line, gives the
 *   CLI its own credentials and config folders, and — sandboxed — an egress proxy that reaches its model
 *   endpoint and the `network:` hosts only. Its streamed events (text, tool calls, tool results, usage per
 *   model response) are passed on as they arrive, so gates stop it mid-run; the final report corrects the
 *   totals to what the CLI said it spent. A read-only role whose run changed the worktree fails, and its
 *   change is reset. A final-answer schema (the reviewer's verdict) goes to the CLI's own flag where it has
 *   one; the answer is always checked by the caller ({@link parseVerdict}), whatever the CLI promised.
 * - `command:` (any other CLI): the command runs in the worktree with the system prompt and the prompt on
 *   stdin, confined like the shell tool when a sandbox is available. Its output streams as text; when it ends
 *   in Claude-Code-style JSON (or codex `--json` events), the usage and the cost it reports are passed on.
 */

export interface CliAgentClientOptions {
  processRunner: ProcessRunner;
  sandboxAvailable: boolean;
  /** how much of the output tail is kept (the final JSON must fit); default 4 MiB */
  maxOutputBytes?: number;
  /** loopfleet's own environment, where presets find their credentials and HOME; default process.env */
  hostEnv?: Record<string, string | undefined>;
  /** prices a usage report from the table, for live cost gates; null for an unknown model */
  priceUsd?: (model: string, usage: Usage) => number | null;
  /** the Node that runs the egress forwarder inside the sandbox; default this process's */
  node?: string;
  /** whose enforcer confines sandboxed runs (see ExecaRunnerOptions.platform); default process.platform */
  platform?: NodeJS.Platform;
}

function sub(a: Usage, b: Usage): Usage {
  return {
    input: Math.max(0, a.input - b.input),
    output: Math.max(0, a.output - b.output),
    cacheWrite: Math.max(0, a.cacheWrite - b.cacheWrite),
    cacheRead: Math.max(0, a.cacheRead - b.cacheRead),
  };
}

const TAIL_CHARS = 2_000;
/** the longest delay a Node timer can hold */

function tail(text: string): string {
  const trimmed = text.trimEnd();
  return trimmed.length <= TAIL_CHARS ? trimmed : `…${trimmed.slice(-TAIL_CHARS)}`;
}

export class CliAgentClient implements ModelClient {
  readonly #options: CliAgentClientOptions;

  constructor(options: CliAgentClientOptions) {
    this.#options = options;
  }

  async runAgent(request: AgentRequest, onEvent: (event: AgentEvent) => void): Promise<AgentResult> {
    if (request.agent !== undefined) return this.#runPreset(request, onEvent);
    const command = request.command;
    if (command === undefined || command.trim() === '') {
      throw new Error(`the ${request.role} role has no command to run`);
    }
    if (request.signal.aborted) throw abortError(request.signal);
    if (this.#options.sandboxAvailable) {
      // Inside, a program the sandbox does not mount is only "not found": say which, why and what to do.
      const problem = await invisibleProgram(
        command,
        request.env,
        request.workdir,
        `the ${request.role}'s command \`${command}\``,
      );
      if (problem !== null) throw new AgentSetupError(problem, 'missing-binary');
    }
    request.beforeCall();

    // An error thrown by the caller's handler is kept and rethrown once the command has stopped.
    let handlerError: { error: unknown } | null = null;
    const stop = new AbortController();
    const emit = (event: AgentEvent) => {
      if (handlerError !== null) return;
      try {
        onEvent(event);
      } catch (error) {
        handlerError = { error };
        stop.abort(error);
      }
    };
    const reader = new CliOutputReader(emit);
    const readOnly =
      request.access === 'read-only'
        ? await watchReadOnly(request.workdir, `the ${request.role} is read-only but its command \`${command}\``)
        : null;
    const result = await this.#options.processRunner.run(command, {
      cwd: request.workdir,
      env: request.env,
      // Node timers overflow past 2^31-1 ms and would fire at once: a longer limit is "no limit" in practice.
      timeoutMs: Math.min(request.timeoutMs, MAX_TIMER_MS),
      signal: AbortSignal.any([request.signal, stop.signal]),
      input: `${request.system.trimEnd()}\n\n${request.prompt.trimEnd()}\n`,
      sandbox: this.#options.sandboxAvailable ? { writable: [request.workdir] } : null,
      maxOutputBytes: this.#options.maxOutputBytes ?? 4 * 1024 * 1024,
      // The tail holds the final JSON; the head shows how the run began. The cut between them is said.
      keepHeadBytes: 64 * 1024,
      onOutput: (chunk) => reader.push(chunk),
    });
    const final = reader.end();
    // What it spent is booked whatever else went wrong, and a read-only role's change is put back first.
    if (final.usage !== null || final.costUsd !== null) {
      // The agent's own dollar figure wins over pricing its tokens: it knows its plan and its models.
      emit({
        type: 'usage',
        usage: final.usage ?? { input: 0, output: 0, cacheWrite: 0, cacheRead: 0 },
        model: final.model ?? request.model,
        ...(final.costUsd === null ? {} : { costUsd: final.costUsd }),
      });
    }
    await readOnly?.verify();
    if (handlerError !== null) throw (handlerError as { error: unknown }).error;
    if (result.aborted || request.signal.aborted) throw abortError(request.signal);
    if (result.timedOut) {
      throw new Error(
        `agent command \`${command}\` timed out after ${formatLimitDuration(request.timeoutMs)}; last output:\n${tail(result.output)}`,
      );
    }
    if (result.exitCode !== 0) {
      const how =
        result.exitCode === null ? `was killed by ${result.signal ?? 'a signal'}` : `exited ${result.exitCode}`;
      throw new Error(`agent command \`${command}\` ${how}; last output:\n${tail(result.output)}`);
    }
    if (final.error !== null) throw new Error(`agent command \`${command}\` reported an error: ${final.error}`);
    if (handlerError !== null) throw (handlerError as { error: unknown }).error;
    const agentResult: AgentResult = {
      text: (final.text ?? (reader.structured ? '' : result.output)).trim(),
      turns: 1,
      stopReason: 'end_turn',
    };
    if (final.costUsd !== null) agentResult.reportedCostUsd = final.costUsd;
    return agentResult;
  }

  async #runPreset(request: AgentRequest, onEvent: (event: AgentEvent) => void): Promise<AgentResult> {
    const backend = request.agent!;
    const preset = presetOf(backend.preset);
    if (request.signal.aborted) throw abortError(request.signal);
    request.beforeCall();
    const launch = await prepareLaunch(preset, request, {
      hostEnv: this.#options.hostEnv ?? process.env,
      sandboxed: this.#options.sandboxAvailable,
      node: this.#options.node ?? process.execPath,
      platform: this.#options.platform ?? process.platform,
    });

    let handlerError: { error: unknown } | null = null;
    const stop = new AbortController();
    const fail = (error: unknown) => {
      handlerError ??= { error };
      stop.abort(error);
    };
    const price = this.#options.priceUsd ?? (() => null);
    let liveCost = 0;
    const emit = (event: AgentEvent) => {
      if (handlerError !== null) return;
      try {
        if (event.type === 'usage') {
          // Priced here (unless the CLI priced it) so that the reported total can correct it exactly at the end.
          const cost = event.costUsd ?? price(event.model || request.model, event.usage) ?? 0;
          liveCost += cost;
          onEvent({ ...event, model: event.model || request.model, costUsd: cost });
        } else onEvent(event);
      } catch (error) {
        fail(error);
      }
    };
    // A new model response is a new model call: the gates are checked before it goes further.
    const reader = new CliOutputReader(emit, () => {
      if (handlerError !== null) return;
      try {
        request.beforeCall();
      } catch (error) {
        fail(error);
      }
    });

    const readOnly =
      request.access === 'read-only'
        ? await watchReadOnly(request.workdir, `the ${request.role} is read-only but its ${preset.name} run`)
        : null;
    let result: RunResult;
    try {
      result = await this.#options.processRunner.run(launch.command, {
        cwd: request.workdir,
        env: launch.env,
        timeoutMs: Math.min(request.timeoutMs, MAX_TIMER_MS),
        signal: AbortSignal.any([request.signal, stop.signal]),
        input: launch.input,
        sandbox: this.#options.sandboxAvailable
          ? {
              writable: [request.workdir],
              mounts: launch.mounts,
              ...(launch.env.HOME === undefined ? {} : { home: launch.env.HOME }),
            }
          : null,
        maxOutputBytes: this.#options.maxOutputBytes ?? 4 * 1024 * 1024,
        // The tail holds the final JSON; the head shows how the run began. The cut between them is said.
        keepHeadBytes: 64 * 1024,
        onOutput: (chunk) => reader.push(chunk),
      });
    } finally {
      await launch.close();
    }
    const final = reader.end();
    this.#settle(final, emit, liveCost, request.model);

    await readOnly?.verify();
    if (handlerError !== null) throw (handlerError as { error: unknown }).error;
    if (result.aborted || request.signal.aborted) throw abortError(request.signal);
    const classified = preset.classify({
      exitCode: result.exitCode,
      output: result.output,
      reportedError: final.error,
      denials: final.denials,
      access: request.access,
    });
    if (classified !== null) throw classified;
    const what = `${preset.name} (${launch.bin})`;
    if (result.timedOut)
      throw new Error(
        `${what} timed out after ${formatLimitDuration(request.timeoutMs)}; last output:\n${tail(result.output)}`,
      );
    if (result.exitCode !== 0) {
      const how =
        result.exitCode === null ? `was killed by ${result.signal ?? 'a signal'}` : `exited ${result.exitCode}`;
      throw new Error(`${what} ${how}; last output:\n${tail(result.output)}`);
    }
    if (final.error !== null) throw new Error(`${what} reported an error: ${final.error}`);
    const agentResult: AgentResult = { text: (final.text ?? '').trim(), turns: 1, stopReason: 'end_turn' };
    if (final.costUsd !== null) agentResult.reportedCostUsd = final.costUsd;
    return agentResult;
  }

  /**
   * After the run: what the CLI reported in all, minus what was passed on live, so that the totals are
   * exactly its own figures (tokens and, when it reports one, cost).
   */
  #settle(final: CliFinal, emit: (event: AgentEvent) => void, liveCost: number, fallbackModel: string): void {
    const model = final.model ?? fallbackModel;
    const rest = final.usage === null ? null : sub(final.usage, final.live);
    const restTokens = rest === null ? 0 : rest.input + rest.output + rest.cacheWrite + rest.cacheRead;
    if (final.costUsd !== null) {
      const costRest = final.costUsd - liveCost;
      if (restTokens === 0 && Math.abs(costRest) < 1e-12) return;
      emit({
        type: 'usage',
        usage: rest ?? { input: 0, output: 0, cacheWrite: 0, cacheRead: 0 },
        model,
        costUsd: costRest,
      });
    } else if (rest !== null && restTokens > 0) {
      emit({ type: 'usage', usage: rest, model });
    }
  }
}
