import Anthropic, { type Middleware } from '@anthropic-ai/sdk';
import type { Logger } from '@anthropic-ai/sdk/client';
import type { BetaMessage, BetaRawMessageStreamEvent } from '@anthropic-ai/sdk/resources/beta';
import type { AgentEvent, AgentRequest, AgentResult, ModelClient } from '../../ports/model.js';
import type { ProcessRunner } from '../../ports/process.js';
import { abortError } from './abort-error.js';
import { toModelError } from './anthropic-errors.js';
import { agentTools, truncate } from './anthropic-tools.js';
import { UsageMeter } from './anthropic-usage.js';
import { MAX_TIMER_MS } from '../../domain/layout.js';
import { formatLimitDuration } from '../../core/text/format-units.js';

/**
 * The Messages API as a ModelClient, on @anthropic-ai/sdk's beta tool runner.
 *
 * - History is kept client-side (`thread: false`): Anthropic-compatible servers have no message threads.
 * - Prompt caching: the system block and the last tool definition are breakpoints, and the top-level
 *   `cache_control` moves a breakpoint to the end of the growing conversation on every turn.
 * - No sampling parameters are ever sent (API 2026-10-21 rejects them); verdicts come as structured output.
 * - `beforeCall` runs before every HTTP request (first, later turns and SDK retries), as client middleware.
 * - Usage is passed on as deltas the moment a stream reports it, so an aborted stream is still counted.
 */

export interface AnthropicModelClientOptions {
  apiKey?: string | null;
  authToken?: string | null;
  /** root URL without /v1 (ANTHROPIC_BASE_URL) */
  baseURL?: string | null;
  /** SDK retries of 408/409/429/5xx and connection errors; default 2 */
  maxRetries?: number;
  processRunner: ProcessRunner;
  sandboxAvailable: boolean;
  fetch?: typeof globalThis.fetch;
  /** the SDK's timeout: it covers only the wait for response headers (the signal covers the stream) */
  headerTimeoutMs?: number;
  /**
   * Where the SDK's own warnings go (e.g. a deprecated model, retries at `info`); default: the console.
   * A TUI passes one that turns them into fleet log events instead of writing over the screen.
   */
  logger?: Logger;
}

const DEADLINE_GRACE_MS = 1_000;
/** the longest delay a Node timer can hold */

/** Sent when a base URL is given without a key: local servers ignore it, and the SDK then never searches for credentials. */
const KEYLESS_PLACEHOLDER = 'no-key';

export class AnthropicModelClient implements ModelClient {
  readonly #client: Anthropic;
  readonly #options: AnthropicModelClientOptions;
  /** credentials to scrub from every error message */
  readonly #secrets: string[];

