import { mkdirSync } from 'node:fs';
import { readdir, rm } from 'node:fs/promises';
import { exists } from '../fs/paths.js';
import { dirname, join, relative, resolve, sep } from 'node:path';
import type { PreparedWorktree, Workspace } from '../../ports/workspace.js';
import { copyIncluded, includedPaths, linkDependencies } from './worktree-files.js';
import { LOGS_DIR, OWN_ENTRIES } from '../../domain/layout.js';
import { CappedJsonl } from '../fs/capped-jsonl.js';

/** Default cap of one attempt's transcript: its first and last 16 MB are kept. */
export const MAX_TRANSCRIPT_BYTES = 32_000_000;

/** Transcripts, .worktreeinclude copies and dependency clones, all under `<repo>/.loop-worktrees`. */
export class FsWorkspace implements Workspace {
  readonly #workDir: string;
  readonly #streams = new Map<string, CappedJsonl>();
  readonly #maxTranscriptBytes: number;
  /** transcripts of ended attempts still being written */
  readonly #ending: Promise<void>[] = [];
  #error: Error | null = null;

  constructor(workDir: string, options: { maxTranscriptBytes?: number } = {}) {
    this.#workDir = resolve(workDir);
    this.#maxTranscriptBytes = options.maxTranscriptBytes ?? MAX_TRANSCRIPT_BYTES;
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
      // Capped (head and tail kept, the cut said): agent output can be any size. A failing transcript must
      // not stop the fleet mid-task; the error is reported by flush().
      stream = new CappedJsonl(file, this.#maxTranscriptBytes, (error) => (this.#error ??= error));
      this.#streams.set(file, stream);
    }
    stream.write(record);
    // The attempt's last record: its held tail is written now rather than kept until the run ends.
    if (record.type === 'attempt-end') {
      this.#streams.delete(file);
      this.#ending.push(stream.end());
    }
  }

  async flush(): Promise<void> {
    const streams = [...this.#streams.values()];
    this.#streams.clear();
    await Promise.all([...this.#ending.splice(0), ...streams.map((s) => s.end())]);
    if (this.#error !== null) {
      const error = this.#error;
      this.#error = null;
      throw new Error(`writing transcripts failed: ${error.message}`, { cause: error });
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
