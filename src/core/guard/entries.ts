/**
 * What git itself would carry from a task branch into base: gitlinks (nested repositories, whose config
 * runs commands on `git status`), `.gitmodules`, `.gitattributes` (filters, diff and merge drivers),
 * anything inside a nested `.git`, and sizes — binary files counted by their bytes, not as 0 lines.
 */
import type { DiffEntry } from '../../ports/git.js';

export interface SizeLimits {
  maxFileBytes: number;
  maxBytes: number;
}

/** A path component git (or a case-insensitive or NTFS file system) reads as `.git`. */
function dotGit(component: string): boolean {
  return /^\.git[. ]*$/i.test(component) || /^git~\d+$/i.test(component);
}

/** Bytes of the added and removed lines of each file in a unified diff. */
export function textBytes(diff: string): Map<string, number> {
  const bytes = new Map<string, number>();
  let file = '';
  let inHunk = false;
  for (const line of diff.split('\n')) {
    if (line.startsWith('diff --git ')) {
      inHunk = false;
    } else if (!inHunk && (line.startsWith('--- a/') || line.startsWith('+++ b/'))) {
      file = line.slice(6);
    } else if (line.startsWith('@@')) {
      inHunk = true;
    } else if (inHunk && (line.startsWith('+') || line.startsWith('-'))) {
      bytes.set(file, (bytes.get(file) ?? 0) + Buffer.byteLength(line));
    }
  }
  return bytes;
}

export function entryRules(
  entries: readonly DiffEntry[],
  diff: string,
  limits: SizeLimits,
  exempt: (path: string) => boolean,
): string[] {
  const reasons: string[] = [];
  const text = textBytes(diff);
  let total = 0;
  for (const e of entries) {
    if (exempt(e.path)) continue;
    const name = e.path.split('/').at(-1)!;
    if (e.newMode === '160000') {
      reasons.push(`guard: ${e.path} is a gitlink (a nested git repository); name it in the task's files: to allow it`);
    }
    if (name === '.gitmodules')
      reasons.push(`guard: ${e.path} changed — submodules are refused; name it in the task's files: to allow it`);
    if (name === '.gitattributes') {
      reasons.push(
        `guard: ${e.path} changed — .gitattributes decide how git filters, diffs and merges files; name it in the task's files: to allow it`,
      );
    }
    if (e.path.split('/').slice(0, -1).some(dotGit) || dotGit(name))
      reasons.push(`guard: ${e.path} is inside a nested .git`);
    if (e.status !== 'D' && e.size !== null && e.size > limits.maxFileBytes) {
      reasons.push(`guard: ${e.path} is ${e.size} bytes, more than max_file_bytes ${limits.maxFileBytes}`);
    }
    total += e.binary ? (e.size ?? 0) : (text.get(e.path) ?? 0);
  }
  if (total > limits.maxBytes)
    reasons.push(`guard: the diff is ${total} bytes, more than max_bytes ${limits.maxBytes}`);
  return reasons;
}
