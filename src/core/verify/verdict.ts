import type { Verdict } from '../../domain/types.js';

/**
 * The reviewer's answer as a verdict. Anything that is not exactly one well-formed verdict is a veto, with a
 * reason saying why: an unreadable, malformed or self-contradicting review must never let a change through.
 *
 * A verdict is a JSON object with `pass` (a boolean) and `reasons` (a list of strings; absent means none),
 * found anywhere in the answer: the whole answer, or an object standing on its own in prose or a code fence.
 * Every object there that has a `pass` key counts: when one is malformed or two disagree, it is a veto. A
 * code block of another language (a quoted diff or source, which may hold anything) is not the answer.
 */

const SHOWN = 200;
/** the answer's tail that is searched: a verdict is an answer's end, and this bounds the work on hostile text */
const SEARCHED = 256 * 1024;
const SHAPE = '{"pass": true|false, "reasons": ["…"]}';
/** how deep in braces an object is still looked at (stray prose braces add a level or two) */
const MAX_DEPTH = 16;

const FENCE = /^[ \t]*(`{3,}|~{3,})[ \t]*([^\s`]*)/;

/**
 * The text without its fenced code blocks labelled with a language other than JSON (an unclosed one runs to
 * the end, as in Markdown). One pass over the lines.
 */
function withoutForeignCode(text: string): string {
  const kept: string[] = [];
  let open: string | null = null;
  for (const line of text.split('\n')) {
    const fence = FENCE.exec(line);
    if (open !== null) {
      if (fence !== null && fence[1]![0] === open[0] && fence[1]!.length >= open.length && fence[2] === '') open = null;
      continue;
    }
    if (fence !== null && fence[2] !== '' && fence[2]!.toLowerCase() !== 'json') {
      open = fence[1]!;
      continue;
    }
    kept.push(line);
  }
  return kept.join('\n');
}

function veto(reason: string): Verdict {
  return { pass: false, reasons: [reason] };
}

function shown(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= SHOWN ? flat : `${flat.slice(0, SHOWN)}…`;
}

/**
 * The spans of balanced `{…}` in the text, outermost first in order of their start. Quotes are only
 * tracked inside braces (prose outside may hold a stray `"`), so a brace inside a JSON string is not counted.
 * Spans nested deeper than MAX_DEPTH are left out: each is parsed once, so a deep pile stays cheap.
 */
function braceSpans(text: string): Array<[number, number]> {
  const spans: Array<[number, number]> = [];
  const open: number[] = [];
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') {
      if (open.length > 0) inString = true;
    } else if (c === '{') open.push(i);
    else if (c === '}') {
      const start = open.pop();
      if (start !== undefined && open.length < MAX_DEPTH) spans.push([start, i + 1]);
    }
  }
  return spans.sort((a, b) => a[0] - b[0]);
}

/** The JSON objects standing on their own in the text; an object inside a parsed one is part of it. */
function objectsIn(text: string): Record<string, unknown>[] {
  const objects: Record<string, unknown>[] = [];
  let parsedEnd = -1;
  for (const [start, end] of braceSpans(text)) {
    if (start < parsedEnd) continue;
    let value: unknown;
    try {
      value = JSON.parse(text.slice(start, end));
    } catch {
      // Not JSON: prose or code braces; an object inside may still be.
      continue;
    }
    if (typeof value === 'object' && value !== null && !Array.isArray(value))
      objects.push(value as Record<string, unknown>);
    parsedEnd = end;
  }
  return objects;
}

function asVerdict(value: Record<string, unknown>): Verdict | null {
  if (typeof value.pass !== 'boolean') return null;
  const reasons = value.reasons ?? [];
  if (!Array.isArray(reasons) || !reasons.every((r) => typeof r === 'string')) return null;
  return { pass: value.pass, reasons: reasons as string[] };
}

export function parseVerdict(text: string): Verdict {
  const trimmed = text.trim();
  const tail = trimmed.length > SEARCHED ? trimmed.slice(-SEARCHED) : trimmed;
  const searched = withoutForeignCode(tail);
  const claimed = objectsIn(searched).filter((o) => Object.hasOwn(o, 'pass'));
  if (claimed.length === 0) {
    return veto(`the reviewer's answer was not a verdict (a JSON object ${SHAPE}): ${shown(trimmed) || '(empty)'}`);
  }
  const verdicts: Verdict[] = [];
  for (const object of claimed) {
    const verdict = asVerdict(object);
    if (verdict === null)
      return veto(`the reviewer gave a malformed verdict (expected ${SHAPE}): ${shown(JSON.stringify(object))}`);
    verdicts.push(verdict);
  }
  if (new Set(verdicts.map((v) => v.pass)).size > 1) {
    return veto(`the reviewer gave conflicting verdicts (both pass and fail): ${shown(trimmed)}`);
  }
  return verdicts.at(-1)!;
}
