import type { TrackedChange, TrackedFiles } from '../../ports/verification.js';

/**
 * The check checks the commit: it runs on the committed tree and must leave every tracked file exactly
 * as committed — content, mode, presence, and the file itself (a file rewritten for the check and put
 * back on exit counts as changed). Folders of tracked files are mount points inside the sandbox, so a
 * check cannot swap one for another either.
 *
 * Chosen over a read-only view of the worktree: bubblewrap 0.8 has no overlay, and a read-only worktree
 * with writable binds only for the ignored folders that exist already breaks the many checks that create
 * output (coverage/, .pytest_cache, __pycache__, build folders) on their first run; a bind per tracked file
 * does not scale. Writes stay possible; every write to a tracked file is seen afterwards and fails.
 */

const SHOWN = 10;

function list(paths: string[]): string {
  const more = paths.length > SHOWN ? ` and ${paths.length - SHOWN} more` : '';
  return `${paths.slice(0, SHOWN).join(', ')}${more}`;
}

/** The failure reason for what a check did to tracked files; null when it left them as committed. */
export function trackedChangesReason(changes: readonly TrackedChange[]): string | null {
  if (changes.length === 0) return null;
  const changed = changes
    .filter((c) => c.kind !== 'restored')
    .map((c) => (c.kind === 'deleted' ? `${c.path} (deleted)` : c.path));
  const restored = changes.filter((c) => c.kind === 'restored').map((c) => c.path);
  const parts: string[] = [];
  if (changed.length > 0) parts.push(`the check changed tracked files: ${list(changed)}`);
  if (restored.length > 0) parts.push(`the check rewrote tracked files and put them back: ${list(restored)}`);
  return parts.join('; ');
}

/**
 * Runs `run` (the checks, given the folders to pin as mount points) on `dir` and says what it did to the
 * tracked files: null when nothing.
 */
export async function watchTracked<T>(
  tracked: TrackedFiles,
  dir: string,
  run: (pinned: readonly string[]) => Promise<T>,
): Promise<{ value: T; changed: string | null }> {
  const record = await tracked.record(dir);
  const value = await run(record.folders);
  return { value, changed: trackedChangesReason(await tracked.changes(dir, record)) };
}
