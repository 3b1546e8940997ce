import { mkdir, readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { Low } from 'lowdb';
import { JSONFile } from 'lowdb/node';
import { InputError } from '../domain/errors.js';
import { STATE_VERSION, type StateData, type StateStore } from '../ports/state-store.js';
import { DiskFullError } from '../domain/errors.js';

/**
 * state.json through lowdb: its JSONFile adapter writes through steno (temp file + rename), so a crash
 * mid-write leaves the previous state intact.
 */
export class LowdbStateStore implements StateStore {
  readonly #path: string;
  #db: Low<StateData | null> | null = null;

  constructor(path: string) {
    this.#path = path;
  }

  async load(): Promise<StateData | null> {
    let text: string;
    try {
      text = await readFile(this.#path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch (error) {
      throw new InputError(this.#path, null, `not valid JSON (${(error as Error).message}); move it aside to start afresh`);
    }
    if (typeof data !== 'object' || data === null || (data as StateData).version !== STATE_VERSION) {
      throw new InputError(this.#path, null, `unknown state format (expected version ${STATE_VERSION})`);
    }
    return data as StateData;
  }

  async save(data: StateData): Promise<void> {
    if (this.#db === null) {
      await mkdir(dirname(this.#path), { recursive: true });
      this.#db = new Low<StateData | null>(new JSONFile<StateData | null>(this.#path), null);
    }
    this.#db.data = data;
    try {
      await this.#db.write();
    } catch (error) {
      // The atomic write leaves the last good file in place; the caller keeps the data for a later save.
      if ((error as NodeJS.ErrnoException).code === 'ENOSPC' || (error as NodeJS.ErrnoException).code === 'EDQUOT') throw new DiskFullError(this.#path);
      throw error;
    }
  }
}
