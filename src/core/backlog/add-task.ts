/**
 * One new task added to BACKLOG.md the way a person writes it: `- [ ] T-<n> Title`, then its `key: value`
 * lines and its description, indented, after the last item that runs.
 *
 * Invariants:
 * - only lines are added: every byte of the file as it was is kept (the write-back's {@link edit});
 * - the id is the next free `T-<n>` as the parser assigns it ({@link parseBacklog}, with the ids state
 *   remembers), written on the item, so nothing else has to write it back later;
 * - the file with the item added is parsed before anything is written: a problem the parser finds is
 *   thrown in its own words, and so is a task that would not read back exactly as given (a title that
 *   opens an HTML comment, a description line that reads as a key, a fence left open that would swallow
 *   the items after it) — nothing is written then;
 * - the new task is never a proposal under `## Discovered`, and no task already in the file changes.
 */
import { UsageError } from '../../domain/errors.js';
import type { TaskSpec } from '../../domain/types.js';
import { didYouMean } from './closest.js';
import { readFrontMatter, splitLines } from './front-matter.js';
import { inDiscovered, parseBacklog, TASK_KEYS } from './parse.js';
import { scanItems, type Heading } from './scan.js';
import type { Edit } from './write-back.js';

export interface NewTask {
  title: string;
  description?: string;
  /** task keys (`check`, `attempts`, `after`, …) and their values, as they would be written after `key: ` */
  keys?: Readonly<Record<string, string>>;
}

export interface PlannedTask {
  id: string;
  /** the task as the parser reads it from the file with the item added */
  spec: TaskSpec;
  /** the lines to insert */
  edit: Edit;
}

/** C0 controls (tab allowed where said), DEL, C1 controls, bidi controls and line/paragraph separators. */
const CONTROL = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/;
const CONTROL_OR_TAB = new RegExp(`[\t${CONTROL.source.slice(1)}`);
const FIELD_LINE = new RegExp(`^[ \\t]*(${TASK_KEYS.join('|')}):`);

function codeOf(ch: string): string {
  return `U+${ch.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`;
}

/** The problems of the input itself, before any file is read: the words name the field. */
function inputProblems(task: NewTask): string[] {
  const problems: string[] = [];
  const title = task.title.trim();
  if (title === '') problems.push('title: write what to do');
  const bad = CONTROL_OR_TAB.exec(task.title);
  if (bad !== null)
    problems.push(`title: holds a control character (${codeOf(bad[0])}); a title is one line of plain text`);
  for (const [key, value] of Object.entries(task.keys ?? {})) {
    if (!(TASK_KEYS as readonly string[]).includes(key)) {
      problems.push(
        `keys: '${key}' is not a task key${didYouMean(key, TASK_KEYS)} (task keys: ${TASK_KEYS.join(', ')})`,
      );
      continue;
    }
    const c = CONTROL_OR_TAB.exec(value);
    if (c !== null) problems.push(`keys.${key}: holds a control character (${codeOf(c[0])}); a value is one line`);
  }
  const lines = (task.description ?? '').replace(/\r\n/g, '\n').split('\n');
  lines.forEach((line, i) => {
    const c = CONTROL.exec(line);
    if (c !== null) problems.push(`description line ${i + 1}: holds a control character (${codeOf(c[0])})`);
    const field = FIELD_LINE.exec(line);
    if (field !== null)
      problems.push(
        `description line ${i + 1}: starts with \`${field[1]}:\`, which BACKLOG.md reads as a task key: pass it in keys, or reword the line`,
      );
  });
  return problems;
}

/** The description as the parser gives it back: lines trimmed at the end, common indent and edge blank lines dropped. */
function asParsed(description: string): string {
  const lines = description
    .replace(/\r\n/g, '\n')
    .split('\n')
    .map((l) => l.trimEnd());
  const indents = lines.filter((l) => l.trim() !== '').map((l) => /^[ \t]*/.exec(l)![0].length);
  const cut = indents.length > 0 ? Math.min(...indents) : 0;
  return lines
    .map((l) => l.slice(Math.min(cut, /^[ \t]*/.exec(l)![0].length)))
    .join('\n')
    .replace(/^\n+|\s+$/g, '');
}

/** The item's lines, without terminators. */
function itemLines(id: string | null, task: NewTask): string[] {
  const lines = [`- [ ] ${id === null ? '' : `${id} `}${task.title.trim()}`];
  for (const [key, value] of Object.entries(task.keys ?? {})) lines.push(`  ${key}: ${value.trim()}`);
  const description = asParsed(task.description ?? '');
  if (description !== '') for (const l of description.split('\n')) lines.push(l === '' ? '' : `  ${l}`);
  return lines;
}

