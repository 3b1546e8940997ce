import type { Phase, Role } from '../domain/types.js';
import { sanitize } from './format.js';

/** What kind of line: agent prose, a tool call, a section header, or raw command output. */
export type OutputKind = 'text' | 'tool' | 'header' | 'command';

export interface OutputLine {
  readonly kind: OutputKind;
  readonly text: string;
}

/**
 * A bounded, immutable log of one task's streamed output. Appends return a new log; the old one is never
 * changed, so React can compare logs by reference.
 *
 * Invariants: `lines.length <= capacity`; when `open` is true the last line is a `text`/`command` line that
 * the next chunk continues (the stream has not yet sent its newline).
 */
export interface OutputLog {
  readonly lines: readonly OutputLine[];
  readonly open: boolean;
  /** the section the last line belongs to, e.g. `implementer#2` or `phase:verify` */
  readonly section: string | null;
  /** lines dropped from the front so far */
  readonly dropped: number;
  readonly capacity: number;
}

export const DEFAULT_CAPACITY = 500;

export function emptyLog(capacity = DEFAULT_CAPACITY): OutputLog {
  return { lines: [], open: false, section: null, dropped: 0, capacity };
}

function bounded(log: OutputLog, lines: OutputLine[], open: boolean, section: string | null): OutputLog {
  const excess = lines.length - log.capacity;
  if (excess <= 0) return { ...log, lines, open, section };
  return { ...log, lines: lines.slice(excess), open, section, dropped: log.dropped + excess };
}

/** Lines plus a header when the stream switched to another section. */
function withSection(log: OutputLog, section: string, header: string): { lines: OutputLine[]; open: boolean } {
  if (log.section === section) return { lines: [...log.lines], open: log.open };
  return { lines: [...log.lines, { kind: 'header', text: header }], open: false };
}

function appendChunk(
  log: OutputLog,
  section: string,
  header: string,
  kind: 'text' | 'command',
  chunk: string,
): OutputLog {
  const { lines, open } = withSection(log, section, header);
  const parts = sanitize(chunk).split('\n');
  const endsOpen = parts.at(-1) !== '';
  if (!endsOpen) parts.pop();
  parts.forEach((part, i) => {
    const last = lines.at(-1);
    if (i === 0 && open && last !== undefined && last.kind === kind) {
      lines[lines.length - 1] = { kind, text: last.text + part };
    } else {
      lines.push({ kind, text: part });
    }
  });
  // A chunk of only "\n" closes the open line without adding one.
  return bounded(log, lines, endsOpen, section);
}

export function agentSection(role: Role, attempt: number): string {
  return `${role}#${attempt}`;
}

/** Streamed agent text: continues the open line, starts new ones at each newline. */
export function appendAgentText(log: OutputLog, role: Role, attempt: number, text: string): OutputLog {
  return appendChunk(log, agentSection(role, attempt), `── ${role} · attempt ${attempt} ──`, 'text', text);
}

const TOOL_INPUT_MAX = 240;

/** A tool call as one line: `⚙ bash npm test`. */
export function appendToolCall(log: OutputLog, role: Role, attempt: number, name: string, input: string): OutputLog {
  const { lines } = withSection(log, agentSection(role, attempt), `── ${role} · attempt ${attempt} ──`);
  const flat = sanitize(input).replace(/\s+/g, ' ').trim();
  const shown = flat.length > TOOL_INPUT_MAX ? `${flat.slice(0, TOOL_INPUT_MAX - 1)}…` : flat;
  lines.push({ kind: 'tool', text: `⚙ ${name}${shown === '' ? '' : ` ${shown}`}` });
  return bounded(log, lines, false, agentSection(role, attempt));
}

/** Output of the setup or check command as it streams. */
export function appendPhaseOutput(log: OutputLog, phase: Phase, chunk: string): OutputLog {
  return appendChunk(log, `phase:${phase}`, `── ${phase === 'verify' ? 'check' : phase} output ──`, 'command', chunk);
}
