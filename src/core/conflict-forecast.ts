import type { ConflictDetail } from '../domain/types.js';
import type { ConflictForecast, GitPort } from '../ports/git.js';

/**
 * Marker regions kept per task, over all of its conflicts: git-forecast already bounds them per file (five
 * of at most forty lines); this bounds what one task carries in state and shows in its detail pane.
 */
export const MAX_HUNKS_PER_TASK = 12;

export interface ForecastInput {
  git: Pick<GitPort, 'forecastConflicts'>;
  base: string;
  /** verified, unmerged tasks in backlog order */
  branches: ReadonlyArray<{ id: string; branch: string }>;
}

/** One conflict as recorded on a task: with whom (the base branch's name or a task id), the files, the hunks. */
export function conflictDetail(withName: string, forecast: ConflictForecast): ConflictDetail {
  const hunks = Object.entries(forecast.hunks).flatMap(([file, list]) => list.map((hunk) => ({ file, hunk })));
  return { with: withName, files: forecast.files, hunks };
}

/**
 * At most `max` hunks over all of `details`, taken in turn (each conflict's first, then each one's second, …)
 * so that every conflict that has hunks keeps its first. Files and order are untouched.
 */
export function boundHunks(details: readonly ConflictDetail[], max = MAX_HUNKS_PER_TASK): ConflictDetail[] {
  const kept = details.map(() => 0);
  let total = 0;
  for (let round = 0; total < max; round++) {
    let more = false;
    for (let i = 0; i < details.length && total < max; i++) {
      if (details[i]!.hunks.length > round) {
        kept[i]! += 1;
        total += 1;
        more = true;
      }
    }
    if (!more) break;
  }
  return details.map((d, i) => ({ ...d, hunks: d.hunks.slice(0, kept[i]) }));
}

/**
 * Predicts, touching nothing, which verified branches would conflict with base and with each other.
 * Every pair is asked once (n·(n−1)/2 merge-trees plus n against base): with a night's dozen branches that
 * is under a hundred object-store merges. A task appears in the result only when it has a conflict; its
 * details come base first, then the other tasks in backlog order, with their hunks bounded.
 */
export async function forecastFleet(input: ForecastInput): Promise<Map<string, ConflictDetail[]>> {
  const { git, base, branches } = input;
  const found = new Map<string, ConflictDetail[]>();
  const add = (id: string, detail: ConflictDetail) => {
    const list = found.get(id);
    if (list === undefined) found.set(id, [detail]);
    else list.push(detail);
  };

  const againstBase = await Promise.all(branches.map((b) => git.forecastConflicts(base, b.branch)));
  branches.forEach((b, i) => {
    const forecast = againstBase[i]!;
    if (forecast.files.length > 0) add(b.id, conflictDetail(base, forecast));
  });

  const pairs: Array<[number, number]> = [];
  for (let i = 0; i < branches.length; i++) for (let j = i + 1; j < branches.length; j++) pairs.push([i, j]);
  const pairwise = await Promise.all(pairs.map(([i, j]) => git.forecastConflicts(branches[i]!.branch, branches[j]!.branch)));
  pairs.forEach(([i, j], k) => {
    const forecast = pairwise[k]!;
    if (forecast.files.length === 0) return;
    add(branches[i]!.id, conflictDetail(branches[j]!.id, forecast));
    add(branches[j]!.id, conflictDetail(branches[i]!.id, forecast));
  });

  // The pairs are asked in backlog order already; the sort states the order rather than relying on it.
  const order = new Map<string, number>([[base, -1], ...branches.map((b, i): [string, number] => [b.id, i])]);
  const result = new Map<string, ConflictDetail[]>();
  for (const { id } of branches) {
    const list = found.get(id);
    if (list === undefined) continue;
    list.sort((x, y) => order.get(x.with)! - order.get(y.with)!);
    result.set(id, boundHunks(list));
  }
  return result;
}

/** The `conflictsWith` list of status --json and the TUI mark: the names of `details`, in their order. */
export function conflictsWith(details: readonly ConflictDetail[] | undefined): string[] {
  return (details ?? []).map((d) => d.with);
}
