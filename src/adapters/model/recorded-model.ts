/**
 * Record and replay at the model port. {@link RecordingModelClient} wraps any {@link ModelClient} (the
 * Messages API, a CLI agent) and keeps each agent run as one exchange file ({@link exchangeName}): the
 * model calls it made, everything it streamed (text, tool calls and results, usage per response), its
 * answer or its error, and — for a writing role — the change it made to the worktree.
 * {@link ReplayModelClient} plays those files back with no model: the same events in the same order, the
 * same change applied to the worktree, the same answer; the gates see the recorded usage, so a replay
 * stops where the run stopped and counts the same tokens and dollars (none of them spent).
 *
 * An exchange is keyed by task, attempt, role and the role's run number within the attempt, so concurrent
 * tasks do not disturb each other's order. A replayed request must ask for the same thing as the recorded
 * one: the same model, access and task part of the prompt ({@link taskPart}); otherwise the replay fails
 * naming the task, attempt, role and run. The rest of the prompt (loopfleet's own framing, the check line,
 * plan, evidence, diff) may differ: that is what a replay re-evaluates.
 */
import { AgentSetupError, GateError, RateLimitError } from '../../domain/errors.js';
import type { GateName } from '../../domain/types.js';
import type { AgentEvent, AgentRequest, AgentResult, ModelClient } from '../../ports/model.js';
import { applyPatch, watchChanges } from '../git/worktree-patch.js';
import {
  describeKey,
  EXCHANGE_VERSION,
  type Exchange,
  type ExchangeFailure,
  type ExchangeKey,
  type ExchangeStep,
  exchangeName,
  readExchange,
  writeRecord,
} from './exchange-file.js';

/** The task and attempt a request belongs to (read from its prompt's markers by the caller); null: none. */
export type IdentifyRequest = (request: AgentRequest) => { task: string; attempt: number } | null;

/**
 * The part of a prompt that the backlog decides: the task header every role's prompt starts with (markers,
 * title, description, files), up to loopfleet's own first line after it (the check line, or a `## `
 * section); the worktree's path is made neutral.
 */
