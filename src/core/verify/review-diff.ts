import type { DiffSummary } from '../../ports/git.js';

/**
 * The diff as the reviewer is given it: every changed file listed with its counts, and each file's own
 * diff within a fair share of one budget.
 *
 * Invariants:
 * - no file eats the budget: files are served smallest first, each up to an equal share of what is left,
 *   so a file smaller than its share leaves the rest to the others and every file gets at least
 *   min(its size, budget / files);
 * - a diff larger than the budget whose files cannot each get MIN_SHARE is not reviewed at all: the
 *   attempt is vetoed with that said, rather than verified on a part of it.
 */

export const REVIEW_BUDGET = 60_000;
/** The least of a file's diff worth showing when the whole diff does not fit. */
export const MIN_SHARE = 1_000;

export interface FileDiff {
  path: string;
  /** this file's part of the patch, `diff --git` line first */
  patch: string;
  /** characters of `patch` the reviewer is shown */
  share: number;
}

export type ReviewDiff =
  | { ok: true; list: DiffSummary['numstat']; diffs: FileDiff[]; total: number }
  | { ok: false; reason: string };

/** The patch split at its `diff --git` lines; a content line never starts so (it starts with +, - or space). */
function splitPatch(patch: string): string[] {
  if (patch === '') return [];
  return patch.split(/\n(?=diff --git )/).map((p, i, all) => (i < all.length - 1 ? `${p}\n` : p));
}

/** The `b/` path of a `diff --git a/x b/x` line, as git wrote it. */
function headerPath(chunk: string): string {
  const first = chunk.slice(0, chunk.indexOf('\n') === -1 ? undefined : chunk.indexOf('\n'));
  const m = / b\/(.*)$/.exec(first);
  return m?.[1] ?? first;
}

/** Shares of `budget` for `sizes`: smallest first, each up to an equal part of what is left. */
export function fairShares(sizes: readonly number[], budget: number): number[] {
  const order = sizes.map((s, i) => [s, i] as const).sort((a, b) => a[0] - b[0]);
  const shares = new Array<number>(sizes.length).fill(0);
  let left = budget;
  order.forEach(([size, i], k) => {
    const share = Math.min(size, Math.floor(left / (order.length - k)));
    shares[i] = share;
    left -= share;
  });
  return shares;
}

export function reviewDiff(summary: Pick<DiffSummary, 'numstat' | 'patch'>, budget = REVIEW_BUDGET): ReviewDiff {
  const chunks = splitPatch(summary.patch);
  // numstat and the patch list files in the same order; where they do not pair up, a diff goes by its own header.
  const paired = chunks.length === summary.numstat.length;
  const diffs: FileDiff[] = chunks.map((patch, i) => ({
    path: paired ? summary.numstat[i]!.path : headerPath(patch),
    patch,
    share: 0,
  }));
  const total = diffs.reduce((sum, f) => sum + f.patch.length, 0);
  if (total > budget && diffs.length * MIN_SHARE > budget) {
    return {
      ok: false,
      reason: `the diff is too large to review fairly: ${total.toLocaleString('en-US')} characters in ${diffs.length} files, and the reviewer's ${budget.toLocaleString('en-US')}-character budget cannot give each file ${MIN_SHARE.toLocaleString('en-US')} (at most ${Math.floor(budget / MIN_SHARE)} files); split the task`,
    };
  }
  const shares = fairShares(
    diffs.map((f) => f.patch.length),
    budget,
  );
  diffs.forEach((f, i) => {
    f.share = shares[i]!;
  });
  return { ok: true, list: summary.numstat, diffs, total };
}
