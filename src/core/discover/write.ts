/**
 * Writing proposals into BACKLOG.md under `## Discovered`.
 *
 * Invariants:
 * - only lines are added: nothing of the file is changed or removed, a person's items least of all;
 * - the file is re-read right before writing and deduplicated against that content (the write-back's {@link edit}),
 *   so an edit a person saves meanwhile is kept and a proposal they added by hand meanwhile is not doubled;
 * - text from outside the backlog is written inside a fence longer than any backtick run in it, and titles
 *   are one line, so nothing found can become a field (`check:`), an item or a heading;
 * - nothing written holds an escape sequence, a C0/C1 control or a bidi override (the one sanitiser).
 */
import type { InputError } from '../../domain/errors.js';
import { DISCOVERED_HEADING, inDiscovered, parseBacklog } from '../backlog/parse.js';
import { readFrontMatter, splitLines } from '../backlog/front-matter.js';
import { scanItems, type Heading } from '../backlog/scan.js';
import { edit, type Edit, type WriteBackOptions } from '../backlog/write-back.js';
import type { BacklogFile } from '../../ports/files.js';
import { knownItems, splitNew, type Proposal } from './proposal.js';
import { oneLine, visible } from '../../domain/sanitize.js';

/**
 * Text for a line outside the fence: a one-line field of the one sanitiser (no line break, escape
 * sequence, C0/C1 or bidi control), and no HTML comment markers.
 */
function single(text: string): string {
  return oneLine(text).replace(/<!--|-->/g, ' ');
}

/** The Markdown of one proposal, as lines without terminators. */
export function renderProposal(p: Proposal): string[] {
  const lines = [`- [ ] ${single(p.title)}`, `  source: ${single(p.source)}`, `  priority: ${p.priority}`];
  if (p.check !== undefined) lines.push(`  check: ${single(p.check)}`);
  for (const s of p.summary) lines.push(`  ${single(s)}`);
  // Quoted TODO comments and issue bodies are third-party text: the sanitiser's multi-line form.
  const quoted = p.quoted === undefined ? undefined : visible(p.quoted);
  if (quoted !== undefined && quoted.trim() !== '') {
    const longest = Math.max(0, ...[...quoted.matchAll(/`+/g)].map((m) => m[0].length));
    const fence = '`'.repeat(Math.max(3, longest + 1));
    lines.push(`  ${fence}text`);
    for (const q of quoted.split('\n')) lines.push(q === '' ? '' : `  ${q.replace(/\t/g, '    ')}`);
    lines.push(`  ${fence}`);
  }
  return lines;
}

interface Insertion {
  edit: Edit;
  added: Proposal[];
}

/**
 * Where and what to insert into `text` for the proposals it does not have yet, at most `limit` of them in
 * the order given. All findings are passed, not only those to add: which TODO an item stands for depends
 * on every TODO found (see splitNew).
 */
export function planInsertion(text: string, proposals: readonly Proposal[], limit: number | null = null): Insertion {
  const known = knownItems(parseBacklog(text, 'BACKLOG.md').backlog.tasks);
  const all = splitNew(proposals, known).fresh;
  const fresh = limit === null ? all : all.slice(0, limit);
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  const ignored: InputError[] = [];
  const fm = readFrontMatter(text, '', ignored);
  const headings: Heading[] = [];
  const items = scanItems(fm.bodyLines, fm.bodyStartLine, headings);
  const rawLines = text.split('\n');
  const lineCount = splitLines(text).length;
  const block = fresh.flatMap(renderProposal);
  if (fresh.length === 0) return { edit: { line: 1, col: 0, remove: 0, insert: '' }, added: [] };

  const heading = headings.find((h) => inDiscovered([h]));
  // The end of the section: the last line of its last item, or the heading itself.
  let after: number;
  let prefix: string[];
  if (heading !== undefined) {
    const next = headings.find((h) => h.line > heading.line && h.level <= heading.level);
    const inSection = items.filter((i) => i.line > heading.line && (next === undefined || i.line < next.line));
    const last = inSection.at(-1);
    after =
      last === undefined
        ? heading.line
        : Math.max(last.line, ...last.body.filter((b) => b.text.trim() !== '').map((b) => b.line));
    prefix = last === undefined ? [''] : [];
  } else {
    after = lineCount;
    while (after > 0 && (rawLines[after - 1] ?? '').trim() === '') after--;
    prefix = after === 0 ? [`## ${DISCOVERED_HEADING}`, ''] : ['', `## ${DISCOVERED_HEADING}`, ''];
  }
  const lines = [...prefix, ...block];
  if (heading === undefined || after >= lineCount) {
    // At the end of the file: after its last line, which may lack a terminator.
    if (after >= lineCount && !text.endsWith('\n') && text !== '') {
      const last = rawLines[lineCount - 1] ?? '';
      const col = Buffer.byteLength(lineCount === 1 ? last.replace(/^\uFEFF/, '') : last, 'utf8');
      return { edit: { line: lineCount, col, remove: 0, insert: eol + lines.join(eol) + eol }, added: fresh };
    }
  }
  return { edit: { line: after + 1, col: 0, remove: 0, insert: lines.join(eol) + eol }, added: fresh };
}

/**
 * Adds the proposals the file does not have yet (at most `limit`) under `## Discovered`, created at the end
 * when missing. Returns the proposals added, in order.
 */
export async function addProposals(
  file: BacklogFile,
  proposals: readonly Proposal[],
  limit: number | null = null,
  options: WriteBackOptions = {},
): Promise<Proposal[]> {
  return edit(
    file,
    (text) => {
      const plan = planInsertion(text, proposals, limit);
      return { edits: plan.added.length === 0 ? [] : [plan.edit], result: plan.added };
    },
    options,
  );
}
