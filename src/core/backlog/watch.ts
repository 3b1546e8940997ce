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
/** A new parse, a text that does not parse, or the file gone (deleted or renamed away, and still gone). */
export type BacklogChange = ParsedBacklog | { error: InputErrors } | { gone: true };

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
  /** how long the file must stay missing before it counts as gone; default 1 s */
  goneAfterMs?: number;
}

/** The text, or null when there is no file; unreadable for another reason is reported as a change error. */
async function readText(file: BacklogFile): Promise<string | null> {
  return (await file.readIfPresent())?.toString('utf8') ?? null;
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
    let text: string | null;
    try {
      text = await readText(file);
    } catch (e) {
      onChange({
        error: new InputErrors([new InputError(file.path, null, e instanceof Error ? e.message : String(e))]),
      });
      return;
    }
    if (closed || text === last) return;
    if (text === null) {
      // Missing for a moment while an editor renames its new copy into place: gone only if it stays gone.
      if (goneTimer === null)
        goneTimer = setTimeout(() => {
          goneTimer = null;
          reads = reads.then(confirmGone);
        }, goneAfterMs);
      return;
    }
    last = text;
    let change: BacklogChange;
    try {
      change = parseBacklog(text, file.path, { takenIds: options.takenIds?.() ?? [] });
    } catch (e) {
      const error =
        e instanceof InputErrors
          ? e
          : new InputErrors([new InputError(file.path, null, e instanceof Error ? e.message : String(e))]);
      change = { error };
    }
    onChange(change);
  };

  const confirmGone = async (): Promise<void> => {
    if (closed || last === null) return;
    if ((await readText(file).catch(() => '')) !== null) return;
    last = null;
    onChange({ gone: true });
  };
  let goneTimer: NodeJS.Timeout | null = null;
  const goneAfterMs = options.goneAfterMs ?? 1000;

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
      if (goneTimer) clearTimeout(goneTimer);
      stop();
    },
  };
}
