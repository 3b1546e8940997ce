/**
 * BACKLOG.md → Backlog. All problems of a file are collected and thrown together as one InputErrors, so a
 * person can fix them in one edit; nothing is returned for a file with any problem.
 */
import { InputError, InputErrors } from '../../domain/errors.js';
import { MAX_PARALLEL } from '../../domain/layout.js';
import {
  AUTONOMY_LEVELS,
  LAND_MODES,
  TASK_PRIORITIES,
  type Autonomy,
  type Backlog,
  type LandMode,
  type TaskPriority,
  type TaskSpec,
} from '../../domain/types.js';
import { parseDuration, parseInterval, parseSize, parseUsd, type Parsed } from '../text/parse-units.js';
import { checksFromText } from './check-list.js';
import { readConfig } from './config.js';
import { readFrontMatter, splitLines } from './front-matter.js';
import { canonicalId, parentOf, scanItems, TASK_ID_RE, type BodyLine, type ScannedItem } from './scan.js';

export { DEFAULT_CONFIG, DEFAULT_PROTECT, DEFAULT_MODEL, defaultConfig } from './config.js';
export { TASK_ID_RE } from './scan.js';

export const TASK_KEYS = [
  'check',
  'setup',
  'attempts',
  'tokens',
  'time',
  'cost',
  'model',
  'after',
  'files',
  'review',
  'prove',
  'source',
  'priority',
  'autonomy',
  'every',
  'land',
  'split',
  'parallel',
] as const;
type TaskKey = (typeof TASK_KEYS)[number];

/** An item that had no id and was given one; `title` locates it again when the id is written back. */
export interface MissingId {
  line: number;
  id: string;
  title: string;
}

export interface ParsedBacklog {
  backlog: Backlog;
  missingIds: MissingId[];
}

