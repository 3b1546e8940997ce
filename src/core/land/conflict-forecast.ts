import type { ConflictDetail } from '../../domain/types.js';
import type { ConflictForecast, ForkChanges, GitPort } from '../../ports/git.js';

/**
 * Marker regions kept per task, over all of its conflicts: git-forecast already bounds them per file (five
 * of at most forty lines); this bounds what one task carries in state and shows in its detail pane.
 */
export const MAX_HUNKS_PER_TASK = 12;

export interface ForecastInput {
  git: Pick<GitPort, 'forecastConflicts' | 'resolveCommits' | 'changesSinceFork'>;
  base: string;
  /** verified, unmerged tasks in backlog order */
  branches: ReadonlyArray<{ id: string; branch: string }>;
  /** answers kept from earlier forecasts: a pair is asked again only when one of its sides moved */
  memo?: ForecastMemo;
}

/**
 * Forecasts by the two commits they were computed for. A merge-tree of the same two commits always gives
 * the same answer, so an entry never goes stale: it is asked by commit id, never by a ref that can move
 * between the look-up and the merge, and its markers are then labelled with the names a person knows.
 * Bounded: past MAX_ENTRIES the oldest half is dropped (a night has far fewer pairs).
 */
export class ForecastMemo {
  static readonly MAX_ENTRIES = 4096;
  readonly #byPair = new Map<string, ConflictForecast>();
  readonly #changes = new Map<string, Promise<ForkChanges>>();
  /** merge-trees asked through this memo */
  asked = 0;
  /** pairs answered "no conflict" without a merge-trees: forked at one commit, no path in common */
  skipped = 0;

