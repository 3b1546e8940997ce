import type { BaselineResult, CheckResult, CheckSpec } from '../../domain/types.js';
import type { BaselineStore, ScratchTrees } from '../../ports/verification.js';

/**
 * Baselines: each distinct check command run once on the commit a task starts from, in a throw-away
 * worktree (never the task's own, so nothing a check leaves behind can end up in the task's commit),
 * cached by commit and command. Their counts are what "fewer tests than base" and "not worse than base"
 * are measured against ({@link judgeCheck}).
 */

export interface BaselineDeps {
  store: BaselineStore;
  scratch: ScratchTrees;
  /** makes a scratch checkout ready to run checks in (ignored files, dependencies) */
  prepare: (dir: string) => Promise<void>;
  /** runs one command in `dir`, sandboxed like the task's check, its output counted */
  run: (dir: string, command: string) => Promise<CheckResult>;
}

/** Distinct commands, first name wins. */
function distinct(checks: readonly CheckSpec[]): CheckSpec[] {
  const seen = new Set<string>();
  return checks.filter((c) => (seen.has(c.run) ? false : (seen.add(c.run), true)));
}

/**
 * One baseline run at a time per commit in this process: tasks that start together on the same base wait,
 * then find the results cached instead of each running the checks again.
 */
const locks = new Map<string, Promise<unknown>>();

export async function baselinesFor(
  checks: readonly CheckSpec[],
  commit: string,
  scratchName: string,
  deps: BaselineDeps,
): Promise<BaselineResult[]> {
  const previous = locks.get(commit) ?? Promise.resolve();
  const mine = previous.catch(() => undefined).then(() => measure(distinct(checks), commit, scratchName, deps));
  locks.set(commit, mine);
  try {
    return await mine;
  } finally {
    if (locks.get(commit) === mine) locks.delete(commit);
  }
}

async function measure(
  checks: CheckSpec[],
  commit: string,
  scratchName: string,
  deps: BaselineDeps,
): Promise<BaselineResult[]> {
  const results = new Map<string, BaselineResult>();
  const missing: CheckSpec[] = [];
  for (const c of checks) {
    const cached = await deps.store.get(commit, c.run);
    if (cached !== null) results.set(c.run, { ...cached, name: c.name });
    else missing.push(c);
  }
  if (missing.length > 0) {
    const dir = await deps.scratch.create(scratchName, commit);
    try {
      await deps.prepare(dir);
      for (const c of missing) {
        const r = await deps.run(dir, c.run);
        const result: BaselineResult = {
          name: c.name,
          command: c.run,
          commit,
          exitCode: r.exitCode,
          timedOut: r.timedOut,
          counts: r.counts ?? null,
          durationMs: r.durationMs,
          outputTail: r.outputTail,
        };
        // A timed-out run says nothing about base: it is not cached, so a later attempt tries again.
        if (!r.timedOut) await deps.store.put(result);
        results.set(c.run, result);
      }
    } finally {
      await deps.scratch.remove(dir);
    }
  }
  return checks.map((c) => results.get(c.run)!);
}

/** `check fails on base: 2 failing tests` — null when the base passes. */
export function baseFailure(b: BaselineResult): string | null {
  if (!b.timedOut && b.exitCode === 0) return null;
  const what = b.timedOut ? 'times out' : b.exitCode === null ? 'is killed' : 'fails';
  const label = b.name === b.command ? `\`${b.command}\`` : `'${b.name}'`;
  const counts =
    b.counts === null
      ? `exit ${b.exitCode ?? 'killed'}`
      : `${b.counts.failed} failing test${b.counts.failed === 1 ? '' : 's'} of ${b.counts.total}`;
  return `check ${label} ${what} on base ${b.commit.slice(0, 10)}: ${b.timedOut ? 'timed out' : counts}`;
}
