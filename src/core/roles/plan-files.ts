/**
 * The files a plan says it will change, and which running or unmerged tasks a task would collide with.
 *
 * The explorer ends its plan with a fenced block tagged `files` (asked for in every explorer prompt, so it
 * works the same for API and command-line agents). A plan without one says nothing about its files: such
 * a task never waits, since an unknown list cannot be shown to overlap.
 */

const FILES_BLOCK = /```files[ \t]*\r?\n([\s\S]*?)```/g;

/** Paths from the last `files` block of `plan`, normalised and deduplicated; null when there is none. */
export function plannedFiles(plan: string): string[] | null {
  const blocks = [...plan.matchAll(FILES_BLOCK)];
  const last = blocks.at(-1);
  if (last === undefined) return null;
  const files = new Set<string>();
  for (const raw of last[1]!.split('\n')) {
    const entry = raw
      .trim()
      .replace(/^[-*]\s+/, '')
      .replace(/^`(.*)`$/, '$1')
      .replace(/^\.\//, '');
    // Outside the repository or the repository itself: not a file a task can claim.
    if (entry === '' || entry.startsWith('/') || entry.split('/').includes('..') || entry === '.') continue;
    files.add(entry);
  }
  return [...files];
}

/** Whether two planned paths touch the same file; a path ending in `/` is a whole folder. */
function collide(a: string, b: string): boolean {
  if (a === b) return true;
  if (a.endsWith('/') && b.startsWith(a)) return true;
  return b.endsWith('/') && a.startsWith(b);
}

export interface Claim {
  id: string;
  files: readonly string[];
}

/**
 * The first claim (in the order given: backlog order) that shares a file with `files`, and the shared
 * paths; null when none does.
 */
export function firstOverlap(
  files: readonly string[],
  claims: readonly Claim[],
): { id: string; files: string[] } | null {
  for (const claim of claims) {
    const shared = overlapping(files, claim.files);
    if (shared.length > 0) return { id: claim.id, files: shared };
  }
  return null;
}

/** The paths of `files` that touch one of `others` (a folder touches what lies in it). */
export function overlapping(files: readonly string[], others: readonly string[]): string[] {
  return files.filter((f) => others.some((g) => collide(f, g)));
}

/** The line the explorer prompt ends with. */
export const FILES_INSTRUCTION =
  'End the plan with a fenced code block tagged `files` that lists every file you intend to change or create, one path per line, relative to the repository root (a folder ends with `/`). Tasks whose files overlap are run one after the other.';
