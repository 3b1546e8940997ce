/**
 * Conflict markers left in a change: a branch that carries them was "resolved" by committing the conflict.
 * Only the markers that open and close a conflict count (`<<<<<<< ` and `>>>>>>> `, as git writes them);
 * a lone `=======` is also a Markdown heading underline.
 */
const MARKER = /^\+(<{7}|>{7})(?: |$)/;
const FILE = /^diff --git a\/(.+) b\/(.+)$/;

export function conflictMarkers(diff: string, exempt: (path: string) => boolean): string[] {
  const found = new Map<string, number>();
  let file: string | null = null;
  for (const line of diff.split('\n')) {
    const header = FILE.exec(line);
    if (header !== null) {
      file = header[2]!;
      continue;
    }
    if (file === null || !MARKER.test(line) || exempt(file)) continue;
    found.set(file, (found.get(file) ?? 0) + 1);
  }
  return [...found].map(
    ([path, n]) =>
      `guard: ${path} adds ${n} conflict marker line${n === 1 ? '' : 's'} (<<<<<<< / >>>>>>>): a conflict is resolved, never committed`,
  );
}
