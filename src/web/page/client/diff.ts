/**
 * A unified diff as the page shows it: one fold per file (a `<details>`
 * element, open), each line a text node in a span whose class colours it — added, removed, hunk header,
 * file header — and nothing else read from the text. No highlighting library: the diff's own line marks
 * are the syntax.
 */
export const DIFF_JS = String.raw`
import { clean, el } from './dom.js';

const MAX_LINES_PER_FILE = 4000;

/** The files of a unified diff: name, lines and counts of added and removed lines. */
export function parseDiff(text) {
  const files = [];
  let file = null;
  const lines = clean(text).split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  for (const raw of lines) {
    if (raw.startsWith('diff --git ')) {
      const m = /^diff --git a\/(.*) b\/(.*)$/.exec(raw);
      file = { name: m ? m[2] : raw.slice(11), lines: [], added: 0, removed: 0 };
      files.push(file);
    } else if (file === null) {
      if (raw === '') continue;
      file = { name: '(diff)', lines: [], added: 0, removed: 0 };
      files.push(file);
    }
    let kind = 'ctx';
    if (raw.startsWith('+++') || raw.startsWith('---') || raw.startsWith('diff --git') || raw.startsWith('index ') || raw.startsWith('new file') || raw.startsWith('deleted file') || raw.startsWith('similarity') || raw.startsWith('rename ')) kind = 'meta';
    else if (raw.startsWith('@@')) kind = 'hunk';
    else if (raw.startsWith('+')) {
      kind = 'add';
      file.added++;
    } else if (raw.startsWith('-')) {
      kind = 'del';
      file.removed++;
    }
    file.lines.push({ kind, text: raw });
  }
  return files;
}

/** The diff as folds, one per file. */
export function renderDiff(text) {
  const box = el('div', 'diff');
  const files = parseDiff(text);
  if (files.length === 0) {
    box.append(el('p', 'empty', 'no changes against base'));
    return box;
  }
  for (const f of files) {
    const fold = el('details', 'diff-file');
    fold.open = true;
    const head = el('summary', 'diff-name');
    head.append(el('span', 'path', f.name), el('span', 'add', ' +' + f.added), el('span', 'del', ' \u2212' + f.removed));
    const pre = el('pre', 'diff-body');
    const shown = f.lines.slice(0, MAX_LINES_PER_FILE);
    for (const l of shown) {
      const span = el('span', 'dl ' + l.kind);
      span.append(document.createTextNode(l.text + '\n'));
      pre.append(span);
    }
    if (f.lines.length > shown.length) pre.append(el('span', 'dl meta', '\u2026 ' + (f.lines.length - shown.length) + ' more lines'));
    fold.append(head, pre);
    box.append(fold);
  }
  return box;
}
`;
