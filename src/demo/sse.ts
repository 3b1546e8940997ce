import type { InputUsage } from './cache-sim.js';
import { tokensOf } from './cache-sim.js';
import type { ApiBlock, ScriptTurn } from './script-types.js';
import { thinkingSignature } from './validate.js';

/**
 * The reply of the fake Messages API in its two shapes: a Message object, and the SSE events of a stream
 * that accumulate to that same Message. Invariant: the stream's usage (message_start, then the cumulative
 * message_delta) ends equal to the Message's usage.
 */

export interface Reply {
  id: string;
  model: string;
  content: ApiBlock[];
  stopReason: string;
  outputTokens: number;
}

export interface SseEvent {
  event: string;
  data: Record<string, unknown>;
}

/** Output tokens are deterministic: ceil(chars / 4) of the text and of each tool input's JSON, at least 1. */
export function buildReply(turn: ScriptTurn, model: string, nextId: (prefix: string) => string): Reply {
  const content: ApiBlock[] = [];
  let outputTokens = 0;
  if (turn.thinking !== undefined && turn.thinking !== '') {
    content.push({ type: 'thinking', thinking: turn.thinking, signature: thinkingSignature(turn.thinking) });
    outputTokens += tokensOf(turn.thinking);
  }
  if (turn.text !== undefined && turn.text !== '') {
    content.push({ type: 'text', text: turn.text });
    outputTokens += tokensOf(turn.text);
  }
  for (const use of turn.toolUses ?? []) {
    content.push({ type: 'tool_use', id: nextId('toolu'), name: use.name, input: use.input });
    outputTokens += tokensOf(JSON.stringify(use.input));
  }
  const stopReason = turn.stopReason ?? ((turn.toolUses?.length ?? 0) > 0 ? 'tool_use' : 'end_turn');
  return { id: nextId('msg'), model, content, stopReason, outputTokens: Math.max(1, outputTokens) };
}

function usageJson(input: InputUsage, outputTokens: number): Record<string, unknown> {
  return { ...input, output_tokens: outputTokens, service_tier: 'standard' };
}

export function messageJson(reply: Reply, input: InputUsage): Record<string, unknown> {
  return {
    id: reply.id,
    type: 'message',
    role: 'assistant',
    model: reply.model,
    content: reply.content,
    stop_reason: reply.stopReason,
    stop_sequence: null,
    usage: usageJson(input, reply.outputTokens),
  };
}

/** Splits text into word-aligned chunks of about `size` characters; joined they give `text` back. */
export function textChunks(text: string, size: number): string[] {
  const words = text.match(/\s*\S+\s*/g) ?? [text];
  const chunks: string[] = [];
  let current = '';
  for (const word of words) {
    current += word;
    if (current.length >= size) {
      chunks.push(current);
      current = '';
    }
  }
  if (current !== '' || chunks.length === 0) chunks.push(current);
  return chunks;
}

/** Splits a JSON text into `parts` pieces (fewer when it is shorter), as the API streams tool input. */
export function jsonChunks(json: string, parts = 3): string[] {
  const size = Math.max(1, Math.ceil(json.length / parts));
  const chunks: string[] = [];
  for (let i = 0; i < json.length; i += size) chunks.push(json.slice(i, i + size));
  return chunks.length > 0 ? chunks : [''];
}

export function streamEvents(reply: Reply, input: InputUsage, chunkChars: number): SseEvent[] {
  const events: SseEvent[] = [];
  const start = messageJson(reply, input);
  events.push({
    event: 'message_start',
    data: { type: 'message_start', message: { ...start, content: [], stop_reason: null, usage: usageJson(input, 1) } },
  });
  events.push({ event: 'ping', data: { type: 'ping' } });
  reply.content.forEach((block, index) => {
    if (block.type === 'text') {
      events.push({
        event: 'content_block_start',
        data: { type: 'content_block_start', index, content_block: { type: 'text', text: '' } },
      });
      for (const text of textChunks(String(block.text), chunkChars)) {
        events.push({
          event: 'content_block_delta',
          data: { type: 'content_block_delta', index, delta: { type: 'text_delta', text } },
        });
      }
    } else if (block.type === 'thinking') {
      events.push({
        event: 'content_block_start',
        data: { type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '', signature: '' } },
      });
      for (const thinking of textChunks(String(block.thinking), chunkChars)) {
        events.push({
          event: 'content_block_delta',
          data: { type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking } },
        });
      }
      events.push({
        event: 'content_block_delta',
        data: { type: 'content_block_delta', index, delta: { type: 'signature_delta', signature: block.signature } },
      });
    } else {
      events.push({
        event: 'content_block_start',
        data: {
          type: 'content_block_start',
          index,
          content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} },
        },
      });
      for (const partial_json of jsonChunks(JSON.stringify(block.input))) {
        events.push({
          event: 'content_block_delta',
          data: { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json } },
        });
      }
    }
    events.push({ event: 'content_block_stop', data: { type: 'content_block_stop', index } });
  });
  events.push({
    event: 'message_delta',
    data: {
      type: 'message_delta',
      delta: { stop_reason: reply.stopReason, stop_sequence: null },
      // cumulative totals, as the API sends them
      usage: {
        input_tokens: input.input_tokens,
        cache_creation_input_tokens: input.cache_creation_input_tokens,
        cache_read_input_tokens: input.cache_read_input_tokens,
        output_tokens: reply.outputTokens,
      },
    },
  });
  events.push({ event: 'message_stop', data: { type: 'message_stop' } });
  return events;
}

export function formatSse(event: SseEvent): string {
  return `event: ${event.event}\ndata: ${JSON.stringify(event.data)}\n\n`;
}

export function errorJson(type: string, message: string, requestId: string): Record<string, unknown> {
  return { type: 'error', error: { type, message }, request_id: requestId };
}
