/** File access the engine needs outside task worktrees: role definitions and BACKLOG.md. */

/** Read-only text files (role definitions). */
export interface TextFiles {
  /** the file's text, or null when there is no file at `path`; any other failure is thrown */
  readText(path: string): Promise<string | null>;
}

/**
 * BACKLOG.md, the one file of the user's checkout loopfleet edits.
 *
 * Invariant: `replace` writes only over the exact bytes the edit was computed from, atomically (a reader
 * sees the old file or the new one, never a mix) and keeping the file's mode; a symbolic link is written
 * through to its target.
 */
export interface BacklogFile {
  /** the path as given (used in messages) */
  readonly path: string;
  /** the file's bytes as they are now; throws when it cannot be read (missing, unreadable) */
  read(): Promise<Buffer>;
  /** the file's bytes, or null when there is no file (deleted, renamed away); other failures throw */
  readIfPresent(): Promise<Buffer | null>;
  /**
   * Replaces the file with `content` when it still holds `expected`, re-read right before the switch.
   * Returns false, having written nothing, when it holds anything else (a person saved meanwhile).
   */
  replace(expected: Buffer, content: Buffer): Promise<boolean>;
  /**
   * Calls `onEvent` whenever the file may have changed, including when an editor renames a new copy over
   * it (the watch outlives the file it started on). Returns the function that ends the watch.
   */
  watch(onEvent: () => void): () => void;
}
