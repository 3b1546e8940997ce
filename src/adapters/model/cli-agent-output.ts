import type { Usage } from '../../domain/types.js';
import type { AgentEvent } from '../../ports/model.js';

/**
 * Reads the output of a command-line agent as it arrives, line by line, and understands three shapes:
 *
 * - Claude Code `--output-format json` / `stream-json`: `{"type":"assistant","message":{content}}` lines and a
 *   final `{"type":"result","result","usage":{input_tokens,output_tokens,cache_creation_input_tokens,
 *   cache_read_input_tokens},"total_cost_usd","is_error"}`;
 * - codex `exec --json`: `item.completed` (`agent_message` text, `command_execution`), `turn.completed` with
 *   `usage: {input_tokens, cached_input_tokens, output_tokens}` (input includes the cached part), `turn.failed`;
 * - anything else: plain text, passed on as it is.
 */

export interface CliFinal {
  text: string | null;
  usage: Usage | null;
  costUsd: number | null;
  model: string | null;
  error: string | null;
  /** tools the agent refused to run (Claude Code's `permission_denials`) */
  denials: string[];
  /** usage already passed on live, per model response (a final `usage` includes it) */
  live: Usage;
}

type Json = Record<string, any>;

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0;
}

function parseLine(line: string): Json | null {
  const trimmed = line.trim();
  if (!trimmed.startsWith('{') || !trimmed.endsWith('}')) return null;
  try {
    const value: unknown = JSON.parse(trimmed);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : null;
  } catch {
    // Not JSON after all: the caller passes the line on as text.
    return null;
  }
}

export class CliOutputReader {
  readonly #emit: (event: AgentEvent) => void;
  #partial = '';
  #text: string | null = null;
  #usage: Usage | null = null;
  #cost: number | null = null;
  #model: string | null = null;
  #error: string | null = null;
  #structured = false;
  #denials: string[] = [];
  #live: Usage = { input: 0, output: 0, cacheWrite: 0, cacheRead: 0 };
  /** per Claude Code message id: the usage passed on for it so far (stream-json repeats it per block) */
  readonly #messages = new Map<string, Usage>();
  readonly #toolNames = new Map<string, string>();
  readonly #onMessage: (() => void) | undefined;

  /** `onMessage` is called when a new model response starts (a model call was made) */
  constructor(emit: (event: AgentEvent) => void, onMessage?: () => void) {
    this.#emit = emit;
    this.#onMessage = onMessage;
  }