/** `source:` as discover writes it: `todo <path>:<line>`, `test <file or command>`, `lint <path>`, `dep <package>`, `gh#<n>`, Linear's `ENG-<n>`. */
export const SOURCE_RE = /^(?:todo .+:\d+|test .+|lint .+|dep \S+|gh#\d+|gl#\d+|[A-Z][A-Z0-9]*-\d+)$/;

/** Items under a heading with this title are proposals (see `discovered:`). */
export const DISCOVERED_HEADING = 'Discovered';

/** Whether an item under `section` (its headings, outermost first) is in a `## Discovered` section. */
export function inDiscovered(section: readonly { title: string }[]): boolean {
  return section.some((h) => h.title.toLowerCase() === DISCOVERED_HEADING.toLowerCase());
}

/** The tasks a fleet may run: without `discovered: run`, proposals under `## Discovered` are left out. */
export function runnableTasks(backlog: Backlog): TaskSpec[] {
  return backlog.config.discovered === 'run' ? backlog.tasks : backlog.tasks.filter((t) => t.discovered !== true);
}

const FIELD_RE = new RegExp(`^[ \\t]+(${TASK_KEYS.join('|')}):[ \\t]*(.*)$`);

interface Field {
  key: TaskKey;
  value: string;
  line: number;
}

function splitBody(body: BodyLine[]): { fields: Field[]; description: string } {
  const fields: Field[] = [];
  const prose: string[] = [];
  for (const b of body) {
    const m = b.verbatim ? null : FIELD_RE.exec(b.text);
    if (m) fields.push({ key: m[1] as TaskKey, value: (m[2] ?? '').trim(), line: b.line });
    else prose.push(b.text.trimEnd());
  }
  const indents = prose.filter((l) => l.trim() !== '').map((l) => /^[ \t]*/.exec(l)![0].length);
  const cut = indents.length > 0 ? Math.min(...indents) : 0;
  const description = prose.map((l) => l.slice(Math.min(cut, /^[ \t]*/.exec(l)![0].length))).join('\n');
  return { fields, description: description.replace(/^\n+|\s+$/g, '') };
}

/** Applies one `key: value` field to a task; returns a problem or null. */
function applyField(task: TaskSpec, f: Field): string | null {
  if (f.value === '') return `${f.key}: needs a value`;
  const positive = (p: Parsed<number>, set: (v: number) => void): string | null => {
    if (!p.ok) return `${f.key}: ${p.message}`;
    if (p.value <= 0) return `${f.key}: must be greater than zero`;
    set(p.value);
    return null;
  };
  switch (f.key) {
    case 'check': {
      const read = checksFromText(f.value);
      if ('problem' in read) return read.problem;
      if (read.value.check !== null) task.check = read.value.check;
      if (read.value.checks !== undefined) task.checks = read.value.checks;
      return null;
    }
    case 'setup':
    case 'model':
      task[f.key] = f.value;
      return null;
    case 'attempts':
      if (!/^\d+$/.test(f.value) || Number(f.value) < 1) {
        return `attempts: must be a positive whole number, got '${f.value}'`;
      }
      task.attempts = Number(f.value);
      return null;
    case 'parallel':
      if (!/^\d+$/.test(f.value) || Number(f.value) < 1 || Number(f.value) > MAX_PARALLEL) {
        return `parallel: must be a whole number from 1 to ${MAX_PARALLEL} (candidates per attempt round), got '${f.value}'`;
      }
      task.parallel = Number(f.value);
      return null;
    case 'tokens':
      return positive(parseSize(f.value), (v) => (task.tokens = v));
    case 'time':
      return positive(parseDuration(f.value), (v) => (task.timeMs = v));
    case 'cost':
      return positive(parseUsd(f.value), (v) => (task.costUsd = v));
    case 'after': {
      const ids = f.value.split(/[\s,]+/).filter((s) => s !== '');
      const bad = ids.filter((s) => !TASK_ID_RE.test(s));
      if (bad.length > 0) return `after: '${bad.join("', '")}' is not a task id (ids look like T-4)`;
      task.after = ids;
      return null;
    }
    case 'files': {
      const files = f.value
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== '');
      if (files.length === 0) return 'files: needs at least one path or glob';
      task.files = files;
      return null;
    }
    case 'review':
    case 'prove': {
      const v = f.value.toLowerCase();
      if (v !== 'true' && v !== 'false') return `${f.key}: must be true or false, got '${f.value}'`;
      task[f.key] = v === 'true';
      return null;
    }
    case 'source':
      if (!SOURCE_RE.test(f.value))
        return `source: '${f.value}' is not a source (todo <file>:<line>, test <file>, lint <file>, dep <package>, gh#<number>, gl#<number> or a Linear key such as ENG-12)`;
      task.source = f.value;
      return null;
    case 'every': {
      const p = parseInterval(f.value);
      if (!p.ok) return `every: ${p.message}`;
      task.everyMs = p.value;
      return null;
    }
    case 'priority': {
      const v = f.value.toLowerCase();
      if (!(TASK_PRIORITIES as readonly string[]).includes(v))
        return `priority: must be ${TASK_PRIORITIES.join(', ')}, got '${f.value}'`;
      task.priority = v as TaskPriority;
      return null;
    }
    case 'autonomy': {
      const v = f.value.toLowerCase();
      if (!(AUTONOMY_LEVELS as readonly string[]).includes(v))
        return `autonomy: must be ${AUTONOMY_LEVELS.join(', ')}, got '${f.value}'`;
      task.autonomy = v as Autonomy;
      return null;
    }
    case 'split': {
      if (f.value.toLowerCase() !== 'auto') return `split: must be auto, got '${f.value}'`;
      task.split = 'auto';
      return null;
    }
    case 'land': {
      const v = f.value.toLowerCase();
      if (!(LAND_MODES as readonly string[]).includes(v))
        return `land: must be ${LAND_MODES.join(' or ')}, got '${f.value}'`;
      task.land = v as LandMode;
      return null;
    }
  }
}

