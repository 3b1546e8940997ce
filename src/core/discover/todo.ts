/**
 * TODO / FIXME / HACK / XXX comments, language-agnostic: the keyword must follow a comment marker
 * (`//`, `#`, `/*`, a leading `*`, `--`, `;`, `<!--`, `%`), in capitals, so prose and identifiers such as
 * `todoList` or a string "TODO" do not count.
 */
import type { Proposal } from './proposal.js';
import { oneLine } from './text.js';

export const TODO_KEYWORDS = ['TODO', 'FIXME', 'HACK', 'XXX'] as const;
export type TodoKeyword = (typeof TODO_KEYWORDS)[number];

/** Files larger than this are not read (generated or data files). */
export const MAX_TODO_FILE_BYTES = 512 * 1024;

/** Folders of someone else's code. */
const VENDORED =
  /(^|\/)(node_modules|vendor|vendors|third_party|third-party|bower_components|\.yarn|\.loop-worktrees|dist|build)\//;
const GENERATED = /\.(min\.js|min\.css|map|lock|svg)$|(^|\/)(package-lock\.json|yarn\.lock|pnpm-lock\.yaml)$/;

// The keyword, not one of a list of them (`TODO / FIXME`), then an optional `(who)` and `:`.
const KEYWORD = String.raw`(TODO|FIXME|HACK|XXX)\b(?!\s*[/,|])(?:\([^)]*\))?[ \t]*[:\-]?[ \t]*(.*)$`;
const COMMENT_TODO = new RegExp(String.raw`(?:^|[\s;{}(),])(\/\/+!?|#+!?|\/\*+!?|--|;+|<!--|%+)[ \t]*` + KEYWORD);
const STAR_TODO = new RegExp(String.raw`^[ \t]*\*+[ \t]*` + KEYWORD);

