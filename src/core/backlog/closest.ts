/** "Did you mean" suggestions for misspelt keys. */

function distance(a: string, b: string): number {
  const prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0]!;
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = prev[j]!;
      prev[j] = Math.min(above + 1, prev[j - 1]! + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = above;
    }
  }
  return prev[b.length]!;
}

const normal = (s: string): string => s.toLowerCase().replace(/[-_\s]/g, '');

/**
 * The known name closest to `name`, or null when none is plausibly meant. Case, `-` and `_` are ignored,
 * so `maxFiles` suggests `max_files`.
 */
export function closest(name: string, known: readonly string[]): string | null {
  let best: string | null = null;
  let bestDistance = Infinity;
  const n = normal(name);
  for (const candidate of known) {
    const c = normal(candidate);
    const d = distance(n, c);
    const limit = Math.max(1, Math.min(3, Math.floor(c.length / 3)));
    if (d <= limit && d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}

/** ` (did you mean 'x'?)` or an empty string. */
export function didYouMean(name: string, known: readonly string[]): string {
  const c = closest(name, known);
  return c === null ? '' : ` (did you mean '${c}'?)`;
}
