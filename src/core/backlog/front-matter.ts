/**
 * YAML front matter of a Markdown file (BACKLOG.md, agents/*.md): the lines between a first line `---`
 * and the next `---` line. Every position reported here is a 1-based line of the whole file.
 */
import { LineCounter, parseDocument, type Document, type Node } from 'yaml';
import { InputError } from '../../domain/errors.js';

export interface FrontMatter {
  /** the parsed document, or null when there is no front matter or its YAML is broken */
  doc: Document.Parsed | null;
  /** file line of a YAML node (its first character) */
  lineOf(node: Node | null | undefined): number;
  /** 1-based file line where the body starts (the line after the closing `---`, or 1) */
  bodyStartLine: number;
  /** the body's lines, without line terminators */
  bodyLines: string[];
  present: boolean;
}

/** Split a file into lines without their `\n` / `\r\n` terminators. A trailing newline adds no line. */
export function splitLines(text: string): string[] {
  const lines = text.split('\n').map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
  if (lines.length > 0 && lines[lines.length - 1] === '' && text.endsWith('\n')) lines.pop();
  return lines;
}

const FENCE_LINE = /^---[ \t]*$/;

/**
 * Reads the front matter of `text`. Problems (unterminated front matter, YAML syntax errors) are pushed to
 * `errors`; the body is still returned so that the rest of the file can be checked in the same pass.
 */
export function readFrontMatter(text: string, file: string, errors: InputError[]): FrontMatter {
  const lines = splitLines(text.startsWith('\uFEFF') ? text.slice(1) : text);
  const none = (bodyStartLine: number, bodyLines: string[], present: boolean): FrontMatter => ({
    doc: null,
    lineOf: () => 1,
    bodyStartLine,
    bodyLines,
    present,
  });
  if (lines.length === 0 || !FENCE_LINE.test(lines[0] ?? '')) return none(1, lines, false);

  const close = lines.findIndex((l, i) => i > 0 && FENCE_LINE.test(l));
  if (close < 0) {
    errors.push(new InputError(file, 1, "unterminated front matter: the '---' on line 1 has no closing '---' line"));
    return none(lines.length + 1, [], true);
  }

  const yamlText = lines.slice(1, close).join('\n');
  const counter = new LineCounter();
  const doc = parseDocument(yamlText, { lineCounter: counter, prettyErrors: false, uniqueKeys: true });
  // Front matter starts on file line 2, so YAML line n is file line n + 1.
  const lineAt = (offset: number): number => Math.max(1, counter.linePos(offset).line) + 1;
  const bodyStartLine = close + 2;
  const bodyLines = lines.slice(close + 1);

  if (doc.errors.length > 0) {
    const seen = new Set<number>();
    for (const e of doc.errors) {
      const line = lineAt(e.pos[0]);
      if (seen.has(line)) continue;
      seen.add(line);
      const detail = e.code === 'DUPLICATE_KEY' ? 'a key appears twice' : e.message.split('\n')[0];
      errors.push(new InputError(file, line, `front matter is not valid YAML: ${detail}`));
    }
    return none(bodyStartLine, bodyLines, true);
  }
  return {
    doc,
    lineOf: (node) => (node?.range ? lineAt(node.range[0]) : 2),
    bodyStartLine,
    bodyLines,
    present: true,
  };
}
