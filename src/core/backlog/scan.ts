/**
 * The line structure of a backlog body: which lines are checklist items and which indented lines belong to
 * each. Shared by the parser and the write-back, so that both agree on what an item is.
 *
 * Invariants:
 * - an item is a checklist line at column 0 (`- [ ]`, `* [x]`, `+ [X]`) outside fenced code blocks and
 *   outside HTML comments;
 * - an item owns the indented and blank lines after it, up to the next non-blank line at column 0;
 * - HTML comments are invisible: a line that holds only a comment neither ends an item nor joins it;
 * - every column reported lies in the ASCII prefix of the line, so it is also a byte offset in UTF-8.
 */

/**
 * `T-4` (any `LETTERS-<n>`, Linear's `LIN-812` too), a part's `T-4.1`, or a tracker issue's id: `gh#123`
 * (GitHub), `gl#45` (GitLab).
 */
export const TASK_ID_RE = /^(?:[A-Z][A-Z0-9]*-\d+(?:\.\d+)?|g[hl]#\d+)$/;

/** A part's id: its parent's id, a dot and its number (`T-7.1`). */
export const PART_ID_RE = /^([A-Z][A-Z0-9]*-\d+)\.(\d+)$/;

/** The task a part (`T-7.1`) belongs to (`T-7`); null for an id that is not a part's. */
export function parentOf(id: string): string | null {
  return PART_ID_RE.exec(id)?.[1] ?? null;
}

/**
 * The task an id names: its prefix and its number as a whole number of any size (a string of digits
 * without leading zeros — never a float, so `T-12345678901234567` and `T-12345678901234568` stay two).
 * Two ids with one canonical form (`T-007`, `T-7`) would name one branch for a person reading them and
 * collide wherever a number is compared: a backlog holding both is refused.
 */
export function canonicalId(id: string): string {
  const part = PART_ID_RE.exec(id);
  if (part !== null) return `${canonicalId(part[1]!)}.${BigInt(part[2]!).toString()}`;
  const m = /^(.*[-#])(\d+)$/.exec(id);
  return m === null ? id : `${m[1]}${BigInt(m[2]!).toString()}`;
}

/** An ATX heading (`## Discovered`) at column 0, outside fences and comments. */
export interface Heading {
  line: number;
  level: number;
  title: string;
}

export interface BodyLine {
  line: number;
  /** the line with HTML comments removed; verbatim inside a fenced block */
  text: string;
  /** inside (or opening/closing) a fenced code block: never a field */
  verbatim: boolean;
}

export interface ScannedItem {
  /** 1-based file line */
  line: number;
  done: boolean;
  /** column of the character between the brackets */
  checkCol: number;
  /** column where the text after the checkbox starts (the line's length when there is none) */
  textCol: number;
  /** whether whitespace separates `]` from the text */
  spaced: boolean;
  /** false when an HTML comment inside the checkbox prefix shifts the columns: never edit such a line */
  editable: boolean;
  /** the id written on the line, if any (a trailing `:` is not part of it) */
  id: string | null;
  title: string;
  body: BodyLine[];
  /** the headings the item is under, outermost first */
  section: Heading[];
}

const ITEM_RE = /^([-*+])([ \t]+)\[([ xX])\](?:([ \t]+)(.*))?$/;
const HEADING_RE = /^(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const FENCE_OPEN_RE = /^([ \t]*)(`{3,}|~{3,})(.*)$/;

interface Fence {
  char: string;
  length: number;
}

function opensFence(text: string): Fence | null {
  const m = FENCE_OPEN_RE.exec(text);
  if (!m) return null;
  const marks = m[2]!;
  if (marks[0] === '`' && m[3]!.includes('`')) return null;
  return { char: marks[0]!, length: marks.length };
}

function closesFence(text: string, fence: Fence): boolean {
  const t = text.trim();
  return t.length >= fence.length && [...t].every((c) => c === fence.char);
}

/** Splits the first word off an item's text: an id when it looks like one. */
export function splitId(text: string): { id: string | null; title: string } {
  const m = /^(\S+?):?(?:\s+([\s\S]*))?$/.exec(text.trim());
  if (m && TASK_ID_RE.test(m[1]!)) return { id: m[1]!, title: (m[2] ?? '').trim() };
  return { id: null, title: text.trim() };
}

/**
 * Scans `lines` (the body of a backlog; `firstLine` is the file line of `lines[0]`) for items. The headings
 * met on the way are pushed to `headings` when given.
 */
export function scanItems(lines: readonly string[], firstLine: number, headings: Heading[] = []): ScannedItem[] {
  const items: ScannedItem[] = [];
  let section: Heading[] = [];
  let current: ScannedItem | null = null;
  let fence: Fence | null = null;
  let inComment = false;

  lines.forEach((raw, i) => {
    const line = firstLine + i;
    if (fence) {
      if (closesFence(raw, fence)) fence = null;
      current?.body.push({ line, text: raw, verbatim: true });
      return;
    }

    const startedInComment = inComment;
    let visible = '';
    let rest = raw;
    while (rest.length > 0) {
      if (inComment) {
        const end = rest.indexOf('-->');
        if (end < 0) rest = '';
        else {
          rest = rest.slice(end + 3);
          inComment = false;
        }
      } else {
        const start = rest.indexOf('<!--');
        if (start < 0) {
          visible += rest;
          rest = '';
        } else {
          visible += rest.slice(0, start);
          rest = rest.slice(start + 4);
          inComment = true;
        }
      }
    }

    if (visible.trim() === '') {
      if (raw.trim() === '') current?.body.push({ line, text: '', verbatim: false });
      return;
    }

    const indented = /^[ \t]/.test(visible);
    const opened = opensFence(visible);
    if (!indented) current = null;
    if (opened) {
      fence = opened;
      current?.body.push({ line, text: raw, verbatim: true });
      return;
    }
    if (indented) {
      current?.body.push({ line, text: visible, verbatim: false });
      return;
    }

    const h = startedInComment ? null : HEADING_RE.exec(visible);
    if (h) {
      const heading = { line, level: h[1]!.length, title: (h[2] ?? '').trim() };
      section = [...section.filter((s) => s.level < heading.level), heading];
      headings.push(heading);
      return;
    }
    const m = startedInComment ? null : ITEM_RE.exec(visible);
    if (!m) return;
    const checkCol = 1 + m[2]!.length + 1;
    const spaced = m[4] !== undefined;
    const textCol = spaced ? checkCol + 2 + m[4]!.length : checkCol + 2;
    const { id, title } = splitId(m[5] ?? '');
    const editable = raw.slice(0, textCol) === visible.slice(0, textCol);
    current = { line, done: m[3] !== ' ', checkCol, textCol, spaced, editable, id, title, body: [], section };
    items.push(current);
  });
  return items;
}
