/**
 * Which two commits would conflict if merged, and where — computed in the object store only
 * (`git merge-tree --write-tree`), so no working tree, index or ref is touched.
 */
import type { ConflictForecast, ForkChanges } from '../../ports/git.js';
import { fields, type GitExec } from './exec.js';

/** A conflicted file's marker regions are shown up to this many lines each, so a forecast stays small. */
const MAX_HUNK_LINES = 40;
const MAX_HUNKS_PER_FILE = 5;

/** The conflict-marker regions of a file as merge-tree wrote it into its result tree. */
export function conflictHunks(content: string): string[] {
  const hunks: string[] = [];
  let current: string[] | null = null;
  for (const line of content.split('\n')) {
    if (current === null) {
      if (line.startsWith('<<<<<<< ')) current = [line];
      continue;
    }
    current.push(line);
    if (line.startsWith('>>>>>>> ')) {
      const shown =
        current.length > MAX_HUNK_LINES
          ? [
              ...current.slice(0, MAX_HUNK_LINES - 1),
              `… (${current.length - MAX_HUNK_LINES + 1} more lines)`,
              current.at(-1)!,
            ]
          : current;
      hunks.push(shown.join('\n'));
      current = null;
      if (hunks.length === MAX_HUNKS_PER_FILE) break;
    }
  }
  return hunks;
}

/** The result tree of merging `right` into `left` (conflict markers in it), and what conflicts there. */
export interface MergedTree extends ConflictForecast {
  tree: string;
}

/**
 * Merges `right` into `left` (commits or refs) in the object store only. Files are listed once each; a file
 * in conflict for a reason other than content (modify/delete, rename) has no hunks but is listed. The
 * markers are labelled with the names given, so pass the names a person knows (`main`, `loop/T-1`).
 */
export async function mergeTree(git: GitExec, left: string, right: string): Promise<MergedTree> {
  const { stdout, exitCode } = await git.run(
    ['merge-tree', '--write-tree', '--name-only', '--no-messages', '-z', left, right],
    { ok: [0, 1] },
  );
  const [tree = '', ...conflicted] = fields(stdout);
  if (exitCode === 0) return { tree, files: [], hunks: {} };
  const files = [...new Set(conflicted)].filter((f) => f !== '');
  const hunks: Record<string, string[]> = {};
  for (const file of files) {
    const shown = await git.run(['cat-file', '-p', `${tree}:${file}`], { ok: [0, 128] });
    if (shown.exitCode !== 0) continue;
    const found = conflictHunks(shown.stdout);
    if (found.length > 0) hunks[file] = found;
  }
  return { tree, files, hunks };
}

/** Conflicts of merging `right` into `left`; nothing is written but unreachable objects. */
export async function forecastConflicts(git: GitExec, left: string, right: string): Promise<ConflictForecast> {
  const { files, hunks } = await mergeTree(git, left, right);
  return { files, hunks };
}

/** Where `commit` forked from `base` and the paths it changed since: a merge-base and a diff of names. */
export async function changesSinceFork(git: GitExec, base: string, commit: string): Promise<ForkChanges> {
  const fork = (await git.out(['merge-base', base, commit])).trim();
  const paths = fields(
    await git.out(['diff', '--name-only', '--no-renames', '--ignore-submodules=none', '-z', fork, commit, '--']),
  );
  return { fork, paths };
}
