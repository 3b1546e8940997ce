/** Text helpers shared by the finders. */

/** A one-line title: no line breaks, no HTML comment markers, bounded. */
export function oneLine(text: string, max = 90): string {
  const t = text.replace(/<!--|-->/g, ' ').replace(/\s+/g, ' ').trim();
  return t.length > max ? `${t.slice(0, max - 3).trimEnd()}...` : t;
}

/** The last `lines` lines of an output, without trailing blank lines or colour codes. */
export function outputTail(output: string, lines = 40): string {
  const all = output.replace(/\x1b\[[0-9;]*m/g, '').replace(/\s+$/, '').split(/\r?\n/);
  return all.slice(-lines).join('\n');
}
