import { readdir, lstat, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runAttack } from '../helpers/attack-harness.js';
import { backlog } from '../helpers/fleet-harness.js';
import { git, makeRepo } from '../helpers/git-repo.js';

/*
 * Sizes through the real pipeline: a file over max_file_bytes is refused before anything of it is written
 * into the person's .git. The file is sparse (`truncate -s 3G`), so writing it costs nothing; hashing it
 * would write a 3 GB blob (compressed, still megabytes: any object over 1 MB is the attack's).
 */

let cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups) await c();
  cleanups = [];
});

/** Every file under `dir` larger than `min` bytes. */
async function largeFiles(dir: string, min: number): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    const full = join(entry.parentPath, entry.name);
    if (entry.isFile() && (await lstat(full)).size > min) out.push(full);
  }
  return out;
}

describe('a file over max_file_bytes', () => {
  it('is refused before staging: no object of it lands in .git and the task fails naming the rule', async () => {
    const r = await makeRepo({
      'BACKLOG.md': backlog(
        'check: "true"\nreview: false\nmax_file_bytes: 1000000',
        '- [ ] T-1 Add data\n  attempts: 1',
      ),
      'README.md': 'hi\n',
    });
    cleanups.push(r.cleanup);
    const { fleet } = await runAttack(r.root, ({ role }) =>
      role === 'implementer' ? { edits: { 'notes.txt': 'small\n' }, shell: ['truncate -s 3G big.bin'] } : {},
    );
    const attempt = fleet.task('T-1')!.attempts.at(-1)!;
    expect({ status: fleet.task('T-1')!.status, outcome: attempt.outcome }).toEqual({
      status: 'failed',
      outcome: 'guard-failed',
    });
    expect(attempt.reason).toMatch(/big\.bin is 3221225472 bytes, more than max_file_bytes 1000000/);
    // Neither a loose object nor a pack of it: nothing in .git is larger than 1 MB.
    expect(await largeFiles(join(r.root, '.git'), 1_000_000)).toEqual([]);
    expect(await git(r.root, 'diff', '--stat', 'main', 'loop/T-1')).toBe('');
    await rm(join(r.root, '.loop-worktrees'), { recursive: true, force: true });
  }, 60_000);
});

describe('a read-only role writing a huge file', () => {
  it('is caught by the watcher without hashing the file into .git, and the file is removed', async () => {
    const { watchReadOnly } = await import('../../src/adapters/git/worktree-snapshot.js');
    const { execa } = await import('execa');
    const r = await makeRepo({ 'README.md': 'hi\n' });
    cleanups.push(r.cleanup);
    const watch = await watchReadOnly(r.root, 'the reviewer');
    await execa('truncate', ['-s', '3G', join(r.root, 'big.bin')]);
    await expect(watch.verify()).rejects.toThrow(
      /the reviewer changed the worktree \(big\.bin\); the change was reset/,
    );
    expect(await largeFiles(join(r.root, '.git'), 1_000_000)).toEqual([]);
    await expect(lstat(join(r.root, 'big.bin'))).rejects.toThrow(/ENOENT/);
  }, 60_000);
});
