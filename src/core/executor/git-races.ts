/**
 * Transient failures of git under concurrent worktree changes in one repository.
 */

/**
 * git 2.x reads every worktree's administrative files for a fetch's connectivity check and for branch
 * listings; a worktree another job (or task) is adding at that moment can be half-written
 * (`worktrees/<id>/HEAD`, `commondir`). Such a failure is the other add's, not this job's: tried again a few
 * times, like the git adapter does for concurrent adds, instead of serialising every job's whole setup.
 */
const RACED = /worktrees\/[^/\s]+\/(HEAD|commondir)|did not send all necessary objects/;

export async function raced<T>(run: () => Promise<T>, tries = 4): Promise<T> {
  for (let n = 1; ; n++) {
    try {
      return await run();
    } catch (error) {
      if (n >= tries || !RACED.test(error instanceof Error ? error.message : String(error))) throw error;
      await new Promise((resolve) => setTimeout(resolve, 20 + Math.random() * 80));
    }
  }
}
