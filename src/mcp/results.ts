/**
 * Tool results of the MCP server.
 *
 * Invariants:
 * - every string that leaves the server passed the one sanitiser ({@link visible}): task titles, plans,
 *   diffs, check output and reasons are written by agents, TODOs and issues, and an MCP client may show
 *   them in a terminal — no escape sequence, control or bidi override reaches it;
 * - a refusal or a failure is a tool result with `isError: true` and the words the CLI would print, never a
 *   protocol error: the calling agent reads why and what a person can do instead;
 * - an error that is not one of loopfleet's own (a bug) is logged with its stack on stderr — stdout is the
 *   transport — and answered with its message only.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { RefusedError, UsageError } from '../domain/errors.js';
import { jsonText, visible } from '../domain/sanitize.js';

/** `value` with every string in it made safe to show; plain data only (what JSON can hold). */
export function cleaned<T>(value: T): T {
  if (typeof value === 'string') return visible(value) as T;
  if (Array.isArray(value)) return value.map((v) => cleaned(v)) as T;
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[visible(k)] = cleaned(v);
    return out as T;
  }
  return value;
}

/** A result holding `value` as JSON text, cleaned. */
export function data(value: unknown): CallToolResult {
  return { content: [{ type: 'text', text: jsonText(cleaned(value), 2) }] };
}

/** A result of plain words, cleaned. */
export function words(text: string): CallToolResult {
  return { content: [{ type: 'text', text: visible(text) }] };
}

/** A refusal or a failure: the words, cleaned, with `isError`. */
export function refusal(text: string): CallToolResult {
  return { content: [{ type: 'text', text: visible(text) }], isError: true };
}

/** Whether an error is one of loopfleet's own, whose message is meant for a person. */
function ours(error: unknown): error is Error {
  return (
    error instanceof UsageError ||
    error instanceof RefusedError ||
    (error instanceof Error && 'exitCode' in error && typeof error.exitCode === 'number')
  );
}

/**
 * Runs a tool's work: its result, or the error as a refusal. Input problems get a last line saying nothing
 * was written (the parser's and the CLI's errors are thrown before any write).
 */
export async function guarded(
  work: () => Promise<CallToolResult>,
  log: (line: string) => void,
  nothingWritten = false,
): Promise<CallToolResult> {
  try {
    return await work();
  } catch (error) {
    if (ours(error)) {
      const note = nothingWritten && error instanceof UsageError;
      return refusal(`${error.message}${note ? '\nnothing was written: BACKLOG.md is as it was' : ''}`);
    }
    log(`internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    return refusal(`internal error: ${error instanceof Error ? error.message : String(error)}`);
  }
}
