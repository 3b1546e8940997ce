import type { BaselineResult } from '../../src/domain/types.js';
import type {
  BaselineStore,
  ScratchTrees,
  TrackedChange,
  TrackedFiles,
  TrackedRecord,
} from '../../src/ports/verification.js';
import type { FakeGit } from './fake-git.js';

/** Baselines kept in memory, keyed like the JSON store: commit and command. */
export class FakeBaselineStore implements BaselineStore {
  readonly #results: BaselineResult[] = [];

  async get(commit: string, command: string): Promise<BaselineResult | null> {
    return this.#results.find((r) => r.commit === commit && r.command === command) ?? null;
  }
  async put(result: BaselineResult): Promise<void> {
    const at = this.#results.findIndex((r) => r.commit === result.commit && r.command === result.command);
    if (at === -1) this.#results.push(result);
    else this.#results[at] = result;
  }
  async all(): Promise<BaselineResult[]> {
    return [...this.#results];
  }
}

/** Scratch checkouts as detached worktrees of the FakeGit. */
export class FakeScratchTrees implements ScratchTrees {
  readonly made: string[] = [];
  constructor(private readonly git: FakeGit) {}

  async mergeBase(_worktree: string, ref: string): Promise<string> {
    return (await this.git.revParse(`refs/heads/${ref}`)) ?? ref;
  }
  async changedFiles(from: string, to: string): Promise<string[]> {
    return this.git.changedFiles(from, to);
  }
  async create(name: string, commit: string): Promise<string> {
    this.made.push(name);
    const dir = `${this.git.root}/.loop-worktrees/.${name}`;
    this.git.removeDetached(dir);
    this.git.addDetached(dir, commit);
    return dir;
  }
  async restore(dir: string, commit: string, paths: readonly string[]): Promise<void> {
    const files = this.git.files(dir);
    for (const p of paths) {
      const text = this.git.show(commit, p);
      if (text === undefined) files.delete(p);
      else files.set(p, text);
    }
  }
  async overlay(dir: string, files: Readonly<Record<string, string>>): Promise<void> {
    const tree = this.git.files(dir);
    for (const [p, text] of Object.entries(files)) tree.set(p, text);
  }
  async remove(dir: string): Promise<void> {
    this.git.removeDetached(dir);
  }
}

/** Tracked files of a FakeGit worktree: its working copy before and after, compared by content. */
export class FakeTrackedFiles implements TrackedFiles {
  constructor(private readonly git: FakeGit) {}

  async record(dir: string): Promise<TrackedRecord> {
    if (!this.git.hasWorktree(dir)) return { files: [], folders: [] };
    return {
      files: [...this.git.files(dir)].map(([path, text]) => ({ path, mode: '100644', sha: text, identity: text })),
      folders: [],
    };
  }
  async changes(dir: string, record: TrackedRecord): Promise<TrackedChange[]> {
    const now = this.git.hasWorktree(dir) ? this.git.files(dir) : new Map<string, string>();
    return record.files.flatMap((f): TrackedChange[] => {
      const text = now.get(f.path);
      if (text === undefined) return [{ path: f.path, kind: 'deleted' }];
      return text === f.sha ? [] : [{ path: f.path, kind: 'changed' }];
    });
  }
}