  push(chunk: string): void {
    const lines = (this.#partial + chunk).split('\n');
    this.#partial = lines.pop() ?? '';
    for (const line of lines) this.#line(line);
  }

  /** Flushes a last line without a newline and returns what the output said about the run. */
  end(): CliFinal {
    if (this.#partial !== '') this.#line(this.#partial);
    this.#partial = '';
    return {
      text: this.#text,
      usage: this.#usage,
      costUsd: this.#cost,
      model: this.#model,
      error: this.#error,
      denials: this.#denials,
      live: { ...this.#live },
    };
  }

  /** Whether any line was a known JSON event (otherwise the output is plain text). */
  get structured(): boolean {
    return this.#structured;
  }

  #line(line: string): void {
    const json = parseLine(line);
    if (json === null || !this.#known(json)) {
      if (line !== '') this.#emit({ type: 'text', text: `${line}\n` });
      return;
    }
    this.#structured = true;
  }

  /** Handles a known event; false for JSON this reader does not recognise. */
  #known(json: Json): boolean {
    switch (json.type) {
      case 'result':
        if (json.stats !== undefined && json.subtype === undefined) this.#geminiResult(json);
        else this.#claudeResult(json);
        return true;
      case 'init':
        if (typeof json.model === 'string') this.#model = json.model;
        return true;
      case 'message':
        if (json.role === 'assistant' && typeof json.content === 'string') {
          this.#text = json.delta === true ? (this.#text ?? '') + json.content : json.content;
          this.#emit({ type: 'text', text: json.content });
        }
        return true;
      case 'tool_result':
        this.#emit({
          type: 'tool-result',
          name: this.#toolNames.get(String(json.tool_id)) ?? '',
          output: String(json.output ?? json.error?.message ?? ''),
          isError: json.status === 'error',
        });
        return true;
      case 'assistant':
        if (typeof json.message?.model === 'string') this.#model = json.message.model;
        this.#claudeMessageUsage(json.message as Json | undefined);
        for (const block of (json.message?.content as Json[] | undefined) ?? []) {
          if (block.type === 'text' && typeof block.text === 'string') this.#emit({ type: 'text', text: block.text });
          if (block.type === 'tool_use') {
            this.#toolNames.set(String(block.id), String(block.name));
            this.#emit({ type: 'tool', name: String(block.name), input: JSON.stringify(block.input ?? {}) });
          }
        }
        return true;
      case 'user':
        for (const block of (json.message?.content as Json[] | undefined) ?? []) {
          if (block.type !== 'tool_result') continue;
          const content =
            typeof block.content === 'string'
              ? block.content
              : Array.isArray(block.content)
                ? (block.content as Json[]).map((c) => String(c.text ?? '')).join('\n')
                : '';
          this.#emit({
            type: 'tool-result',
            name: this.#toolNames.get(String(block.tool_use_id)) ?? '',
            output: content,
            isError: block.is_error === true,
          });
        }
        return true;
      case 'system':
        if (json.subtype === 'init' && typeof json.model === 'string') this.#model = json.model;
        return true;
      case 'thread.started':
      case 'turn.started':
      case 'item.started':
      case 'item.updated':
        return true;
      case 'step_start':
        return true;
      case 'text':
        if (typeof json.part?.text !== 'string') return false;
        this.#text = json.part.text;
        this.#emit({ type: 'text', text: json.part.text });
        return true;
      case 'tool_use':
        if (typeof json.tool_name === 'string') {
          // Gemini CLI: the call now, its result in a tool_result event
          this.#toolNames.set(String(json.tool_id), json.tool_name);
          this.#emit({ type: 'tool', name: json.tool_name, input: JSON.stringify(json.parameters ?? {}) });
        } else this.#opencodeTool(json.part as Json | undefined);
        return true;
      case 'step_finish':
        this.#opencodeStep(json.part as Json | undefined);
        return true;
      case 'item.completed':
        this.#codexItem(json.item as Json | undefined);
        return true;
      case 'turn.completed':
        this.#codexUsage(json.usage as Json | undefined);
        return true;
      case 'turn.failed':
        this.#error = String(json.error?.message ?? json.message ?? 'the agent reported an error');
        return true;
      case 'error':
        // codex streams "Reconnecting... n/5" as error events and carries on: only turn.failed ends a turn
        if (typeof json.message === 'string' && /^Reconnecting\b/.test(json.message)) return true;
        this.#error = String(
          json.error?.data?.message ??
            json.error?.message ??
            json.message ??
            json.error?.name ??
            'the agent reported an error',
        );
        return true;
      default:
        return false;
    }
  }

  /**
   * Claude Code's stream-json repeats a response's usage with each of its content blocks: the first sight
   * of a message id passes its input side on, later sights only what grew (output tokens).
   */
  #claudeMessageUsage(message: Json | undefined): void {
    const u = message?.usage as Json | undefined;
    if (message === undefined || u === undefined || typeof message.id !== 'string') return;
    const now: Usage = {
      input: count(u.input_tokens),
      output: count(u.output_tokens),
      cacheWrite: count(u.cache_creation_input_tokens),
      cacheRead: count(u.cache_read_input_tokens),
    };
    const seen = this.#messages.get(message.id);
    if (seen === undefined) this.#onMessage?.();
    const before = seen ?? { input: 0, output: 0, cacheWrite: 0, cacheRead: 0 };
    const delta: Usage = {
      input: Math.max(0, now.input - before.input),
      output: Math.max(0, now.output - before.output),
      cacheWrite: Math.max(0, now.cacheWrite - before.cacheWrite),
      cacheRead: Math.max(0, now.cacheRead - before.cacheRead),
    };
    this.#messages.set(message.id, {
      input: Math.max(now.input, before.input),
      output: Math.max(now.output, before.output),
      cacheWrite: Math.max(now.cacheWrite, before.cacheWrite),
      cacheRead: Math.max(now.cacheRead, before.cacheRead),
    });
    if (delta.input + delta.output + delta.cacheWrite + delta.cacheRead === 0) return;
    this.#live = {
      input: this.#live.input + delta.input,
      output: this.#live.output + delta.output,
      cacheWrite: this.#live.cacheWrite + delta.cacheWrite,
      cacheRead: this.#live.cacheRead + delta.cacheRead,
    };
    this.#emit({
      type: 'usage',
      usage: delta,
      model: typeof message.model === 'string' ? message.model : (this.#model ?? ''),
    });
  }

  #claudeResult(json: Json): void {
    for (const d of (json.permission_denials as Json[] | undefined) ?? [])
      this.#denials.push(String(d.tool_name ?? d.toolName ?? 'a tool'));
    if (typeof json.result === 'string') this.#text = json.result;
    // With --json-schema: what the StructuredOutput tool took, checked by Claude Code against the schema.
    if (json.structured_output !== undefined && json.structured_output !== null)
      this.#text = JSON.stringify(json.structured_output);
    const u = json.usage as Json | undefined;
    if (u) {
      this.#usage = {
        input: count(u.input_tokens),
        output: count(u.output_tokens),
        cacheWrite: count(u.cache_creation_input_tokens),
        cacheRead: count(u.cache_read_input_tokens),
      };
    }
    if (typeof json.total_cost_usd === 'number') this.#cost = json.total_cost_usd;
    // The model that did the work: the one that cost the most (a side request may use a small model).
    const byCost = Object.entries((json.modelUsage as Record<string, Json> | undefined) ?? {}).sort(
      (a, b) => count(b[1].costUSD) - count(a[1].costUSD) || count(b[1].outputTokens) - count(a[1].outputTokens),
    );
    if (byCost.length > 0) this.#model = byCost[0]![0];
    if (json.is_error === true)
      this.#error = typeof json.result === 'string' ? json.result : String(json.subtype ?? 'error');
  }

  /** Gemini CLI's final `result`: totals over the run (`input_tokens` includes the cached part). */
  #geminiResult(json: Json): void {
    const st = json.stats as Json | undefined;
    if (st !== undefined) {
      const cached = count(st.cached);
      this.#usage = {
        input: Math.max(0, count(st.input_tokens) - cached),
        output: count(st.output_tokens),
        cacheWrite: 0,
        cacheRead: cached,
      };
      const models = Object.entries((st.models as Record<string, Json> | undefined) ?? {}).sort(
        (a, b) => count(b[1].output_tokens) - count(a[1].output_tokens),
      );
      if (models.length > 0) this.#model = models[0]![0];
    }
    if (json.status === 'error')
      this.#error = String(json.error?.message ?? json.error?.type ?? 'the agent reported an error');
  }

  /** opencode `run --format json`: a finished tool call carries its input and output together. */
  #opencodeTool(part: Json | undefined): void {
    if (part === undefined) return;
    const state = (part.state as Json | undefined) ?? {};
    const name = String(part.tool ?? 'tool');
    this.#emit({ type: 'tool', name, input: JSON.stringify(state.input ?? {}) });
    if (state.status === 'completed' || state.status === 'error') {
      this.#emit({
        type: 'tool-result',
        name,
        output: String(state.output ?? state.error ?? ''),
        isError: state.status === 'error',
      });
    }
  }

  /** opencode's `step_finish`: one model response, with its tokens and the cost opencode priced it at. */
  #opencodeStep(part: Json | undefined): void {
    const t = part?.tokens as Json | undefined;
    if (part === undefined || t === undefined) return;
    const cache = (t.cache as Json | undefined) ?? {};
    const step: Usage = {
      input: count(t.input),
      output: count(t.output) + count(t.reasoning),
      cacheWrite: count(cache.write),
      cacheRead: count(cache.read),
    };
    const cost = typeof part.cost === 'number' && Number.isFinite(part.cost) ? part.cost : null;
    this.#onMessage?.();
    const sum = this.#usage ?? { input: 0, output: 0, cacheWrite: 0, cacheRead: 0 };
    this.#usage = {
      input: sum.input + step.input,
      output: sum.output + step.output,
      cacheWrite: sum.cacheWrite + step.cacheWrite,
      cacheRead: sum.cacheRead + step.cacheRead,
    };
    this.#live = { ...this.#usage };
    if (cost !== null) this.#cost = (this.#cost ?? 0) + cost;
    this.#emit({ type: 'usage', usage: step, model: this.#model ?? '', ...(cost === null ? {} : { costUsd: cost }) });
  }

  #codexItem(item: Json | undefined): void {
    if (item === undefined) return;
    if (item.type === 'agent_message' && typeof item.text === 'string') {
      this.#text = item.text;
      this.#emit({ type: 'text', text: `${item.text}\n` });
    } else if (item.type === 'command_execution') {
      this.#emit({ type: 'tool', name: 'shell', input: String(item.command ?? '') });
    } else if (item.type === 'file_change') {
      this.#emit({ type: 'tool', name: 'file_change', input: JSON.stringify(item.changes ?? []) });
    }
  }

  #codexUsage(u: Json | undefined): void {
    if (u === undefined) return;
    const cached = count(u.cached_input_tokens);
    const written = count(u.cache_write_input_tokens);
    const turn: Usage = {
      input: Math.max(0, count(u.input_tokens) - cached - written),
      output: count(u.output_tokens),
      cacheWrite: written,
      cacheRead: cached,
    };
    const sum = this.#usage ?? { input: 0, output: 0, cacheWrite: 0, cacheRead: 0 };
    this.#usage = {
      input: sum.input + turn.input,
      output: sum.output + turn.output,
      cacheWrite: sum.cacheWrite + turn.cacheWrite,
      cacheRead: sum.cacheRead + turn.cacheRead,
    };
  }
}
