import { visible } from '../../domain/sanitize.js';

/**
 * `value` with every string in it passed through the one sanitiser ({@link visible}, multi-line): whatever
 * an agent, a check or git wrote reaches a client with no escape sequence, no control character but tab
 * and newline, and no bidi control. Object keys are ours or task ids (checked by the backlog's parser) and
 * are cleaned too. Everything the server sends (JSON bodies and event data) goes through here; the page
 * still puts text into the document as text, never as markup.
 */
export function clean<T>(value: T): T {
  return cleanValue(value) as T;
}

function cleanValue(value: unknown): unknown {
  if (typeof value === 'string') return visible(value);
  if (Array.isArray(value)) return value.map(cleanValue);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(value)) if (v !== undefined) out[visible(key)] = cleanValue(v);
    return out;
  }
  return value;
}
