/**
 * An issue of the tracker as an item of BACKLOG.md's `## Tracker` section, and the task keys its body may
 * state in a fenced `loopfleet` block, read with the backlog's own parser and its own error words.
 *
 * Invariants of every item written:
 * - its id is the issue's (`gh#123`) and its `source:` names the issue, so the task's pull request says
 *   `Fixes #123` and discover never proposes the issue again;
 * - its keys are exactly those the `loopfleet` block states (validated first: a block the parser refuses
 *   writes nothing) plus `after:` from the tracker's relations, naming only tasks the file holds;
 * - every other word of the issue sits inside a fence longer than any backtick run in it, and the title is
 *   one line, so nothing an issue says can become a key, an item or a heading (the one sanitiser runs on all).
 */
import { InputError, InputErrors } from '../../domain/errors.js';
import { oneLine, visible } from '../../domain/sanitize.js';
import { parseBacklog, TASK_KEYS } from '../backlog/parse.js';

/** Keys a `loopfleet` block may not state: loopfleet writes them from the tracker itself. */
const OWN_KEYS = new Set(['source', 'after']);
/** Issue bodies are bounded: the item links the issue for the rest. */
const MAX_BODY = 8000;
/** A link the item carries: the tracker's own web address of the issue, plain characters only. */
const SAFE_URL = /^https?:\/\/[A-Za-z0-9._~:/?#@!$&'()*+,;=%-]{1,300}$/;
/** A fenced block whose info string is `loopfleet`, at the start of a line. */
const BLOCK = /^( {0,3})(`{3,}|~{3,})[ \t]*loopfleet[ \t]*\r?\n([\s\S]*?)\r?\n {0,3}\2[ \t]*$/m;

export interface IssueText {
  id: string;
  title: string;
  body: string;
  url: string;
}

export type BlockKeys = { ok: true; lines: string[]; rest: string } | { ok: false; problem: string };

/**
 * The `key: value` lines of the issue's `loopfleet` block, each checked by the backlog's parser; `rest` is
 * the body without the block. A problem is worded as the parser words it, naming the block's line.
 */
export function blockKeys(id: string, body: string): BlockKeys {
  const m = BLOCK.exec(body);
  if (m === null) return { ok: true, lines: [], rest: body };
  const rest = (body.slice(0, m.index) + body.slice(m.index + m[0].length)).trim();
  const lines: string[] = [];
  const raw = (m[3] ?? '').split(/\r?\n/);
  for (const [i, line] of raw.entries()) {
    if (line.trim() === '' || line.trim().startsWith('#')) continue;
    const kv = /^\s*([a-z_]+):[ \t]*(.*)$/.exec(line);
    const where = `${id}: line ${i + 1} of the loopfleet block`;
    if (kv === null)
      return { ok: false, problem: `${where}: '${oneLine(line).slice(0, 80)}' is not a key: value line` };
    const key = kv[1]!;
    if (OWN_KEYS.has(key))
      return { ok: false, problem: `${where}: ${key}: is loopfleet's to write (from the tracker's relations)` };
    if (!(TASK_KEYS as readonly string[]).includes(key))
      return {
        ok: false,
        problem: `${where}: unknown key '${key}' (task keys: ${TASK_KEYS.filter((k) => !OWN_KEYS.has(k)).join(', ')})`,
      };
    lines.push(`${key}: ${oneLine(kv[2] ?? '').trim()}`);
  }
  // The backlog's own parser judges the keys, as it would in BACKLOG.md.
  const text = `- [ ] ${id} issue\n${lines.map((l) => `  ${l}`).join('\n')}\n`;
  try {
    parseBacklog(text, `${id} (its loopfleet block)`);
  } catch (error) {
    const errors = error instanceof InputErrors ? error.errors : error instanceof InputError ? [error] : null;
    if (errors === null) throw error;
    return { ok: false, problem: errors.map((e) => `${id}: loopfleet block: ${e.problem}`).join('; ') };
  }
  return { ok: true, lines, rest };
}

/** A one-line field: no line break, escape sequence or control, no HTML comment markers. */
function single(text: string): string {
  return oneLine(text)
    .replace(/<!--|-->/g, ' ')
    .trim();
}

/** The item's lines (without terminators) for `issue`, with `keys` from its block and `after` from its relations. */
export function renderIssueItem(issue: IssueText, keys: readonly string[], after: readonly string[]): string[] {
  const lines = [`- [ ] ${issue.id} ${single(issue.title) || 'untitled issue'}`, `  source: ${issue.id}`];
  for (const k of keys) lines.push(`  ${k}`);
  if (after.length > 0) lines.push(`  after: ${after.join(', ')}`);
  if (SAFE_URL.test(issue.url)) lines.push(`  Issue ${issue.id}: ${issue.url}`);
  const body = issue.body.length > MAX_BODY ? `${issue.body.slice(0, MAX_BODY)}\n[…]` : issue.body;
  const quoted = visible(body).trim();
  if (quoted !== '') {
    const longest = Math.max(0, ...[...quoted.matchAll(/`+/g)].map((m) => m[0].length));
    const fence = '`'.repeat(Math.max(3, longest + 1));
    lines.push(`  ${fence}text`);
    for (const q of quoted.split('\n')) lines.push(q === '' ? '' : `  ${q.replace(/\t/g, '    ')}`);
    lines.push(`  ${fence}`);
  }
  return lines;
}

/** The issue's address as the item states it (`Issue gh#12: https://…`), or null. */
export function issueUrlOf(id: string, description: string): string | null {
  const prefix = `Issue ${id}: `;
  const line = description.split('\n').find((l) => l.startsWith(prefix));
  const url = line?.slice(prefix.length).trim();
  return url !== undefined && SAFE_URL.test(url) ? url : null;
}
