import { mkdir, readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { TextFile } from 'lowdb/node';
import type { BaselineResult } from '../../domain/types.js';
import type { BaselineStore } from '../../ports/verification.js';

interface BaselineFile {
  version: 1;
  results: BaselineResult[];
}

/** Kept per file: enough for many base commits, bounded so the file cannot grow without end. */
const MAX_RESULTS = 200;

/**
 * `.loop-worktrees/baselines.json`: the checks' results on base commits. Written atomically (temp file and
 * rename); writes of one process are serialised. A file that is not ours (unparseable, another format) is
 * treated as empty and replaced on the next write: it only ever holds a cache.
 */
export class JsonBaselineStore implements BaselineStore {
  readonly #path: string;
  #queue: Promise<unknown> = Promise.resolve();
  #file: TextFile | null = null;

  constructor(path: string) {
    this.#path = path;
  }

  async #read(): Promise<BaselineResult[]> {
    let text: string;
    try {
      text = await readFile(this.#path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
    try {
      const data = JSON.parse(text) as BaselineFile;
      return data.version === 1 && Array.isArray(data.results) ? data.results : [];
    } catch {
      return []; // a cache: a broken file is rebuilt
    }
  }

  async get(commit: string, command: string): Promise<BaselineResult | null> {
    await this.#queue.catch(() => undefined);
    return (await this.#read()).findLast((r) => r.commit === commit && r.command === command) ?? null;
  }

  put(result: BaselineResult): Promise<void> {
    const next = this.#queue
      .catch(() => undefined)
      .then(async () => {
        const results = (await this.#read()).filter(
          (r) => !(r.commit === result.commit && r.command === result.command),
        );
        results.push(result);
        await mkdir(dirname(this.#path), { recursive: true });
        this.#file ??= new TextFile(this.#path);
        const data: BaselineFile = { version: 1, results: results.slice(-MAX_RESULTS) };
        await this.#file.write(`${JSON.stringify(data, null, 2)}\n`);
      });
    this.#queue = next;
    return next;
  }

  async all(): Promise<BaselineResult[]> {
    await this.#queue.catch(() => undefined);
    return this.#read();
  }
}
