/**
 * A decomposition: the parts a `split: auto` task's explorer may answer with instead of a plan, and how
 * they become BACKLOG.md items under the task.
 *
 * The explorer's answer is agent text: every part is checked before anything is written. Invariants:
 * - a title is one line of at most {@link MAX_TITLE} visible characters with no `<`, `>` or backtick, so
 *   it can neither open an HTML comment that would hide the rest of BACKLOG.md nor start a code fence;
 * - a planned file is a relative path of plain characters inside the repository; the paths are written as
 *   prose (`Planned files: …`), never as the `files:` key, which would lift the guard's protected paths —
 *   an agent never grants itself that;
 * - `after` names earlier parts only, so the parts' order has no cycle;
 * - any problem rejects the whole decomposition (the answer is then taken as an ordinary plan).
 */
import { oneLine } from '../../domain/sanitize.js';
import { overlapping } from './plan-files.js';

export const MAX_PARTS = 12;
export const MAX_TITLE = 120;
const MAX_FILES = 50;
const PATH_RE = /^(?!\/)(?!.*(?:^|\/)\.\.(?:\/|$))[A-Za-z0-9._@+\-/]+$/;
const PARTS_BLOCK = /```parts[ \t]*\r?\n([\s\S]*?)```/g;

/** One part as the explorer planned it; `after` holds 0-based indexes of earlier parts. */
export interface PlannedPart {
  title: string;
  files: string[];
  after: number[];
}

/** The instruction the explorer of a `split: auto` task gets, after the plan's own. */
export const PARTS_INSTRUCTION = `This task may be split into parts. If it is too large for one attempt, answer instead with a fenced code block tagged \`parts\` holding a JSON array of 2 to ${MAX_PARTS} parts, each {"title": "what the part does, one line", "files": ["every file it will change"], "after": [numbers of earlier parts (1 is the first) it must land after]}. Parts that change the same file are run one after the other, in the order you list them; the others run at once. The task is done when every part has landed and its check passes. If the task fits in one attempt, write a plan as usual.`;

/**
 * The parts of the last `parts` block of `plan`: null when there is none, a problem when it does not hold a
 * valid decomposition.
 */
export function plannedParts(plan: string): { parts: PlannedPart[] } | { problem: string } | null {
  const block = [...plan.matchAll(PARTS_BLOCK)].at(-1);
  if (block === undefined) return null;
  let data: unknown;
  try {
    data = JSON.parse(block[1]!);
  } catch {
    return { problem: 'the parts block is not JSON' };
  }
  if (!Array.isArray(data) || data.length < 2 || data.length > MAX_PARTS)
    return { problem: `the parts block must be a list of 2 to ${MAX_PARTS} parts` };
  const parts: PlannedPart[] = [];
  for (const [i, raw] of data.entries()) {
    const n = i + 1;
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return { problem: `part ${n} is not an object` };
    const { title, files, after } = raw as Record<string, unknown>;
    if (typeof title !== 'string') return { problem: `part ${n} has no title` };
    const clean = oneLine(title).trim();
    if (clean === '' || clean.length > MAX_TITLE || /[<>`]/.test(clean))
      return { problem: `part ${n}'s title must be one line of 1 to ${MAX_TITLE} characters without < > or \`` };
    if (!Array.isArray(files) || files.length === 0 || files.length > MAX_FILES)
      return { problem: `part ${n} must list 1 to ${MAX_FILES} files` };
    const paths = files.map((f) => (typeof f === 'string' ? f.trim().replace(/^\.\//, '') : ''));
    const bad = paths.find((p) => !PATH_RE.test(p));
    if (bad !== undefined) return { problem: `part ${n} names '${oneLine(bad)}', not a path inside the repository` };
    const deps = after === undefined ? [] : after;
    if (!Array.isArray(deps) || !deps.every((d) => Number.isInteger(d) && d >= 1 && d < n))
      return { problem: `part ${n}'s after must name earlier parts by number` };
    parts.push({ title: clean, files: [...new Set(paths)], after: [...new Set(deps as number[])].map((d) => d - 1) });
  }
  return { parts };
}

/**
 * The landing order: each part lands after the parts it names and after every earlier part whose files it
 * shares, so that overlapping parts implement one on top of the other and the disjoint ones run at once.
 * Returns, per part, the 0-based indexes it waits for, ascending.
 */
export function landingOrder(parts: readonly PlannedPart[]): number[][] {
  return parts.map((part, j) => {
    const waits = new Set(part.after);
    for (let i = 0; i < j; i++) if (overlapping(part.files, parts[i]!.files).length > 0) waits.add(i);
    return [...waits].sort((a, b) => a - b);
  });
}

/** The BACKLOG.md lines of the parts of task `parent`, given their ids: items right under the task's own. */
export function partLines(parent: string, ids: readonly string[], parts: readonly PlannedPart[]): string {
  const order = landingOrder(parts);
  return parts
    .map((part, j) => {
      const lines = [`- [ ] ${ids[j]} ${part.title}`];
      if (order[j]!.length > 0) lines.push(`  after: ${order[j]!.map((i) => ids[i]).join(', ')}`);
      lines.push(`  Part of ${parent}. Planned files: ${part.files.join(', ')}`);
      return lines.join('\n');
    })
    .join('\n');
}
