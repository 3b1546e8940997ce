import type { BacklogFile } from '../../src/ports/files.js';

/**
 * BacklogFile in memory. `beforeReplace` runs inside `replace` after the new content is ready and before
 * the comparison, which is where a person's save can land on a real disk.
 */
export class FakeBacklogFile implements BacklogFile {
  readonly path: string;
  content: Buffer | null;
  writes = 0;
  beforeReplace: (() => void) | null = null;
  readonly #watchers = new Set<() => void>();

  constructor(text: string | null, path = '/repo/BACKLOG.md') {
    this.path = path;
    this.content = text === null ? null : Buffer.from(text);
  }

  get text(): string | null {
    return this.content?.toString('utf8') ?? null;
  }

  /** a save by a person: new content, and a watch event */
  save(text: string): void {
    this.content = Buffer.from(text);
    for (const notify of this.#watchers) notify();
  }

  async read(): Promise<Buffer> {
    if (this.content === null) throw Object.assign(new Error(`ENOENT: ${this.path}`), { code: 'ENOENT' });
    return Buffer.from(this.content);
  }

  async readIfPresent(): Promise<Buffer | null> {
    return this.content === null ? null : Buffer.from(this.content);
  }

  /** the file deleted or renamed away: no content, and a watch event */
  remove(): void {
    this.content = null;
    for (const notify of this.#watchers) notify();
  }

  async replace(expected: Buffer, content: Buffer): Promise<boolean> {
    const hook = this.beforeReplace;
    this.beforeReplace = null;
    hook?.();
    if (this.content === null || !this.content.equals(expected)) return false;
    this.content = Buffer.from(content);
    this.writes++;
    for (const notify of this.#watchers) notify();
    return true;
  }

  watch(onEvent: () => void): () => void {
    this.#watchers.add(onEvent);
    return () => this.#watchers.delete(onEvent);
  }
}
