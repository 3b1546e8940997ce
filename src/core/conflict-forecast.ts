import type { ConflictForecast, GitPort } from '../ports/git.js';

/** One verified branch's predicted conflicts: with base as it is now, and with each other verified branch. */
export interface TaskConflicts {
  /** files that conflict with the current base; empty when the branch merges cleanly */
  base: string[];
  /** other tasks whose branches conflict with this one, with the files, in backlog order */
  tasks: Array<{ id: string; files: string[] }>;
  /** conflict-marker regions per file, for the detail pane; with base first, then each task */
  hunks: Array<{ with: string; file: string; hunk: string }>;
}

export interface ForecastInput {
  git: Pick<GitPort, 'forecastConflicts'>;
  base: string;
  /** verified, unmerged tasks in backlog order */
  branches: ReadonlyArray<{ id: string; branch: string }>;
}

/**
 * Predicts, touching nothing, which verified branches would conflict with base and with each other.
 * Every pair is asked once (n·(n−1)/2 merge-trees plus n against base): with a night's dozen branches that
 * is under a hundred object-store merges. A task appears in the result only when it has a conflict.
 */
export async function forecastFleet(input: ForecastInput): Promise<Map<string, TaskConflicts>> {
  const { git, base, branches } = input;
  const result = new Map<string, TaskConflicts>();
  const entry = (id: string): TaskConflicts => {
    let found = result.get(id);
    if (found === undefined) {
      found = { base: [], tasks: [], hunks: [] };
      result.set(id, found);
    }
    return found;
  };
  const addHunks = (target: TaskConflicts, withName: string, forecast: ConflictForecast) => {
    for (const [file, hunks] of Object.entries(forecast.hunks)) {
      for (const hunk of hunks) target.hunks.push({ with: withName, file, hunk });
    }
  };

  const againstBase = await Promise.all(branches.map((b) => git.forecastConflicts(base, b.branch)));
  branches.forEach((b, i) => {
    const forecast = againstBase[i]!;
    if (forecast.files.length === 0) return;
    const target = entry(b.id);
    target.base = forecast.files;
    addHunks(target, base, forecast);
  });

  const pairs: Array<[number, number]> = [];
  for (let i = 0; i < branches.length; i++) for (let j = i + 1; j < branches.length; j++) pairs.push([i, j]);
  const pairwise = await Promise.all(pairs.map(([i, j]) => git.forecastConflicts(branches[i]!.branch, branches[j]!.branch)));
  pairs.forEach(([i, j], k) => {
    const forecast = pairwise[k]!;
    if (forecast.files.length === 0) return;
    const a = branches[i]!;
    const b = branches[j]!;
    entry(a.id).tasks.push({ id: b.id, files: forecast.files });
    addHunks(entry(a.id), b.id, forecast);
    entry(b.id).tasks.push({ id: a.id, files: forecast.files });
    addHunks(entry(b.id), a.id, forecast);
  });
  for (const conflicts of result.values()) {
    const order = new Map(branches.map((b, i) => [b.id, i]));
    conflicts.tasks.sort((x, y) => order.get(x.id)! - order.get(y.id)!);
  }
  return result;
}

/** The `conflictsWith` list of status --json and the TUI mark: the base branch's name first, then task ids. */
export function conflictsWith(conflicts: TaskConflicts | undefined, base: string): string[] {
  if (conflicts === undefined) return [];
  return [...(conflicts.base.length > 0 ? [base] : []), ...conflicts.tasks.map((t) => t.id)];
}
