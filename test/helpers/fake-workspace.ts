import type { PreparedWorktree, Workspace } from '../../src/ports/workspace.js';
import type { FakeGit } from './fake-git.js';

/** A Workspace in memory: worktrees exist when the FakeGit has them; transcripts are kept in a list. */
export class FakeWorkspace implements Workspace {
  readonly transcripts: Array<{ id: string; attempt: number; record: Record<string, unknown> }> = [];
  readonly orphans = new Set<string>();
  prepared = 0;

  constructor(private readonly git: FakeGit) {}

  async prepare(): Promise<PreparedWorktree> {
    this.prepared++;
    return { copied: [], deps: { method: 'none', reason: null, ms: 0 } };
  }
  async included(): Promise<string[]> {
    return [];
  }
  transcript(id: string, attempt: number, record: Record<string, unknown>): void {
    this.transcripts.push({ id, attempt, record });
  }
  async flush(): Promise<void> {}
  async removeOrphan(path: string): Promise<void> {
    this.orphans.delete(path);
  }
  async entries(): Promise<string[]> {
    const worktrees = (await this.git.listWorktrees()).slice(1).map((w) => w.path);
    return [...worktrees, ...this.orphans].map((p) => p.split('/').at(-1)!);
  }
  async exists(path: string): Promise<boolean> {
    return this.git.hasWorktree(path) || this.orphans.has(path);
  }
}
