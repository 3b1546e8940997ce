import type { AgentEvent, AgentRequest, AgentResult, ModelClient } from '../ports/model.js';
import type { ProcessRunner } from '../ports/process.js';
import { abortError } from './abort-error.js';
import { CliOutputReader } from './cli-agent-output.js';
import { MAX_TIMER_MS } from '../domain/layout.js';

/**
 * A role played by an external command-line agent (agents/<role>.md `command:`, e.g. `claude -p`): the
 * command runs in the worktree with the system prompt and the prompt on stdin, confined like the shell
 * tool when a sandbox is available. Its output streams as text; when it ends in Claude-Code-style JSON (or
 * codex `--json` events), the usage and the cost it reports are passed on.
 */

export interface CliAgentClientOptions {
  processRunner: ProcessRunner;
  sandboxAvailable: boolean;
  /** how much of the output tail is kept (the final JSON must fit); default 4 MiB */
  maxOutputBytes?: number;
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
    const command = request.command;
    if (command === undefined || command.trim() === '') {
      throw new Error(`the ${request.role} role has no command to run`);
    }
    if (request.signal.aborted) throw abortError(request.signal);
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
    const result = await this.#options.processRunner.run(command, {
      cwd: request.workdir,
      env: request.env,
      // Node timers overflow past 2^31-1 ms and would fire at once: a longer limit is "no limit" in practice.
      timeoutMs: Math.min(request.timeoutMs, MAX_TIMER_MS),
      signal: AbortSignal.any([request.signal, stop.signal]),
      input: `${request.system.trimEnd()}\n\n${request.prompt.trimEnd()}\n`,
      sandbox: this.#options.sandboxAvailable ? { writable: [request.workdir] } : null,
      maxOutputBytes: this.#options.maxOutputBytes ?? 4 * 1024 * 1024,
      onOutput: (chunk) => reader.push(chunk),
    });
    const final = reader.end();
    if (handlerError !== null) throw (handlerError as { error: unknown }).error;
    if (result.aborted || request.signal.aborted) throw abortError(request.signal);
    if (result.timedOut) {
      throw new Error(`agent command \`${command}\` timed out after ${request.timeoutMs} ms; last output:\n${tail(result.output)}`);
    }
    if (result.exitCode !== 0) {
      const how = result.exitCode === null ? `was killed by ${result.signal ?? 'a signal'}` : `exited ${result.exitCode}`;
      throw new Error(`agent command \`${command}\` ${how}; last output:\n${tail(result.output)}`);
    }
    if (final.error !== null) throw new Error(`agent command \`${command}\` reported an error: ${final.error}`);

    if (final.usage !== null || final.costUsd !== null) {
      // The agent's own dollar figure wins over pricing its tokens: it knows its plan and its models.
      emit({
        type: 'usage',
        usage: final.usage ?? { input: 0, output: 0, cacheWrite: 0, cacheRead: 0 },
        model: final.model ?? request.model,
        ...(final.costUsd === null ? {} : { costUsd: final.costUsd }),
      });
    }
    if (handlerError !== null) throw (handlerError as { error: unknown }).error;
    const agentResult: AgentResult = {
      text: (final.text ?? (reader.structured ? '' : result.output)).trim(),
      turns: 1,
      stopReason: 'end_turn',
    };
    if (final.costUsd !== null) agentResult.reportedCostUsd = final.costUsd;
    return agentResult;
  }
}
