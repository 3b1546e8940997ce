/**
 * loopfleet's own edit of a tracked file (BACKLOG.md's tick) made inside a merge commit, and the dance that
 * keeps a person's uncommitted copy of that file while their checkout fast-forwards to the commit.
 *
 * Invariants:
 * - the edit is written only into new objects (blob, tree) until base moves; nothing else is touched;
 * - the person's working copy is saved to `backupPath` (fsynced) before the checkout is touched, and
 *   written back whatever the fast-forward does, so a crash leaves it in the backup, never nowhere.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { MergeFileEdit } from '../../ports/git.js';
import { GitExec, IDENTITY_ENV, gitEnvironment } from './exec.js';

async function readOrNull(file: string): Promise<string | null> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

/** `tree` with `file` replaced by `content` (its mode kept), through a throw-away index. */
async function replaceInTree(git: GitExec, tree: string, file: string, content: string): Promise<string> {
  const scratch = path.join(tmpdir(), `loopfleet-edit-${process.pid}-${randomBytes(4).toString('hex')}`);
  await mkdir(scratch, { recursive: true });
  try {
    const blobFile = path.join(scratch, 'blob');
    await writeFile(blobFile, content);
    // --no-filters: the content is the committed form already (read with cat-file), not a checkout's.
    const blob = (await git.out(['hash-object', '-w', '--no-filters', blobFile])).trim();
    const [mode] = (await git.out(['ls-tree', tree, '--', file])).trim().split(/\s/);
    const indexed = new GitExec(
      git.dir,
      gitEnvironment({ ...IDENTITY_ENV, GIT_INDEX_FILE: path.join(scratch, 'index') }),
    );
    await indexed.run(['read-tree', tree]);
    await indexed.run(['update-index', '--cacheinfo', `${mode ?? '100644'},${blob},${file}`]);
    return (await indexed.out(['write-tree'])).trim();
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/** What an edit of a merged file needs: git, and the main checkout it may write a kept working copy into. */
export interface MergeEditContext {
  git: GitExec;
  /** the repository's top-level folder (the main checkout) */
  root: string;
}

/** The merge tree with the edit applied, or null when the file is not in it or the edit changes nothing. */
export async function committedFileEdit(
  ctx: MergeEditContext,
  mergedTree: string,
  fileEdit: MergeFileEdit,
  inMain: boolean,
): Promise<{ tree: string; path: string } | null> {
  const shown = await ctx.git.run(['cat-file', '-p', `${mergedTree}:${fileEdit.path}`], { ok: [0, 128] });
  if (shown.exitCode !== 0) return null;
  const working = inMain ? await readOrNull(path.join(ctx.root, fileEdit.path)) : null;
  // Deleted or renamed away in the checkout: the merge leaves the file alone, so the deletion stays.
  if (inMain && working === null) return null;
  const content = fileEdit.edit(shown.stdout, working);
  if (content === null || content === shown.stdout) return null;
  return { tree: await replaceInTree(ctx.git, mergedTree, fileEdit.path, content), path: fileEdit.path };
}

async function writeDurably(file: string, content: Buffer, mode: number): Promise<void> {
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const handle = await open(tmp, 'wx', mode);
  try {
    await handle.writeFile(content);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(tmp, file);
}

/**
 * Runs `fastForward` with `file`'s working copy set back to the index's version (so git may update it),
 * then puts the person's copy back. The caller makes its own edit on that copy afterwards.
 */
export async function keepWorkingCopy(
  ctx: MergeEditContext,
  file: string,
  backupPath: string,
  fastForward: () => Promise<unknown>,
): Promise<void> {
  const target = path.join(ctx.root, file);
  const mine = await readFile(target);
  const { mode } = await stat(target);
  await mkdir(path.dirname(backupPath), { recursive: true });
  await writeDurably(backupPath, mine, 0o600);
  try {
    await ctx.git.run(['checkout', '-q', '--', file]);
    await fastForward();
  } finally {
    await writeDurably(target, mine, mode & 0o7777);
    await rm(backupPath, { force: true });
  }
}
