import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { ApiBlock, ApiMessage, RequestBody } from './script-types.js';

/**
 * Request validation of the fake Messages API: the checks where a client bug would otherwise pass
 * unnoticed against a fake but fail against the real API. Messages follow the API's wording.
 */

export interface ApiErrorSpec {
  status: number;
  type: string;
  message: string;
}

export const API_VERSION = '2026-10-21';

const SAMPLING_PARAMS = ['temperature', 'top_p', 'top_k'] as const;

function invalid(message: string): ApiErrorSpec {
  return { status: 400, type: 'invalid_request_error', message };
}

/** The API key a request carries, by either scheme, or null. */
export function credentialOf(headers: IncomingHttpHeaders): string | null {
  const auth = headers.authorization;
  if (typeof auth === 'string') {
    const match = /^Bearer\s+(\S+)$/i.exec(auth.trim());
    if (match) return match[1]!;
  }
  const key = headers['x-api-key'];
  return typeof key === 'string' && key !== '' ? key : null;
}

export function validateHeaders(
  headers: IncomingHttpHeaders,
  acceptedKeys: readonly string[] | null,
): ApiErrorSpec | null {
  const key = credentialOf(headers);
  if (key === null) {
    return {
      status: 401,
      type: 'authentication_error',
      message: 'x-api-key or Authorization: Bearer header is required',
    };
  }
  if (acceptedKeys !== null && !acceptedKeys.includes(key)) {
    return { status: 401, type: 'authentication_error', message: 'invalid x-api-key' };
  }
  if (typeof headers['anthropic-version'] !== 'string' || headers['anthropic-version'] === '') {
    return invalid('anthropic-version: header is required');
  }
  return null;
}

/**
 * The signature the fake gives a thinking block. The API rejects a thinking block sent back with a signature
 * it did not issue for that text, so a client that edits or drops it is caught.
 */
export function thinkingSignature(thinking: string): string {
  return `fakesig_${createHash('sha256').update(`thinking:${thinking}`).digest('base64url')}`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The beta that lets a conversation carry `role: "system"` messages between turns (Claude Code sends it). */
export const PER_TURN_CONTROL_BETA = 'per-turn-control-2026-07-01';

/** The names in `anthropic-beta` (comma-separated, possibly repeated). */
export function betasOf(headers: IncomingHttpHeaders): string[] {
  const raw = headers['anthropic-beta'];
  const text = Array.isArray(raw) ? raw.join(',') : (raw ?? '');
  return text
    .split(',')
    .map((b) => b.trim())
    .filter((b) => b !== '');
}

function validateMessages(messages: unknown[], betas: readonly string[]): ApiErrorSpec | null {
  if (messages.length === 0) return invalid('messages: at least one message is required');
  const systemAllowed = betas.includes(PER_TURN_CONTROL_BETA);
  for (const [i, m] of messages.entries()) {
    if (isObject(m) && m.role === 'system' && systemAllowed && i > 0) {
      if (typeof m.content !== 'string' && !Array.isArray(m.content)) {
        return invalid(`messages.${i}.content: Input should be a valid string or list`);
      }
      continue;
    }
    if (!isObject(m) || (m.role !== 'user' && m.role !== 'assistant')) {
      return invalid(`messages.${i}.role: Input should be 'user' or 'assistant'`);
    }
    if (typeof m.content !== 'string' && !Array.isArray(m.content)) {
      return invalid(`messages.${i}.content: Input should be a valid string or list`);
    }
  }
  // Per-turn system messages are instructions, not turns: the alternation rules apply to the rest.
  for (const [i, m] of (messages as ApiMessage[]).entries()) {
    if (m.role !== 'assistant' || typeof m.content === 'string') continue;
    for (const [j, b] of m.content.entries()) {
      if (b.type === 'thinking' && b.signature !== thinkingSignature(String(b.thinking ?? ''))) {
        return invalid(`messages.${i}.content.${j}: Invalid \`signature\` in \`thinking\` block`);
      }
    }
  }
  const list = (messages as ApiMessage[]).filter((m) => (m.role as string) !== 'system');
  if (list[0]!.role !== 'user') return invalid('messages: first message must use the "user" role');
  // Every tool_use must be answered by a tool_result in the message right after it.
  for (const [i, m] of list.entries()) {
    if (m.role !== 'assistant' || typeof m.content === 'string') continue;
    const ids = m.content.filter((b) => b.type === 'tool_use').map((b) => String(b.id));
    if (ids.length === 0) continue;
    const next = list[i + 1];
    if (next === undefined) continue;
    const answered = new Set(
      typeof next.content === 'string'
        ? []
        : next.content.filter((b: ApiBlock) => b.type === 'tool_result').map((b) => String(b.tool_use_id)),
    );
    const missing = ids.filter((id) => !answered.has(id));
    if (next.role !== 'user' || missing.length > 0) {
      return invalid(
        `messages.${i + 1}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(', ')}`,
      );
    }
  }
  return null;
}

function validateToolChoice(body: Record<string, unknown>): ApiErrorSpec | null {
  const choice = body.tool_choice;
  if (!isObject(choice)) return null;
  if (choice.type === 'any' || choice.type === 'tool') {
    return invalid(
      `tool_choice: a forced tool choice ('${String(choice.type)}') is not supported by this model; use 'auto' or 'none', or structured outputs`,
    );
  }
  return null;
}

function validateOutputConfig(body: Record<string, unknown>): ApiErrorSpec | null {
  const config = body.output_config;
  if (config === undefined || config === null) return null;
  if (!isObject(config)) return invalid('output_config: Input should be an object');
  const format = config.format;
  if (format === undefined || format === null) return null;
  if (!isObject(format) || format.type !== 'json_schema' || !isObject(format.schema)) {
    return invalid("output_config.format: expected {type: 'json_schema', schema: {...}}");
  }
  return null;
}

/** Validates a parsed body; returns the error the API would answer, or null. */
export function validateBody(
  body: unknown,
  knownModels: readonly string[] | null,
  betas: readonly string[] = [],
): ApiErrorSpec | null {
  if (!isObject(body)) return invalid('request body must be a JSON object');
  if (typeof body.model !== 'string' || body.model === '') return invalid('model: Field required');
  if (typeof body.max_tokens !== 'number' || !Number.isInteger(body.max_tokens) || body.max_tokens < 1) {
    return invalid('max_tokens: Field required');
  }
  if (!Array.isArray(body.messages)) return invalid('messages: Field required');
  for (const param of SAMPLING_PARAMS) {
    if (param in body) {
      return invalid(`${param}: is not supported on API version ${API_VERSION}; remove sampling parameters`);
    }
  }
  if ('thread' in body && body.thread !== null) {
    return invalid('thread: message threads are not supported by this server; send the full history');
  }
  const choiceError = validateToolChoice(body);
  if (choiceError) return choiceError;
  const outputError = validateOutputConfig(body);
  if (outputError) return outputError;
  const messagesError = validateMessages(body.messages, betas);
  if (messagesError) return messagesError;
  if (knownModels !== null && !knownModels.includes(body.model)) {
    return { status: 404, type: 'not_found_error', message: `model: ${body.model}` };
  }
  return null;
}

export function isValidBody(body: unknown): body is RequestBody {
  return validateBody(body, null) === null;
}