/** Where the item goes: after the last item that is not a proposal, else before `## Discovered`, else at the end. */
function insertion(text: string, lines: string[]): Edit {
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  const fm = readFrontMatter(text, '', []);
  const headings: Heading[] = [];
  const items = scanItems(fm.bodyLines, fm.bodyStartLine, headings);
  const last = items.filter((i) => !inDiscovered(i.section)).at(-1);
  const lineCount = splitLines(text).length;
  let before: number;
  if (last !== undefined) {
    before = Math.max(last.line, ...last.body.filter((b) => b.text.trim() !== '').map((b) => b.line)) + 1;
  } else {
    const discovered = headings.find((h) => inDiscovered([h]));
    if (discovered !== undefined)
      return { line: discovered.line, col: 0, remove: 0, insert: [...lines, ''].join(eol) + eol };
    before = lineCount + 1;
  }
  if (before > lineCount && text !== '' && !text.endsWith('\n')) {
    // After a last line that has no terminator.
    const raw = text.split('\n')[lineCount - 1] ?? '';
    const col = Buffer.byteLength(lineCount === 1 ? raw.replace(/^\uFEFF/, '') : raw, 'utf8');
    return { line: lineCount, col, remove: 0, insert: eol + lines.join(eol) };
  }
  return { line: before, col: 0, remove: 0, insert: lines.join(eol) + eol };
}

/** The text with `edit` applied (lines and columns as the write-back reads them). */
function applied(text: string, e: Edit): string {
  const buf = Buffer.from(text, 'utf8');
  let offset = buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf ? 3 : 0;
  for (let l = 1; l < e.line; l++) offset = buf.indexOf(0x0a, offset) + 1;
  const at = offset + e.col;
  return Buffer.concat([buf.subarray(0, at), Buffer.from(e.insert, 'utf8'), buf.subarray(at + e.remove)]).toString(
    'utf8',
  );
}

/**
 * What of a task must stay as it was when another is added: everything but its line, and its id when the
 * file does not write one (the parser numbers such items after the highest id, the new one's included).
 */
function sameTask(a: TaskSpec, b: TaskSpec, numbered: boolean): boolean {
  const plain = (t: TaskSpec) => JSON.stringify({ ...t, line: 0, id: numbered ? '' : t.id });
  return plain(a) === plain(b);
}

/**
 * Plans adding `task` to the backlog `text` (the file at `path`); `takenIds` are the ids state remembers.
 * Throws UsageError for bad input and InputErrors, in the parser's words, for a file that would not parse.
 */
export function planAddTask(text: string, path: string, task: NewTask, takenIds: Iterable<string> = []): PlannedTask {
  const problems = inputProblems(task);
  if (problems.length > 0) throw new UsageError(problems.join('\n'));
  const taken = [...takenIds];
  // As it is now: a file that does not parse is the person's to fix first, in the parser's words.
  const now = parseBacklog(text, path, { takenIds: taken });
  const before = now.backlog.tasks;
  const unnumbered = new Set(now.missingIds.map((m) => m.id));

  // The id the parser gives the item when it has none — the next free T-<n> — is the one written.
  const bare = insertion(text, itemLines(null, task));
  const numbered = parseBacklog(applied(text, bare), path, { takenIds: taken });
  const at = bare.line + (bare.col > 0 ? 1 : 0);
  const id = numbered.missingIds.find((m) => m.line === at)?.id;
  if (id === undefined) throw new UsageError(`${path}: the new task would not read back as an item at line ${at}`);

  const edit = insertion(text, itemLines(id, task));
  const after = parseBacklog(applied(text, edit), path, { takenIds: taken });
  const spec = after.backlog.tasks.find((t) => t.id === id);
  const expected = { title: task.title.trim(), description: asParsed(task.description ?? '') };
  if (
    spec === undefined ||
    spec.line !== at ||
    spec.title !== expected.title ||
    spec.description !== expected.description
  )
    throw new UsageError(
      `${path}: the new task would not read back as given (title ${JSON.stringify(spec?.title ?? null)}, description ${JSON.stringify(spec?.description ?? null)}): check the title and description for HTML comments or code fences`,
    );
  if (spec.discovered === true) throw new UsageError(`${path}: the new task would land under ## Discovered`);
  const others = after.backlog.tasks.filter((t) => t.id !== id);
  if (others.length !== before.length || others.some((t, i) => !sameTask(t, before[i]!, unnumbered.has(before[i]!.id))))
    throw new UsageError(
      `${path}: adding the task would change the tasks after it: check the description for code fences`,
    );
  return { id, spec, edit };
}
