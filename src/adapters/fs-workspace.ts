import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { readdir, rm } from 'node:fs/promises';
import { exists } from './fs-paths.js';
import { dirname, join, relative, resolve, sep } from 'node:path';
import type { PreparedWorktree, Workspace } from '../ports/workspace.js';
import { copyIncluded, includedPaths, linkDependencies } from './worktree-files.js';
import { LOGS_DIR, OWN_ENTRIES } from '../domain/layout.js';

/** Transcripts, .worktreeinclude copies and dependency clones, all under `<repo>/.loop-worktrees`. */
export class FsWorkspace implements Workspace {
  readonly #workDir: string;
  readonly #streams = new Map<string, WriteStream>();
  #error: Error | null = null;

  constructor(workDir: string) {
    this.#workDir = resolve(workDir);
  }

  async prepare(repoRoot: string, worktree: string): Promise<PreparedWorktree> {
    const copied = await copyIncluded(repoRoot, worktree);
    // Copies, never hard links: a hard-linked file edited in place inside the worktree would change the
    // person's own node_modules, and the sandbox cannot prevent that.
    const deps = await linkDependencies(repoRoot, worktree, ['node_modules'], { hardlinks: false });
    return { copied, deps };
  }

  included(repoRoot: string): Promise<string[]> {
    return includedPaths(repoRoot);
  }

  transcript(taskId: string, attempt: number, record: Record<string, unknown>): void {
    const file = join(this.#workDir, LOGS_DIR, taskId, `${attempt}.jsonl`);
    let stream = this.#streams.get(file);
    if (stream === undefined) {
      // Once per attempt; synchronous so that records keep their order without a queue.
      mkdirSync(dirname(file), { recursive: true });
      stream = createWriteStream(file, { flags: 'a' });
      // A failing transcript must not stop the fleet mid-task; the error is reported by flush().
      stream.on('error', (error) => (this.#error ??= error));
      this.#streams.set(file, stream);
    }
    stream.write(`${JSON.stringify(record)}\n`);
  }

  async flush(): Promise<void> {
    const streams = [...this.#streams.values()];
    this.#streams.clear();
    await Promise.all(streams.map((s) => new Promise<void>((done) => s.end(done))));
    if (this.#error !== null) {
      const error = this.#error;
      this.#error = null;
      throw new Error(`writing transcripts failed: ${error.message}`);
    }
  }

  async removeOrphan(path: string): Promise<void> {
    const rel = relative(this.#workDir, resolve(path));
    if (rel === '' || rel.startsWith('..') || rel.includes(sep) || OWN_ENTRIES.includes(rel)) {
      throw new Error(`refusing to remove ${path}: not a task folder under ${this.#workDir}`);
    }
    await rm(path, { recursive: true, force: true });
  }

  exists(path: string): Promise<boolean> {
    return exists(path);
  }

  async entries(): Promise<string[]> {
    try {
      return await readdir(this.#workDir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      return [];
    }
  }
}
