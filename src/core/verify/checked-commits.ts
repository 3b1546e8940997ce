/**
 * The commits this repository's loopfleet has checked itself: one ref per task, `refs/loopfleet/checked/<id>`,
 * pointing at the last commit of the task's branch whose checks passed here — in the coordinator's own
 * sandbox, never on a worker's word. The merge queue lands a branch without running its checks again only
 * when its tip is that commit: the same commit is the same tree on the same parents, so the same base.
 *
 * Invariant: a ref here is written only after a check run in this process passed on exactly that commit;
 * nothing a worker sends can write one (workers push `refs/heads/loop/<id>` to the remote only).
 */
import type { GitPort } from '../../ports/git.js';

export function checkedRef(id: string): string {
  return `refs/loopfleet/checked/${id}`;
}

export class CheckedCommits {
  readonly #git: GitPort;

  constructor(git: GitPort) {
    this.#git = git;
  }

  /** `commit` of task `id` passed its checks here. */
  async record(id: string, commit: string): Promise<void> {
    await this.#git.updateRef(checkedRef(id), commit);
  }

  /** Whether the checks of task `id` passed here on `commit` (its branch's tip now). */
  async holds(id: string, commit: string | null): Promise<boolean> {
    return commit !== null && (await this.#git.revParse(checkedRef(id))) === commit;
  }
}