function toTask(item: ScannedItem, path: string, errors: InputError[]): { task: TaskSpec; afterLine: number } {
  const task: TaskSpec = {
    id: item.id ?? '',
    title: item.title,
    line: item.line,
    done: item.done,
    description: '',
    after: [],
    files: [],
  };
  if (inDiscovered(item.section)) task.discovered = true;
  if (item.title === '') {
    errors.push(
      new InputError(path, item.line, `task ${item.id ?? 'item'} has no title: write what to do after the checkbox`),
    );
  }
  const { fields, description } = splitBody(item.body);
  task.description = description;
  const seen = new Map<TaskKey, number>();
  let afterLine = item.line;
  for (const f of fields) {
    const first = seen.get(f.key);
    if (first !== undefined) {
      errors.push(new InputError(path, f.line, `${f.key}: set twice for this task (first on line ${first})`));
      continue;
    }
    seen.set(f.key, f.line);
    if (f.key === 'after') afterLine = f.line;
    const problem = applyField(task, f);
    if (problem) errors.push(new InputError(path, f.line, problem));
  }
  return { task, afterLine };
}

/** What a part (`T-7.1`) takes from its task when it does not say it itself. */
const INHERITED = [
  'check',
  'checks',
  'setup',
  'model',
  'attempts',
  'parallel',
  'tokens',
  'timeMs',
  'costUsd',
  'review',
  'prove',
  'autonomy',
  'land',
  'priority',
] as const satisfies ReadonlyArray<keyof TaskSpec>;

/**
 * Links each part (`T-7.1`) to its task (`T-7`) and gives it the task's keys it does not set; a part whose
 * task is not in the backlog, or that splits again, is an error at its line.
 */
function partsOf(tasks: TaskSpec[], path: string, errors: InputError[]): void {
  const byId = new Map(tasks.map((t) => [t.id, t] as const));
  for (const task of tasks) {
    const parentId = parentOf(task.id);
    if (parentId === null) continue;
    const parent = byId.get(parentId);
    if (parent === undefined) {
      errors.push(
        new InputError(
          path,
          task.line,
          `part ${task.id} names no task ${parentId} (a part's id is its task's id, a dot and a number)`,
        ),
      );
      continue;
    }
    if (task.split !== undefined) {
      errors.push(new InputError(path, task.line, `split: part ${task.id} cannot be split again`));
      continue;
    }
    inheritFromParent(task, parent);
  }
}

/** Makes `part` a part of `parent`: it takes the parent's keys it does not set itself. */
export function inheritFromParent(part: TaskSpec, parent: TaskSpec): void {
  part.parent = parent.id;
  const fill = part as unknown as Record<string, unknown>;
  for (const key of INHERITED) if (fill[key] === undefined && parent[key] !== undefined) fill[key] = parent[key];
}

/** Reports each `after:` cycle once, at the `after:` line of its first task in file order. */
function findCycles(tasks: TaskSpec[], afterLine: Map<TaskSpec, number>, path: string, errors: InputError[]): void {
  const byId = new Map(tasks.map((t) => [t.id, t] as const));
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const reported = new Set<string>();
  const visit = (id: string): void => {
    state.set(id, 'open');
    stack.push(id);
    for (const next of byId.get(id)?.after ?? []) {
      if (!byId.has(next)) continue;
      const s = state.get(next);
      if (s === 'open') {
        const cycle = stack.slice(stack.indexOf(next));
        const key = [...cycle].sort().join(' ');
        if (!reported.has(key)) {
          reported.add(key);
          const first = tasks.find((t) => cycle.includes(t.id))!;
          const start = cycle.indexOf(first.id);
          const chain = [...cycle.slice(start), ...cycle.slice(0, start), first.id];
          errors.push(
            new InputError(
              path,
              afterLine.get(first) ?? first.line,
              `after: cycle ${chain.join(' → ')}: these tasks wait for each other`,
            ),
          );
        }
      } else if (s === undefined) visit(next);
    }
    stack.pop();
    state.set(id, 'done');
  };
  for (const t of tasks) if (!state.has(t.id)) visit(t.id);
}

