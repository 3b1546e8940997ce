/**
 * The only edits loopfleet makes to BACKLOG.md: adding missing ids, ticking merged items and writing a split
 * task's parts under it.
 *
 * Invariants:
 * - every byte outside the edit is kept (line endings, trailing newline, invalid UTF-8 elsewhere);
 * - the edit is applied to the file as it is on disk right before writing, locating the item by its
 *   content, never by a remembered offset, so a concurrent edit by a person is kept;
 * - the file is replaced atomically with its mode kept (BacklogFile.replace), and only over the bytes the
 *   edit was computed from: if a person saved meanwhile, the edit is redone on the new content.
 */
import type { BacklogFile } from '../../ports/files.js';
import type { InputError } from '../../domain/errors.js';
import { readFrontMatter } from './front-matter.js';
import type { MissingId } from './parse.js';
import { scanItems, type ScannedItem } from './scan.js';

export interface WriteBackOptions {
  /** told the content before and after each write loopfleet makes (see BacklogWatcher.expectWrite) */
  onWrite?: (before: string, after: string) => void;
}

/** A byte-level insertion or replacement at (line, column) of the current content. */
export interface Edit {
  line: number;
  col: number;
  remove: number;
  insert: string;
}

const MAX_TRIES = 5;

function itemsOf(text: string): ScannedItem[] {
  const ignored: InputError[] = [];
  const fm = readFrontMatter(text, '', ignored);
  return scanItems(fm.bodyLines, fm.bodyStartLine).filter((i) => i.editable);
}

/** Byte offset of the start of 1-based `line`, counting a leading BOM into line 1. */
function lineStart(buf: Buffer, line: number): number {
  let offset = buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf ? 3 : 0;
  for (let l = 1; l < line; l++) {
    const nl = buf.indexOf(0x0a, offset);
    if (nl < 0) return -1;
    offset = nl + 1;
  }
  return offset;
}

function applyEdits(buf: Buffer, edits: Edit[]): Buffer {
  const located = edits.map((e) => ({ ...e, at: lineStart(buf, e.line) + e.col })).sort((a, b) => b.at - a.at);
  let out = buf;
  for (const e of located) {
    out = Buffer.concat([out.subarray(0, e.at), Buffer.from(e.insert, 'utf8'), out.subarray(e.at + e.remove)]);
  }
  return out;
}

/**
 * Re-reads the file, asks `plan` for the edits to make on the fresh text, and writes them atomically over
 * exactly that text. Returns what `plan` returned for the content the edits were applied to.
 */
export async function edit<T>(
  file: BacklogFile,
  plan: (text: string) => { edits: Edit[]; result: T },
  options: WriteBackOptions,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const original = await file.read();
    const text = original.toString('utf8');
    const { edits, result } = plan(text);
    if (edits.length === 0) return result;
    const updated = applyEdits(original, edits);
    if (await file.replace(original, updated)) {
      options.onWrite?.(text, updated.toString('utf8'));
      return result;
    }
    if (attempt >= MAX_TRIES)
      throw new Error(`${file.path} kept changing while loopfleet tried to update it; try again`);
  }
}

/**
 * Marks the item with `id` as done (`[x]`). Returns false when no item has that id any more; true when it
 * is ticked now (or was already).
 */
export async function tickDone(file: BacklogFile, id: string, options: WriteBackOptions = {}): Promise<boolean> {
  // A backlog deleted or renamed away has no item to tick: the merge stands, the tick waits for the file.
  if ((await file.readIfPresent()) === null) return false;
  return edit(
    file,
    (text) => {
      const item = itemsOf(text).find((i) => i.id === id);
      if (!item) return { edits: [], result: false };
      if (item.done) return { edits: [], result: true };
      return { edits: [{ line: item.line, col: item.checkCol, remove: 1, insert: 'x' }], result: true };
    },
    options,
  );
}

/**
 * Writes each missing id in front of its item's title. An item is found again by its title among the items
 * that still have no id, nearest to the remembered line. An id is skipped when its item is gone or the id
 * is already used in the file. Returns the ids written.
 */
export async function addIds(
  file: BacklogFile,
  missing: readonly MissingId[],
  options: WriteBackOptions = {},
): Promise<string[]> {
  return edit(
    file,
    (text) => {
      const items = itemsOf(text);
      const used = new Set(items.map((i) => i.id).filter((id): id is string => id !== null));
      const taken = new Set<ScannedItem>();
      const edits: Edit[] = [];
      const written: string[] = [];
      for (const m of missing) {
        if (used.has(m.id)) continue;
        const candidates = items
          .filter((i) => i.id === null && !taken.has(i) && i.title === m.title)
          .sort((a, b) => Math.abs(a.line - m.line) - Math.abs(b.line - m.line));
        const item = candidates[0];
        if (!item) continue;
        taken.add(item);
        used.add(m.id);
        edits.push({ line: item.line, col: item.textCol, remove: 0, insert: item.spaced ? `${m.id} ` : ` ${m.id} ` });
        written.push(m.id);
      }
      return { edits, result: written };
    },
    options,
  );
}

/**
 * Writes `lines` (a split task's part items, `- [ ] T-7.1 …`) right after the item of `parent` and the
 * lines it owns. Returns false when the item is gone, or its parts are there already (nothing is written
 * twice).
 */
export async function addParts(
  file: BacklogFile,
  parent: string,
  lines: string,
  options: WriteBackOptions = {},
): Promise<boolean> {
  if ((await file.readIfPresent()) === null) return false;
  return edit(
    file,
    (text) => {
      const items = itemsOf(text);
      const index = items.findIndex((i) => i.id === parent);
      const item = items[index];
      if (item === undefined || items.some((i) => i.id?.startsWith(`${parent}.`))) return { edits: [], result: false };
      // After the item's last non-blank line: blank lines before the next item stay where they are.
      const last = [...item.body].reverse().find((b) => b.text.trim() !== '')?.line ?? item.line;
      const eol = text.includes('\r\n') ? '\r\n' : '\n';
      const insert = `${lines.split('\n').join(eol)}${eol}`;
      const endsWithoutNewline = !text.endsWith('\n') && last === text.split('\n').length;
      const edit: Edit = endsWithoutNewline
        ? {
            line: last,
            col: Buffer.byteLength(text.split('\n')[last - 1]!, 'utf8'),
            remove: 0,
            insert: `${eol}${insert.slice(0, -eol.length)}`,
          }
        : { line: last + 1, col: 0, remove: 0, insert };
      return { edits: [edit], result: true };
    },
    options,
  );
}
