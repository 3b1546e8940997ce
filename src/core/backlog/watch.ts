/**
 * Re-parses BACKLOG.md when its content changes. The parent folder is watched, not the file, because
 * editors save by writing a new file and renaming it over the old one, which ends a watch on the file.
 *
 * Invariants: `onChange` is called only when the text differs from the last text seen (a touch or a save
 * without changes is silent); a write loopfleet announces through `expectWrite` is silent too, unless a
 * person's change was folded into it.
 */
import { watch, readFileSync, type FSWatcher } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { InputError, InputErrors } from '../../domain/errors.js';
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

function readText(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    // Missing for a moment while an editor renames its new copy into place; the rename brings another event.
    return null;
  }
}

export function watchBacklog(path: string, onChange: (change: BacklogChange) => void, options: WatchOptions = {}): BacklogWatcher {
  const file = resolve(path);
  const name = basename(file);
  const debounceMs = options.debounceMs ?? 150;
  let last = options.initial ?? readText(file);
  let timer: NodeJS.Timeout | null = null;
  let closed = false;

  const check = (): void => {
    timer = null;
    if (closed) return;
    const text = readText(file);
    if (text === null || text === last) return;
    last = text;
    let change: BacklogChange;
    try {
      change = parseBacklog(text, path, { takenIds: options.takenIds?.() ?? [] });
    } catch (e) {
      const error =
        e instanceof InputErrors ? e : new InputErrors([new InputError(path, null, e instanceof Error ? e.message : String(e))]);
      change = { error };
    }
    onChange(change);
  };

  const schedule = (): void => {
    if (closed) return;
    if (timer) clearTimeout(timer);
    timer = setTimeout(check, debounceMs);
  };

  const watcher: FSWatcher = watch(dirname(file), { persistent: false }, (_event, filename) => {
    if (filename === null || filename === name) schedule();
  });
  watcher.on('error', () => watcher.close());
  if (options.initial !== undefined) schedule();

  return {
    expectWrite(before, after) {
      if (before === last) last = after;
    },
    close() {
      closed = true;
      if (timer) clearTimeout(timer);
      watcher.close();
    },
  };
}