const BREAKS: Record<string, string> = {
  '\r': 'a lone carriage return (U+000D)',
  '\u2028': 'a line separator (U+2028)',
  '\u2029': 'a paragraph separator (U+2029)',
};

/**
 * A lone CR, U+2028 or U+2029 ends a line for JavaScript's `.` and `$` but not for the `\n` line splitter:
 * every pattern over such a line fails, and the line (a task among them) would vanish. Each is an error at
 * its own line instead. A CR before the `\n` (CRLF) is a line ending and stays allowed. Returns the text
 * with each such character read as a space, so that the rest of the parse reports only problems of its own.
 */
function breakCharacters(text: string, path: string, errors: InputError[]): string {
  splitLines(text).forEach((line, i) => {
    const found = /[\r\u2028\u2029]/.exec(line);
    if (found)
      errors.push(
        new InputError(path, i + 1, `line contains ${BREAKS[found[0]]}; replace it with a space or a real line break`),
      );
  });
  return text.replace(/\r(?!\n)|[\u2028\u2029]/g, ' ');
}

/**
 * Parses the text of a backlog file; `path` names it in problems. Items without an id get the next free
 * `T-<n>` here and are listed in `missingIds` for the write-back. Throws InputErrors listing every problem.
 * `takenIds` are ids used before (a task since removed from the file still has state and a branch): a new
 * id is never one of them, so it cannot inherit another task's history.
 */
export function parseBacklog(text: string, path: string, options: { takenIds?: Iterable<string> } = {}): ParsedBacklog {
  const errors: InputError[] = [];
  const fm = readFrontMatter(breakCharacters(text, path, errors), path, errors);
  const config = readConfig(fm, path, errors);

  const tasks: TaskSpec[] = [];
  const duplicates: TaskSpec[] = [];
  const afterLine = new Map<TaskSpec, number>();
  const firstLine = new Map<string, number>();
  /** canonical id → the id as first written, and its line (see {@link canonicalId}) */
  const firstOf = new Map<string, { id: string; line: number }>();
  for (const item of scanItems(fm.bodyLines, fm.bodyStartLine)) {
    const { task, afterLine: line } = toTask(item, path, errors);
    afterLine.set(task, line);
    const first = item.id === null ? undefined : firstOf.get(canonicalId(item.id));
    if (first !== undefined && item.id !== null) {
      errors.push(
        new InputError(
          path,
          item.line,
          first.id === item.id
            ? `duplicate task id ${item.id}: lines ${first.line} and ${item.line}`
            : `task id ${item.id} names the same task as ${first.id} on line ${first.line} (ids are compared by their number): give one of them another number`,
        ),
      );
      duplicates.push(task);
      continue;
    }
    if (item.id !== null) {
      firstLine.set(item.id, item.line);
      firstOf.set(canonicalId(item.id), { id: item.id, line: item.line });
    }
    tasks.push(task);
  }

  // New ids continue after the highest T number in the file, in file order: whole numbers of any size.
  let next = 1n;
  for (const id of [...firstLine.keys(), ...(options.takenIds ?? [])]) {
    const m = /^T-(\d+)$/.exec(id);
    if (m !== null && BigInt(m[1]!) >= next) next = BigInt(m[1]!) + 1n;
  }
  const missingIds: MissingId[] = [];
  for (const task of tasks) {
    if (task.id !== '') continue;
    task.id = `T-${next++}`;
    missingIds.push({ line: task.line, id: task.id, title: task.title });
  }

  const known = new Set(tasks.map((t) => t.id));
  partsOf(tasks, path, errors);
  for (const t of [...tasks, ...duplicates]) {
    for (const ref of t.after) {
      if (!known.has(ref)) {
        errors.push(new InputError(path, afterLine.get(t) ?? t.line, `after: ${ref} names no task in this backlog`));
      }
    }
  }
  findCycles(tasks, afterLine, path, errors);

  if (errors.length > 0) {
    errors.sort((a, b) => (a.line ?? 0) - (b.line ?? 0));
    throw new InputErrors(errors);
  }
  return { backlog: { path, config, tasks }, missingIds };
}
