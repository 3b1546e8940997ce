/**
 * Writing tracker items into BACKLOG.md under `## Tracker`, the section the fleet owns.
 *
 * Invariants (those of discover's write, which this mirrors):
 * - only lines are added: nothing of the file is changed or removed, a person's items least of all;
 * - the file is re-read right before writing and an issue the file already holds — anywhere, done or not,
 *   by its id or its `source:` — is not written again, so a person's edit saved meanwhile is kept and an
 *   item moved elsewhere or ticked stays as it is.
 */
import type { InputError } from '../../domain/errors.js';
import type { BacklogFile } from '../../ports/files.js';
import { readFrontMatter, splitLines } from '../backlog/front-matter.js';
import { parseBacklog } from '../backlog/parse.js';
import { scanItems, type Heading } from '../backlog/scan.js';
import { edit, type Edit } from '../backlog/write-back.js';

export const TRACKER_HEADING = 'Tracker';

/** The ids (and `source:` values) of every item of `text`: what the file already holds. */
export function heldIds(text: string, path: string): Set<string> {
  const tasks = parseBacklog(text, path).backlog.tasks;
  return new Set(tasks.flatMap((t) => [t.id, ...(t.source === undefined ? [] : [t.source])]));
}

export interface NewItem {
  id: string;
  lines: string[];
}

function planInsertion(text: string, items: readonly NewItem[], path: string): { edit: Edit | null; added: string[] } {
  const held = heldIds(text, path);
  const fresh = items.filter((i) => !held.has(i.id));
  if (fresh.length === 0) return { edit: null, added: [] };
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  const ignored: InputError[] = [];
  const fm = readFrontMatter(text, '', ignored);
  const headings: Heading[] = [];
  const scanned = scanItems(fm.bodyLines, fm.bodyStartLine, headings);
  const rawLines = text.split('\n');
  const lineCount = splitLines(text).length;
  const block = fresh.flatMap((i) => i.lines);
  const heading = headings.find((h) => h.title.toLowerCase() === TRACKER_HEADING.toLowerCase());
  let after: number;
  let prefix: string[];
  if (heading !== undefined) {
    const next = headings.find((h) => h.line > heading.line && h.level <= heading.level);
    const inSection = scanned.filter((i) => i.line > heading.line && (next === undefined || i.line < next.line));
    const last = inSection.at(-1);
    after =
      last === undefined
        ? heading.line
        : Math.max(last.line, ...last.body.filter((b) => b.text.trim() !== '').map((b) => b.line));
    prefix = last === undefined ? [''] : [];
  } else {
    after = lineCount;
    while (after > 0 && (rawLines[after - 1] ?? '').trim() === '') after--;
    prefix = after === 0 ? [`## ${TRACKER_HEADING}`, ''] : ['', `## ${TRACKER_HEADING}`, ''];
  }
  const lines = [...prefix, ...block];
  const added = fresh.map((i) => i.id);
  if (after >= lineCount && !text.endsWith('\n') && text !== '') {
    // At the end of a file whose last line lacks a terminator.
    const last = rawLines[lineCount - 1] ?? '';
    const col = Buffer.byteLength(lineCount === 1 ? last.replace(/^\uFEFF/, '') : last, 'utf8');
    return { edit: { line: lineCount, col, remove: 0, insert: eol + lines.join(eol) + eol }, added };
  }
  return { edit: { line: after + 1, col: 0, remove: 0, insert: lines.join(eol) + eol }, added };
}

/** Adds the items the file does not hold yet under `## Tracker` (created at the end when missing); returns their ids. */
export function addTrackerItems(file: BacklogFile, items: readonly NewItem[]): Promise<string[]> {
  return edit(
    file,
    (text) => {
      const plan = planInsertion(text, items, file.path);
      return { edits: plan.edit === null ? [] : [plan.edit], result: plan.added };
    },
    {},
  );
}