  /** {@link GitPort.changesSinceFork} of two commits; like a forecast, an answer by commit never goes stale. */
  changes(git: Pick<GitPort, 'changesSinceFork'>, base: string, commit: string): Promise<ForkChanges> {
    const key = `${base} ${commit}`;
    let found = this.#changes.get(key);
    if (found === undefined) {
      if (this.#changes.size >= ForecastMemo.MAX_ENTRIES) this.#changes.clear();
      found = git.changesSinceFork(base, commit);
      // A failed look-up is not kept: the next forecast asks again.
      found.catch(() => this.#changes.delete(key));
      this.#changes.set(key, found);
    }
    return found;
  }

  async forecast(
    git: Pick<GitPort, 'forecastConflicts'>,
    left: { name: string; commit: string },
    right: { name: string; commit: string },
  ): Promise<ConflictForecast> {
    const key = `${left.commit} ${right.commit}`;
    let answer = this.#byPair.get(key);
    if (answer === undefined) {
      this.asked++;
      answer = await git.forecastConflicts(left.commit, right.commit);
      if (this.#byPair.size >= ForecastMemo.MAX_ENTRIES) {
        let drop = this.#byPair.size / 2;
        for (const k of this.#byPair.keys()) {
          if (drop-- <= 0) break;
          this.#byPair.delete(k);
        }
      }
      this.#byPair.set(key, answer);
    }
    return relabel(answer, left, right);
  }
}

const NO_CONFLICT: ConflictForecast = { files: [], hunks: {} };

/**
 * Whether two sides that forked at the same commit may conflict textually: a path both changed, or a path
 * one changed that is a folder of a path the other changed (a file against a folder).
 */
export function pathsMeet(left: readonly string[], right: readonly string[]): boolean {
  const files = new Set(left);
  const folders = new Set<string>();
  for (const p of left) for (let i = p.indexOf('/'); i !== -1; i = p.indexOf('/', i + 1)) folders.add(p.slice(0, i));
  for (const p of right) {
    if (files.has(p) || folders.has(p)) return true;
    for (let i = p.indexOf('/'); i !== -1; i = p.indexOf('/', i + 1)) if (files.has(p.slice(0, i))) return true;
  }
  return false;
}

/** The marker lines of `forecast` labelled `name` where merge-tree wrote the commit id it was given. */
function relabel(forecast: ConflictForecast, ...sides: Array<{ name: string; commit: string }>): ConflictForecast {
  const hunks: Record<string, string[]> = {};
  for (const [file, list] of Object.entries(forecast.hunks)) {
    hunks[file] = list.map((hunk) =>
      hunk
        .split('\n')
        .map((line) => {
          for (const marker of ['<<<<<<< ', '>>>>>>> ']) {
            if (!line.startsWith(marker)) continue;
            const side = sides.find((s) => line.startsWith(`${marker}${s.commit}`));
            if (side !== undefined) return `${marker}${side.name}${line.slice(marker.length + side.commit.length)}`;
          }
          return line;
        })
        .join('\n'),
    );
  }
  return { files: forecast.files, hunks };
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
 * Without a memo every pair is asked (n·(n−1)/2 merge-trees plus n against base). With one, each branch's
 * fork and changed paths are found once per commit ({@link GitPort.changesSinceFork}), and a merge-tree
 * is asked only where branches meet: a pair that forked at one commit with a path in common (or forked
 * apart), a branch whose fork is not base's tip; and only when one side moved since it was last asked.
 * A task appears in the result only when it has a conflict; its details come base first, then the other
 * tasks in backlog order, with their hunks bounded.
 */
export async function forecastFleet(input: ForecastInput): Promise<Map<string, ConflictDetail[]>> {
  const { git, base, branches } = input;
  const found = new Map<string, ConflictDetail[]>();
  const add = (id: string, detail: ConflictDetail) => {
    const list = found.get(id);
    if (list === undefined) found.set(id, [detail]);
    else list.push(detail);
  };

  // With a memo, each side is asked by its commit, so that an unchanged pair is answered from the memo;
  // every tip is read in one look-up.
  const memo = input.memo;
  const tips =
    memo === undefined
      ? null
      : (await git.resolveCommits([base, ...branches.map((b) => b.branch)])).map(
          (commit, i) => commit ?? (i === 0 ? base : branches[i - 1]!.branch),
        );
  const tipOf = (ref: string, at: number): string => tips?.[at] ?? ref;
  const ask = (left: string, l: number, right: string, r: number) =>
    memo === undefined
      ? git.forecastConflicts(left, right)
      : memo.forecast(git, { name: left, commit: tipOf(left, l) }, { name: right, commit: tipOf(right, r) });
  // Each branch's fork and paths, asked once per commit: a pair that forked at one commit and shares no
  // path cannot conflict, and base cannot conflict with a branch that forked at its tip.
  const changes =
    memo === undefined || tips === null
      ? null
      : await Promise.all(branches.map((_, i) => memo.changes(git, tips[0]!, tips[i + 1]!)));
  const skip = (): ConflictForecast => {
    if (memo !== undefined) memo.skipped++;
    return NO_CONFLICT;
  };
  const againstBase = await Promise.all(
    branches.map((b, i) =>
      changes !== null && changes[i]!.fork === tips![0] ? skip() : ask(base, 0, b.branch, i + 1),
    ),
  );
  branches.forEach((b, i) => {
    const forecast = againstBase[i]!;
    if (forecast.files.length > 0) add(b.id, conflictDetail(base, forecast));
  });

  const apart = (i: number, j: number): boolean => {
    if (changes === null) return false;
    const [l, r] = [changes[i]!, changes[j]!];
    return l.fork === r.fork && !pathsMeet(l.paths, r.paths);
  };
  const pairs: Array<[number, number]> = [];
  for (let i = 0; i < branches.length; i++) for (let j = i + 1; j < branches.length; j++) pairs.push([i, j]);
  const pairwise = await Promise.all(
    pairs.map(([i, j]) => (apart(i, j) ? skip() : ask(branches[i]!.branch, i + 1, branches[j]!.branch, j + 1))),
  );
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
