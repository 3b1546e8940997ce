/**
 * `check:` as one command or as a list of named checks, in the front matter and in a task's indented keys.
 *
 *   check: npm test
 *   check: [npm test, npm run lint, tsc --noEmit]
 *   check:
 *     - npm test
 *     - { name: lint, run: npm run lint, required: false }
 *
 * Invariants: a list has at least one entry, every entry a non-empty `run`, names are unique, at least one
 * entry is required; an entry's name defaults to its command and `required` to true.
 */
import { isMap, isScalar, isSeq, parseDocument, type Node } from 'yaml';
import type { CheckSpec } from '../../domain/types.js';
import { didYouMean } from './closest.js';

const ENTRY_KEYS = ['name', 'run', 'required'] as const;

export interface ReadChecks {
  /** the single-string form every reader of `check` understands: the required commands joined with ` && ` */
  check: string | null;
  /** set for a list only */
  checks?: CheckSpec[];
}

/** Problems are reported through `error(node, text)`; undefined when the value is unusable. */
export function checksFromNode(
  node: Node | null,
  error: (at: Node | null, problem: string) => void,
  at: Node,
): ReadChecks | undefined {
  if (node === null || (isScalar(node) && (node.value === null || String(node.value).trim() === '')))
    return { check: null };
  if (isScalar(node)) return { check: String(node.source ?? node.value).trim() };
  if (!isSeq(node)) {
    error(at, 'check must be a command or a list of commands, e.g. check: [npm test, npm run lint]');
    return undefined;
  }
  const checks: CheckSpec[] = [];
  let ok = true;
  for (const item of node.items as Node[]) {
    const spec = entry(item, (problem) => {
      ok = false;
      error(item ?? at, problem);
    });
    if (spec !== undefined) checks.push(spec);
  }
  if (!ok) return undefined;
  const problem = listProblem(checks);
  if (problem !== null) {
    error(at, problem);
    return undefined;
  }
  return { check: joined(checks), checks };
}

function entry(item: Node | null, fail: (problem: string) => void): CheckSpec | undefined {
  if (isScalar(item)) {
    const run = item.value === null ? '' : String(item.source ?? item.value).trim();
    if (run === '') return void fail('check: an entry of the list is empty');
    return { name: run, run, required: true };
  }
  if (!isMap(item)) return void fail('check: each entry is a command or a mapping { name, run, required }');
  const got: { name?: string; run?: string; required?: boolean } = {};
  for (const pair of item.items) {
    const key = isScalar(pair.key) ? String(pair.key.value) : '?';
    const value = pair.value as Node | null;
    if (!(ENTRY_KEYS as readonly string[]).includes(key))
      return void fail(
        `check: unknown key '${key}' in an entry${didYouMean(key, ENTRY_KEYS)}; known: ${ENTRY_KEYS.join(', ')}`,
      );
    if (!isScalar(value)) return void fail(`check: ${key} must be a single value`);
    if (key === 'required') {
      if (typeof value.value !== 'boolean')
        return void fail(`check: required must be true or false, got '${String(value.value)}'`);
      got.required = value.value;
    } else {
      const text = value.value === null ? '' : String(value.source ?? value.value).trim();
      if (text === '') return void fail(`check: ${key} needs a value`);
      got[key as 'name' | 'run'] = text;
    }
  }
  if (got.run === undefined)
    return void fail(`check: the entry${got.name === undefined ? '' : ` '${got.name}'`} needs run: <command>`);
  return { name: got.name ?? got.run, run: got.run, required: got.required ?? true };
}

function listProblem(checks: CheckSpec[]): string | null {
  if (checks.length === 0) return 'check: the list is empty (leave check: out for no check)';
  const seen = new Set<string>();
  for (const c of checks) {
    if (seen.has(c.name)) return `check: two checks are named '${c.name}'`;
    seen.add(c.name);
  }
  if (!checks.some((c) => c.required))
    return 'check: every check is required: false, so none would decide the task; make one required';
  return null;
}

function joined(checks: CheckSpec[]): string {
  return checks
    .filter((c) => c.required)
    .map((c) => c.run)
    .join(' && ');
}

/**
 * A task's `check:` value. A YAML flow list (`[npm test, npm run lint]`) is a list of checks; the shell's own
 * `[ -f done.txt ]` stays a command: a value is read as a list only when it starts with `[` directly followed
 * by a non-space, or when, read as YAML, it has more than one entry or a `{ … }` entry.
 */
export function checksFromText(value: string): { value: ReadChecks } | { problem: string } {
  const text = value.trim();
  const invalid = {
    problem: `check: '${text}' is not a valid list; write [cmd, cmd] or { name, run, required } entries`,
  };
  if (!text.startsWith('[')) return { value: { check: text } };
  if (!text.endsWith(']')) return /^\[\S/.test(text) ? invalid : { value: { check: text } };
  const doc = parseDocument(text);
  const seq = doc.errors.length === 0 && isSeq(doc.contents) ? doc.contents : null;
  const listy = seq !== null && (/^\[\S/.test(text) || seq.items.length !== 1 || isMap(seq.items[0]));
  if (!listy) {
    if (/^\[\S/.test(text)) return invalid;
    return { value: { check: text } };
  }
  let problem: string | null = null;
  const read = checksFromNode(seq as Node, (_at, p) => (problem ??= p), seq as Node);
  return read === undefined ? { problem: problem ?? 'check: not a valid list' } : { value: read };
}
