import type { GitPort, MergeResult } from '../../ports/git.js';

/**
 * Which commits `setup:` may run on outside the sandbox, as the person's own command.
 *
 * Invariant: base as it stood when this fleet opened is the person's code (what was merged before is code
 * they chose to keep). During the run base moves only through {@link FleetActions.merge} (see
 * {@link Landing}), and every landing goes through `landing()` here, which records the commit it put on
 * base before the caller goes on (before the branch is deleted, before the next task is started). A
 * worktree's HEAD is trusted exactly when no commit landed during this run is in its history: the person's
 * own commits on base keep it trusted, anything an agent wrote that reached base (auto-merge, `autonomy:
 * auto`, the merge queue, `m`) makes every later worktree untrusted. A worktree rebuilt from a branch that
 * existed already is never asked about: the caller treats it as agent-written.
 */
export class SetupTrust {
  readonly #git: GitPort;
  /** commits landed on base during this run, oldest first */
  readonly #landed: string[] = [];
  /** landings under way: a trust question waits for them, so a base moved a moment ago is never missed */
  readonly #pending = new Set<Promise<unknown>>();

  constructor(git: GitPort) {
    this.#git = git;
  }

  /** Runs one merge into base and records what it landed. */
  async landing(merge: () => Promise<MergeResult>): Promise<MergeResult> {
    const run = merge().then((result) => {
      if (result.kind === 'merged') this.#landed.push(result.commit);
      return result;
    });
    this.#pending.add(run);
    try {
      return await run;
    } finally {
      this.#pending.delete(run);
    }
  }

  /** A commit landed during this run that `head` contains, or null when `head` is the person's code. */
  async landedIn(head: string): Promise<string | null> {
    await Promise.allSettled([...this.#pending]);
    // Landings stack on base, so the oldest is usually in `head` already: one git call in the common case.
    for (const commit of this.#landed) if (await this.#git.isMerged(commit, head)) return commit;
    return null;
  }
}