/** Definition lines, by language: the enclosing "function" of a comment is the nearest one of these. */
const DEFINITION = [
  /\bfunction\b[\s*]*[\w$]*\s*\(/, // JavaScript, TypeScript, PHP, Lua
  /^\s*(?:async\s+)?def\s+\w+/, // Python, Ruby
  /^\s*(?:export\s+)?(?:default\s+)?(?:abstract\s+)?(?:public\s+|private\s+|protected\s+|internal\s+)?(?:data\s+|sealed\s+)?(?:class|interface|struct|enum|trait|impl|module|object)\b/,
  /^\s*func\b/, // Go, Swift
  /^\s*(?:pub(?:\([\w:]+\))?\s+)?(?:async\s+)?(?:unsafe\s+)?fn\s+\w+/, // Rust
  /^\s*(?:export\s+)?(?:const|let|var)\s+[\w$]+\s*=\s*(?:async\s+)?(?:function\b|\([^)]*\)\s*(?::[^=]+)?=>|[\w$]+\s*=>)/, // arrow functions
  /^\s*(?:(?:public|private|protected|static|async|override|readonly|final|virtual|inline|abstract|get|set)\s+)*[#\w$<>[\],.*&:]+(?:\s+[\w$<>[\],.*&:]+)*\s*\([^;]*\)\s*(?::\s*[^{;=]+)?\s*\{\s*$/, // methods, C-like functions
  /^\s*(?:sub|proc|procedure|method)\s+\w+/i, // Perl, Tcl, Pascal
];
const NOT_DEFINITION = /^\s*(?:if|for|while|switch|catch|with|return|else|do|try|elif|except)\b/;

export interface TodoHit {
  keyword: TodoKeyword;
  /** 1-based line */
  line: number;
  /** the comment's text after the keyword, with its continuation lines */
  text: string;
  /** the nearest enclosing definition line, trimmed, or null at top level */
  enclosing: string | null;
}

/** Whether discover reads this tracked file at all. */
export function isScannable(path: string): boolean {
  return !VENDORED.test(path) && !GENERATED.test(path) && path !== 'BACKLOG.md';
}

/** Binary when a NUL byte is among the first 8000 bytes, as git decides. */
export function isBinary(bytes: Uint8Array): boolean {
  return bytes.subarray(0, 8000).includes(0);
}

function indentOf(line: string): number {
  return /^[ \t]*/.exec(line)![0].replace(/\t/g, '    ').length;
}

function clean(text: string): string {
  return text.replace(/\s*(\*\/|-->)\s*$/, '').trim();
}

/**
 * The nearest definition above `index` that encloses it: walking up, only lines indented less than what
 * is enclosed so far count, so a sibling function above is skipped.
 */
export function enclosingDefinition(lines: readonly string[], index: number): string | null {
  let limit = indentOf(lines[index] ?? '');
  for (let i = index - 1; i >= 0 && index - i <= 1000 && limit > 0; i--) {
    const line = lines[i]!;
    if (line.trim() === '') continue;
    const indent = indentOf(line);
    if (indent >= limit) continue;
    if (!NOT_DEFINITION.test(line) && DEFINITION.some((re) => re.test(line))) {
      const t = line.trim().replace(/\s*\{\s*$/, '');
      return t.length > 120 ? `${t.slice(0, 117)}...` : t;
    }
    limit = indent;
  }
  return null;
}

/** The comment marker that starts the line, when the line is only a comment. */
function commentMarker(line: string): string | null {
  const m = /^[ \t]*(\/\/+|#+|\*+|--|;+|%+)/.exec(line);
  return m ? m[1]! : null;
}

/** Whether `index` of `line` is inside a '…', "…" or `…` string that starts on the line. */
function inString(line: string, index: number): boolean {
  let quote: string | null = null;
  for (let i = 0; i < index; i++) {
    const c = line[i]!;
    if (quote !== null && c === '\\') i++;
    else if (quote !== null && c === quote) quote = null;
    else if (quote === null && (c === "'" || c === '"' || c === '`')) quote = c;
  }
  return quote !== null;
}

/** Prose formats: `#` is a heading and `*` a list there; only an HTML comment is a comment. */
const PROSE = /\.(md|markdown|mdx|rst|txt|adoc)$/i;
const HTML_TODO = new RegExp(String.raw`<!--[ \t]*` + KEYWORD);

/** The keyword and text of a TODO comment on `line`, or null. */
function todoOn(line: string, prose = false): { keyword: string; text: string } | null {
  if (prose) {
    const html = HTML_TODO.exec(line);
    return html ? { keyword: html[1]!, text: html[2] ?? '' } : null;
  }
  const star = STAR_TODO.exec(line);
  if (star) return { keyword: star[1]!, text: star[2] ?? '' };
  const m = COMMENT_TODO.exec(line);
  if (!m || inString(line, m.index + m[0].indexOf(m[1]!))) return null;
  return { keyword: m[2]!, text: m[3] ?? '' };
}

/** Every TODO-like comment of one file's text; `path` tells prose (Markdown, text) from code. */
export function findTodos(text: string, path = ''): TodoHit[] {
  const prose = PROSE.test(path);
  const lines = text.split(/\r?\n/);
  const hits: TodoHit[] = [];
  lines.forEach((line, i) => {
    const m = todoOn(line, prose);
    if (!m) return;
    const parts = [clean(m.text)];
    // Continuation: the following lines with the same marker and no keyword of their own, up to three.
    const marker = prose ? null : commentMarker(line);
    for (let j = i + 1; marker !== null && j < lines.length && j <= i + 3; j++) {
      const next = lines[j]!;
      if (commentMarker(next) !== marker || todoOn(next) !== null) break;
      const rest = clean(next.replace(/^[ \t]*(\/\/+|#+|\*+|--|;+|%+)/, ''));
      if (rest === '') break;
      parts.push(rest);
    }
    hits.push({
      keyword: m.keyword as TodoKeyword,
      line: i + 1,
      text: parts.filter((p) => p !== '').join(' '),
      enclosing: prose ? null : enclosingDefinition(lines, i),
    });
  });
  return hits;
}

export function todoProposal(path: string, hit: TodoHit): Proposal {
  const what = hit.text === '' ? `the ${hit.keyword} comment` : hit.text;
  const where = hit.enclosing === null ? 'at the top level' : `in \`${hit.enclosing.replace(/`/g, "'")}\``;
  return {
    from: 'todo',
    title: `${hit.keyword} in ${path}: ${oneLine(what)}`,
    source: `todo ${path}:${hit.line}`,
    priority: hit.keyword === 'FIXME' || hit.keyword === 'XXX' ? 'normal' : 'low',
    summary: [`A ${hit.keyword} comment at ${path}:${hit.line}, ${where}. Do what it asks and remove the comment.`],
    quoted: `${hit.keyword}: ${hit.text}`,
    comment: hit.text,
    rank: 4,
  };
}