  constructor(options: AnthropicModelClientOptions) {
    this.#options = options;
    const apiKey = options.apiKey || null;
    const authToken = options.authToken || null;
    const baseURL = options.baseURL || undefined;
    if (apiKey === null && authToken === null && baseURL === undefined) {
      throw new Error(
        'the Messages API needs ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN (or ANTHROPIC_BASE_URL for a local server)',
      );
    }
    this.#secrets = [apiKey, authToken].filter((s): s is string => s !== null);
    // Exactly one credential is passed explicitly: without one, SDK 1.x would look through a profile chain.
    const credential =
      apiKey !== null ? { apiKey } : authToken !== null ? { authToken } : { apiKey: KEYLESS_PLACEHOLDER };
    this.#client = new Anthropic({
      ...credential,
      baseURL,
      maxRetries: options.maxRetries ?? 2,
      ...(options.fetch ? { fetch: options.fetch } : {}),
      ...(options.headerTimeoutMs ? { timeout: options.headerTimeoutMs } : {}),
      ...(options.logger ? { logger: options.logger } : {}),
    });
  }

  async runAgent(request: AgentRequest, onEvent: (event: AgentEvent) => void): Promise<AgentResult> {
    if (request.command !== undefined) {
      throw new Error(`the ${request.role} role runs an external command; it needs the command-line agent client`);
    }
    if (request.signal.aborted) throw abortError(request.signal);

    // A failure of ours (beforeCall, or the caller's event handler) stops the run through this controller,
    // and is what gets thrown — not the abort it causes inside the SDK.
    const stop = new AbortController();
    let failure: { error: unknown } | null = null;
    const fail = (error: unknown) => {
      failure ??= { error };
      stop.abort(error);
    };
    const emit = (event: AgentEvent) => {
      if (failure !== null) return;
      try {
        onEvent(event);
      } catch (error) {
        fail(error);
      }
    };
    const beforeEachRequest: Middleware = async (req, next) => {
      try {
        request.beforeCall();
      } catch (error) {
        fail(error);
        throw error;
      }
      return next(req);
    };
    // A backstop for request.timeoutMs; the grace lets the caller's own time gate, if it has one, speak first.
    // A limit beyond what a timer can hold (e.g. "no time gate") means no deadline: Node would fire it at once.
    const deadlineMs = request.timeoutMs + DEADLINE_GRACE_MS;
    const deadline = Number.isFinite(deadlineMs) && deadlineMs <= MAX_TIMER_MS ? AbortSignal.timeout(deadlineMs) : null;
    const signal = AbortSignal.any([request.signal, stop.signal, ...(deadline ? [deadline] : [])]);
    const client = this.#client.withOptions({ middleware: [beforeEachRequest] });

    const runner = client.beta.messages.toolRunner(
      {
        model: request.model,
        max_tokens: request.maxTokens,
        system: [{ type: 'text', text: request.system, cache_control: { type: 'ephemeral' } }],
        messages: [{ role: 'user', content: request.prompt }],
        tools: agentTools(request, this.#options, emit),
        cache_control: { type: 'ephemeral' },
        ...(request.outputSchema
          ? { output_config: { format: { type: 'json_schema', schema: request.outputSchema } } }
          : {}),
        thread: false,
        stream: true,
        max_iterations: Math.max(1, request.maxTurns),
      },
      { signal },
    );

    let turns = 0;
    let last: BetaMessage | null = null;
    try {
      for await (const stream of runner) {
        turns += 1;
        const meter = new UsageMeter();
        let model = request.model;
        stream.on('streamEvent', (event: BetaRawMessageStreamEvent) => {
          if (event.type === 'message_start') {
            model = event.message.model || request.model;
            const delta = meter.report(event.message.usage);
            if (delta) emit({ type: 'usage', usage: delta, model });
          } else if (event.type === 'message_delta') {
            const delta = meter.report(event.usage);
            if (delta) emit({ type: 'usage', usage: delta, model });
          }
        });
        stream.on('text', (text: string) => emit({ type: 'text', text }));
        stream.on('contentBlock', (block) => {
          if (block.type === 'tool_use')
            emit({ type: 'tool', name: block.name, input: truncate(JSON.stringify(block.input)) });
        });
        last = await stream.finalMessage();
        if (failure !== null) break;
      }
    } catch (error) {
      if (failure === null && !request.signal.aborted && deadline?.aborted) {
        throw new Error(`the ${request.role} agent did not finish within ${formatLimitDuration(request.timeoutMs)}`);
      }
      throw this.#errorFor(error, failure, request.signal);
    }
    if (failure !== null) throw (failure as { error: unknown }).error;
    if (last === null) throw new Error('the Messages API returned no message');
    const text = last.content
      .flatMap((block) => (block.type === 'text' ? [block.text] : []))
      .join('\n')
      .trim();
    return { text, turns, stopReason: last.stop_reason ?? 'unknown' };
  }

  #errorFor(error: unknown, failure: { error: unknown } | null, signal: AbortSignal): unknown {
    if (failure !== null) return failure.error;
    if (signal.aborted) return abortError(signal);
    return toModelError(error, this.#secrets);
  }
}
