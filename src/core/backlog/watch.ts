/**
 * Re-parses BACKLOG.md when its content changes (BacklogFile.watch reports every event that may be one).
 *
 * Invariants: `onChange` is called only when the text differs from the last text seen (a touch or a save
 * without changes is silent); a write loopfleet announces through `expectWrite` is silent too, unless a
 * person's change was folded into it. Reads happen one at a time, in event order.
 */
import { InputError, InputErrors } from '../../domain/errors.js';
import type { BacklogFile } from '../../ports/files.js';
import { parseBacklog, type ParsedBacklog } from './parse.js';
export type BacklogChange = ParsedBacklog | { error: InputErrors };

export interface BacklogWatcher {
  /**
   * loopfleet itself replaced the text `before` with `after`. When `before` is the text last seen, the
   * change is loopfleet's alone and `after` is not reported; otherwise a person's edit is in it and it is.
   */
  expectWrite(before: string, after: string): void;
  close(): void;
}

export interface WatchOptions {
  debounceMs?: number;
  /** the text the caller has already parsed; when absent, the file's text at the start of the watch */
  initial?: string;
  /** ids a new task must not get (see parseBacklog) */
  takenIds?: () => Iterable<string>;
}

async function readText(file: BacklogFile): Promise<string | null> {
  try {
    return (await file.read()).toString('utf8');
  } catch {
    // Missing for a moment while an editor renames its new copy into place; the rename brings another event.
    return null;
  }
}

/** Starts watching; resolves once the text the watch compares against is known. */
export async function watchBacklog(
  file: BacklogFile,
  onChange: (change: BacklogChange) => void,
  options: WatchOptions = {},
): Promise<BacklogWatcher> {
  const debounceMs = options.debounceMs ?? 150;
  let last: string | null = options.initial ?? null;
  let timer: NodeJS.Timeout | null = null;
  let closed = false;
  // Checks run one at a time, in the order their events came.
  let reads: Promise<void> = Promise.resolve();

  const check = async (): Promise<void> => {
    if (closed) return;
    const text = await readText(file);
    if (closed || text === null || text === last) return;
    last = text;
    let change: BacklogChange;
    try {
      change = parseBacklog(text, file.path, { takenIds: options.takenIds?.() ?? [] });
    } catch (e) {
      const error =
        e instanceof InputErrors ? e : new InputErrors([new InputError(file.path, null, e instanceof Error ? e.message : String(e))]);
      change = { error };
    }
    onChange(change);
  };

  const schedule = (): void => {
    if (closed) return;
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = null;
      reads = reads.then(check);
    }, debounceMs);
  };

  // Watching starts before the first read, so that a save in between is not missed.
  const stop = file.watch(schedule);
  if (options.initial !== undefined) schedule();
  else last = await readText(file);

  return {
    expectWrite(before, after) {
      if (before === last) last = after;
    },
    close() {
      closed = true;
      if (timer) clearTimeout(timer);
      stop();
    },
  };
}
