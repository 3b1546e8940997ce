import { appendFile, mkdir, readFile, rm, stat, truncate, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { TextFile } from 'lowdb/node';
import { DiskFullError, InputError } from '../../domain/errors.js';
import { STATE_JOURNAL_FILE, STATE_RESERVE_FILE } from '../../domain/layout.js';
import {
  STATE_VERSION,
  applyChange,
  type StateChange,
  type StateData,
  type StateStore,
} from '../../ports/state-store.js';

/** The room kept for the state on a disk that fills up: enough for every running task's record many times. */
export const RESERVE_BYTES = 1 << 20;
/** The journal is folded into state.json once it is this many times as big as state.json (and ≥ 1 MB). */
const FOLD_FACTOR = 4;
const FOLD_MIN_BYTES = 1 << 20;
/** state.json is indented up to this many tasks */
const PRETTY_TASKS = 1000;

/** One journal line: a change, numbered. state.json's `seq` is the last number folded into it. */
interface JournalLine extends StateChange {
  seq: number;
}

const full = (error: unknown) => ['ENOSPC', 'EDQUOT'].includes((error as NodeJS.ErrnoException).code ?? '');

async function readOrNull(path: string): Promise<string | null> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

async function inode(path: string): Promise<number | null> {
  try {
    return (await stat(path)).ino;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

/**
 * state.json (written whole through lowdb's TextFile: steno's temp file + rename) and, next to it,
 * `state.journal`: one JSON line per change since, each the whole record of every task it changed.
 *
 * Invariants: a change costs one append of the records it names, whatever the number of tasks; a line
 * numbered at or below state.json's `seq` is already in it and is skipped on load, so reading a journal
 * older or newer than state.json never moves a task backwards; a torn last line (a crash, a full disk)
 * is cut off before the next append. `state.reserve` keeps RESERVE_BYTES on the disk: when the disk is
 * full it is given up and the change written in its room — the run still stops (DiskFullError), but what
 * was spent is on disk.
 */
export class LowdbStateStore implements StateStore {
  readonly #path: string;
  readonly #journal: string;
  readonly #reserve: string;
  #file: TextFile | null = null;
  #seq = 0;
  #snapshotBytes = 0;
  /** the journal's length as this store last wrote or read it; null until known */
  #journalBytes: number | null = null;
  #reserveKept = false;
  #tailChecked = false;

  constructor(path: string) {
    this.#path = path;
    this.#journal = join(dirname(path), STATE_JOURNAL_FILE);
    this.#reserve = join(dirname(path), STATE_RESERVE_FILE);
  }

  async load(): Promise<StateData | null> {
    // state.json replaced while it was read (a fold by the fleet that runs): read both again.
    for (let tries = 0; ; tries++) {
      const before = await inode(this.#path);
      const text = await readOrNull(this.#path);
      const journal = (await readOrNull(this.#journal)) ?? '';
      if ((await inode(this.#path)) !== before && tries < 5) continue;
      return this.#parse(text, journal);
    }
  }

  #parse(text: string | null, journal: string): StateData | null {
    let data: (StateData & { seq?: number }) | null = null;
    if (text !== null) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch (error) {
        throw new InputError(
          this.#path,
          null,
          `not valid JSON (${(error as Error).message}); move it aside to start afresh`,
        );
      }
      if (typeof parsed !== 'object' || parsed === null || (parsed as StateData).version !== STATE_VERSION) {
        throw new InputError(this.#path, null, `unknown state format (expected version ${STATE_VERSION})`);
      }
      data = parsed as StateData & { seq?: number };
    }
    const folded = data?.seq ?? 0;
    delete data?.seq;
    this.#seq = folded;
    this.#snapshotBytes = text?.length ?? 0;
    let good = 0; // bytes up to the end of the last whole line
    let offset = 0;
    const journalBytes = Buffer.byteLength(journal); // once: per line it made a long journal's load quadratic
    for (const line of journal.split('\n')) {
      const end = offset + Buffer.byteLength(line) + 1;
      const atEnd = end > journalBytes;
      offset = end;
      if (line.trim() === '') {
        if (!atEnd) good = end;
        continue;
      }
      let change: JournalLine;
      try {
        change = JSON.parse(line) as JournalLine;
      } catch (error) {
        if (atEnd) break; // torn by a crash: the change never finished
        throw new InputError(
          this.#journal,
          null,
          `line is not valid JSON (${(error as Error).message}); move it aside to start from state.json`,
        );
      }
      if (atEnd) break; // no newline yet: not finished either
      good = end;
      this.#seq = Math.max(this.#seq, change.seq);
      if (change.seq <= folded) continue;
      data ??= { version: STATE_VERSION, base: null, fleet: change.fleet, tasks: {} };
      applyChange(data, change);
    }
    this.#journalBytes = good;
    return data;
  }

  async save(data: StateData): Promise<void> {
    // Indented while a person might read it; one line once it is big (indenting a large state costs a third more).
    const tasks = Object.keys(data.tasks).length;
    const text = JSON.stringify({ ...data, seq: this.#seq }, null, tasks <= PRETTY_TASKS ? 2 : undefined);
    if (this.#file === null) {
      await mkdir(dirname(this.#path), { recursive: true });
      this.#file = new TextFile(this.#path);
    }
    try {
      await this.#file.write(text);
      // Every line is in state.json now; a crash before this leaves lines that load skips by their number.
      await writeFile(this.#journal, '');
    } catch (error) {
      // The atomic write leaves the last good file in place; the caller keeps the data for a later save.
      if (full(error)) throw new DiskFullError(this.#path);
      throw error;
    }
    this.#snapshotBytes = text.length;
    this.#journalBytes = 0;
  }

  async record(change: StateChange): Promise<void> {
    // Serialised before the first await: the caller may change the records right after the call.
    const text = JSON.stringify(change);
    if (this.#journalBytes === null) await this.load();
    if (!this.#tailChecked) {
      this.#tailChecked = true;
      await mkdir(dirname(this.#path), { recursive: true });
      // a torn line left by a crash is cut off, so the next change starts on a line of its own
      const size = (await stat(this.#journal).catch(() => null))?.size ?? 0;
      if (size > this.#journalBytes!) await truncate(this.#journal, this.#journalBytes!);
    }
    const line = `{"seq":${++this.#seq},${text.slice(1)}\n`;
    if (!this.#reserveKept) await this.#keepReserve();
    try {
      await this.#append(line);
    } catch (error) {
      if (!full(error)) throw error;
      // The disk is full: give up the reserve and write the change in its room; the run stops all the same.
      if (
        !(await rm(this.#reserve).then(
          () => true,
          () => false,
        ))
      )
        throw new DiskFullError(this.#journal);
      await this.#append(line).catch((again: unknown) => {
        throw full(again) ? new DiskFullError(this.#journal) : again;
      });
      throw new DiskFullError(this.#path);
    }
  }

  wantsSave(closing: boolean): boolean {
    const bytes = this.#journalBytes ?? 0;
    return closing ? bytes > 0 : bytes > Math.max(FOLD_MIN_BYTES, FOLD_FACTOR * this.#snapshotBytes);
  }

  /** Appends `line` whole or not at all: a partial write is cut off again. */
  async #append(line: string): Promise<void> {
    const before = this.#journalBytes ?? 0;
    try {
      await appendFile(this.#journal, line);
    } catch (error) {
      await truncate(this.#journal, before).catch(() => undefined);
      throw error;
    }
    this.#journalBytes = before + Buffer.byteLength(line);
  }

  async #keepReserve(): Promise<void> {
    this.#reserveKept = true;
    if ((await stat(this.#reserve).catch(() => null))?.size === RESERVE_BYTES) return;
    // Real bytes, not a sparse file: the room must be the disk's, not a promise of it.
    await writeFile(this.#reserve, Buffer.alloc(RESERVE_BYTES, 0)).catch(async (error: unknown) => {
      await rm(this.#reserve, { force: true });
      if (!full(error)) throw error;
    });
  }
}
