/**
 * The BACKLOG.md that a merge commit carries: the committed version with loopfleet's own edits applied —
 * the ids it wrote into the working copy and the merged task's tick — and none of the person's
 * uncommitted edits, which stay uncommitted in their checkout.
 *
 * Invariant: the result differs from `committed` only by ids inserted after an item's checkbox and one
 * `[ ]` → `[x]`, so a person reading the merge commit sees exactly what loopfleet did.
 */
import type { InputError } from '../../domain/errors.js';
import { readFrontMatter } from './front-matter.js';
import { scanItems, type ScannedItem } from './scan.js';

function items(text: string): ScannedItem[] {
  const ignored: InputError[] = [];
  const fm = readFrontMatter(text, '', ignored);
  return scanItems(fm.bodyLines, fm.bodyStartLine).filter((i) => i.editable);
}

/** The scanner reads the text without a leading BOM; in the string it is one more character on line 1. */
function column(lines: readonly string[], line: number, col: number): number {
  return line === 1 && lines[0]?.startsWith('\uFEFF') ? col + 1 : col;
}

/**
 * `committed` with `id` ticked, and with the ids of the working copy's items written into the committed
 * items they were given to (same title, no id yet, nearest line). Null when `committed` has no item that
 * is, or becomes, `id`: then there is nothing to commit and only the working copy is ticked.
 */
export function committedTick(committed: string, working: string | null, id: string): string | null {
  const lines = committed.split('\n');
  const inCommitted = items(committed);
  const known = new Set(inCommitted.map((i) => i.id).filter((x): x is string => x !== null));
  const idOf = new Map<ScannedItem, string>();
  for (const w of working === null ? [] : items(working)) {
    if (w.id === null || known.has(w.id)) continue;
    const match = inCommitted
      .filter((c) => c.id === null && !idOf.has(c) && c.title === w.title)
      .sort((a, b) => Math.abs(a.line - w.line) - Math.abs(b.line - w.line))[0];
    if (match === undefined) continue;
    idOf.set(match, w.id);
    known.add(w.id);
  }
  const target = inCommitted.find((i) => (i.id ?? idOf.get(i)) === id);
  if (target === undefined) return null;
  // Edits right to left within a line, so earlier columns stay valid.
  for (const [item, newId] of idOf) {
    const at = column(lines, item.line, item.textCol);
    const text = lines[item.line - 1]!;
    lines[item.line - 1] = text.slice(0, at) + (item.spaced ? `${newId} ` : ` ${newId} `) + text.slice(at);
  }
  if (!target.done) {
    const at = column(lines, target.line, target.checkCol);
    const text = lines[target.line - 1]!;
    lines[target.line - 1] = `${text.slice(0, at)}x${text.slice(at + 1)}`;
  }
  return lines.join('\n');
}
