import { oneLine, visible } from '../../../domain/sanitize.js';

/**
 * Untrusted text (an agent's plan, reasons, file names, test names, check output; an issue's title) on its
 * way into a pull request's title, body or comment, where the forge acts on what it reads.
 *
 * Invariants of every string these functions return:
 * - it holds nothing the one sanitiser would not let through ({@link visible} and {@link oneLine} run first);
 * - no ASCII `#`, `@`, `!` before a digit or `://`: so no issue or pull request reference (`#12`,
 *   `owner/repo#12`, GitLab's `!12`), no closing keyword that closes anything (`Fixes #999`, `Fixes
 *   https://…/issues/999`), no mention that pings a person or team (`@octocat`, `@org/team`), no autolink.
 *   Each is replaced by its full-width twin (`＃`, `＠`, `！`, `：//`), which reads the same to a person;
 * - no line starts with `/`, so no GitLab quick action (`/merge`, `/close`) and no `/loopfleet` command of
 *   loopfleet's own runs from it;
 * - a one-line field (`inertLine`) has every Markdown and HTML metacharacter escaped, so it renders as the
 *   text it is; a block (`inertBlock`) sits in a fence longer than any backtick run inside it.
 */

const REFS = /[#@]|!(?=\d)|:\/\//g;
const FULL_WIDTH: Readonly<Record<string, string>> = { '#': '＃', '@': '＠', '!': '！', '://': '：//' };

/** `text` with references, mentions, autolinks and line-leading slashes turned into look-alikes (see above). */
export function neutralise(text: string): string {
  return text.replace(REFS, (m) => FULL_WIDTH[m] ?? m).replace(/^(\s*)\//gm, '$1／');
}

const MARKDOWN = /[\\`*_{}[\]()<>|~&]/g;

/** One line of untrusted text for Markdown: sanitised, neutralised, every metacharacter escaped. */
export function inertLine(text: string): string {
  return neutralise(oneLine(text).trim()).replace(MARKDOWN, (c) =>
    c === '&' ? '&amp;' : c === '<' ? '&lt;' : c === '>' ? '&gt;' : `\\${c}`,
  );
}

/** Untrusted multi-line text as a fenced block it cannot close: sanitised, neutralised. */
export function inertBlock(text: string): string[] {
  const safe = neutralise(visible(text.replace(/\r\n?/g, '\n')).trimEnd());
  const longest = Math.max(0, ...[...safe.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = '`'.repeat(Math.max(3, longest + 1));
  return [`${fence}text`, safe, fence];
}

export function firstLines(text: string, n: number): string {
  const lines = text.trim().split('\n');
  return lines.slice(0, n).join('\n') + (lines.length > n ? '\n…' : '');
}

export function lastLines(text: string, n: number): string {
  const lines = text.trimEnd().split('\n');
  return (lines.length > n ? '…\n' : '') + lines.slice(-n).join('\n');
}
