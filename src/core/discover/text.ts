/** Text helpers shared by the finders. */
import { visible } from '../../domain/sanitize.js';

/** A one-line title: no line breaks, no HTML comment markers, bounded; sanitised before it is cut, so no cut falls inside a sequence. */
export function oneLine(text: string, max = 90): string {
  const t = visible(text.replace(/<!--|-->/g, ' ').replace(/\s+/g, ' '), { multiline: false }).trim();
  return t.length > max ? `${t.slice(0, max - 3).trimEnd()}...` : t;
}

/** The last `lines` lines of an output, without trailing blank lines; colour codes and other controls as the one sanitiser leaves them. */
export function outputTail(output: string, lines = 40): string {
  const all = visible(output).trimEnd().split('\n');
  return all.slice(-lines).join('\n');
}