export function taskPart(request: AgentRequest): string {
  const cut = request.prompt.search(/^(## |The task is done when |There is no check command)/m);
  const head = cut < 0 ? request.prompt : request.prompt.slice(0, cut);
  return head.split(request.workdir).join('<worktree>').trimEnd();
}

/**
 * Gives each (task, attempt, role) its next run number. One is shared by the clients of a run (the API's
 * and the CLI agents'), so a role's runs are numbered in the order they started whoever played them.
 */
export class Sequencer {
  readonly #next = new Map<string, number>();

  key(identify: IdentifyRequest, request: AgentRequest): ExchangeKey {
    const id = identify(request) ?? { task: 'untasked', attempt: 1 };
    const slot = `${id.task}\0${id.attempt}\0${request.role}`;
    const seq = (this.#next.get(slot) ?? 0) + 1;
    this.#next.set(slot, seq);
    return { task: id.task, attempt: id.attempt, role: request.role, seq };
  }
}

function failureOf(error: unknown): ExchangeFailure {
  const e = error instanceof Error ? error : new Error(String(error));
  const f: ExchangeFailure = { name: e.name, message: e.message };
  if (e instanceof GateError) Object.assign(f, { gate: e.gate, scope: e.scope });
  if (e instanceof RateLimitError) Object.assign(f, { resetAt: e.resetAt, kind: e.kind });
  if (e instanceof AgentSetupError) f.reason = e.reason;
  return f;
}

function errorOf(f: ExchangeFailure): Error {
  if (f.name === 'GateError' && f.gate !== undefined && f.scope !== undefined)
    return new GateError(f.gate as GateName, f.scope, f.message);
  if (f.name === 'RateLimitError')
    return new RateLimitError(f.message, f.resetAt ?? null, (f.kind ?? 'rate') as RateLimitError['kind']);
  if (f.name === 'AgentSetupError') return new AgentSetupError(f.message, f.reason as AgentSetupError['reason']);
  const error = new Error(f.message);
  if (f.name === 'AbortError') error.name = 'AbortError';
  return error;
}

export class RecordingModelClient implements ModelClient {
  readonly #inner: ModelClient;
  readonly #dir: string;
  readonly #identify: IdentifyRequest;
  readonly #seq: Sequencer;

  constructor(inner: ModelClient, dir: string, identify: IdentifyRequest, seq = new Sequencer()) {
    this.#inner = inner;
    this.#dir = dir;
    this.#identify = identify;
    this.#seq = seq;
  }

  async runAgent(request: AgentRequest, onEvent: (event: AgentEvent) => void): Promise<AgentResult> {
    const key = this.#seq.key(this.#identify, request);
    const name = exchangeName(key);
    const steps: ExchangeStep[] = [];
    const watch = request.access === 'write' ? await watchChanges(request.workdir) : null;
    const record = async (result: AgentResult | null, failure: ExchangeFailure | null) => {
      const exchange: Exchange = {
        version: EXCHANGE_VERSION,
        key,
        request: { model: request.model, access: request.access, task: taskPart(request) },
        steps,
        result,
        failure,
        patch: watch === null ? '' : await watch.patch(),
      };
      await writeRecord(this.#dir, name, exchange);
    };
    let result: AgentResult;
    try {
      result = await this.#inner.runAgent(
        {
          ...request,
          beforeCall: () => {
            steps.push({ type: 'call' });
            request.beforeCall();
          },
        },
        (event) => {
          steps.push(event);
          onEvent(event);
        },
      );
    } catch (error) {
      await record(null, failureOf(error));
      throw error;
    }
    await record(result, null);
    return result;
  }
}

export class ReplayModelClient implements ModelClient {
  readonly #dir: string;
  readonly #identify: IdentifyRequest;
  readonly #seq: Sequencer;

  constructor(dir: string, identify: IdentifyRequest, seq = new Sequencer()) {
    this.#dir = dir;
    this.#identify = identify;
    this.#seq = seq;
  }

  async runAgent(request: AgentRequest, onEvent: (event: AgentEvent) => void): Promise<AgentResult> {
    const key = this.#seq.key(this.#identify, request);
    const where = describeKey(key);
    const recorded = await readExchange(this.#dir, key);
    if (recorded === null)
      throw new Error(
        `replay: the recording in ${this.#dir} has no ${where} (${exchangeName(key)}): the run differs from the recorded one`,
      );
    const asked = request;
    const then = recorded.request;
    const differs =
      then.model !== asked.model
        ? `model ${then.model} → ${asked.model}`
        : then.access !== asked.access
          ? `access ${then.access} → ${asked.access}`
          : then.task !== taskPart(asked)
            ? 'the task text (title, description or files) changed'
            : null;
    if (differs !== null) throw new Error(`replay: ${where} asks for something else than the recording: ${differs}`);
    if (request.signal.aborted)
      throw request.signal.reason instanceof Error ? request.signal.reason : new Error('aborted');
    for (const s of recorded.steps) {
      if (s.type === 'call') request.beforeCall();
      else
        onEvent(s.type === 'usage' && s.costUsd === undefined ? { type: 'usage', usage: s.usage, model: s.model } : s);
    }
    if (request.access === 'write') {
      try {
        await applyPatch(request.workdir, recorded.patch);
      } catch (error) {
        throw new Error(`replay: ${where}: ${(error as Error).message}`);
      }
    } else if (recorded.patch !== '') {
      throw new Error(`replay: ${where} is read-only but its recording changes the worktree: refused`);
    }
    if (recorded.failure !== null) throw errorOf(recorded.failure);
    if (recorded.result === null) throw new Error(`replay: ${where} has neither an answer nor an error`);
    const r = recorded.result;
    return {
      text: r.text,
      turns: r.turns,
      stopReason: r.stopReason,
      ...(r.reportedCostUsd === undefined ? {} : { reportedCostUsd: r.reportedCostUsd }),
    };
  }
}
