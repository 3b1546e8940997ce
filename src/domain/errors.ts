/**
 * Errors the CLI maps to exit codes. Anything else that escapes is a bug and exits 1 with its stack.
 */

/** Bad usage or bad input: exit 2, nothing started, nothing written. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
  readonly exitCode = 2;
}

/** A problem in an input file, located precisely. Exit 2. */
export class InputError extends UsageError {
  constructor(
    readonly file: string,
    readonly line: number | null,
    readonly problem: string,
  ) {
    super(`${file}${line === null ? '' : `:${line}`}: ${problem}`);
  }
}

/** Several input problems at once, so a person can fix them all in one edit. */
export class InputErrors extends UsageError {
  constructor(readonly errors: InputError[]) {
    super(errors.map((e) => e.message).join('\n'));
  }
}

/** An operation refused to protect the user's work (dirty checkout, unmerged branch...). Exit 1. */
export class RefusedError extends Error {
  override readonly name = 'RefusedError';
  readonly exitCode = 1;
}

/** A task worktree holds uncommitted changes to tracked files, so git was not run on it. Exit 1. */
export class DirtyWorktreeError extends RefusedError {
  constructor(
    readonly worktree: string,
    readonly files: readonly string[],
    doing: string,
  ) {
    super(`dirty worktree: ${files.join(', ')} in ${worktree} (uncommitted changes no commit holds): ${doing}`);
  }
}

/** Another fleet holds the repository. Exit 2: nothing was started. */
export class LockedError extends UsageError {
  constructor(
    readonly pid: number,
    lockPath: string,
  ) {
    super(`another loopfleet (pid ${pid}) is running on this repository (${lockPath}); stop it first`);
  }
}

/** A gate tripped. Thrown inside a pipeline to unwind it; never escapes the engine. */
export class GateError extends Error {
  override readonly name = 'GateError';
  constructor(
    readonly gate: import('./types.js').GateName,
    readonly scope: 'task' | 'fleet',
    message: string,
  ) {
    super(message);
  }
}

/** The fleet is stopping (quit, SIGINT): work in flight is abandoned, its attempt will restart. */
export class StopError extends Error {
  override readonly name = 'StopError';
}

/**
 * The model provider refused for a rate or usage limit (HTTP 429/529, or a CLI's "usage limit reached ·
 * resets 5am"). Not the task's fault: the fleet should pause new model work until `resetAt` (epoch ms;
 * null when unknown: back off) without using up an attempt.
 */
export class RateLimitError extends Error {
  override readonly name = 'RateLimitError';
  constructor(
    message: string,
    readonly resetAt: number | null,
    readonly kind: 'rate' | 'usage' | 'overloaded',
  ) {
    super(message);
  }
}

/** A CLI agent could not do its work for a reason the person must fix (login, missing binary, denied tool). */
export class AgentSetupError extends Error {
  override readonly name = 'AgentSetupError';
  constructor(
    message: string,
    readonly reason: 'not-logged-in' | 'missing-binary' | 'permission-denied' | 'api-error' | 'read-only-violated',
  ) {
    super(message);
  }
}

/**
 * The disk is full: a file loopfleet keeps (its state) could not be written. Exit 1, no stack trace: the
 * run stops, and what was not saved is still held and written by the next save that finds room.
 */
export class DiskFullError extends Error {
  override readonly name = 'DiskFullError';
  readonly exitCode = 1;
  constructor(readonly path: string) {
    super(
      `disk full: ${path} could not be written; the run stops — free some space, then start again (state is written as soon as there is room)`,
    );
  }
}

const LIMITS = {
  EMFILE:
    'too many open files (EMFILE): loopfleet reached its limit on open files; raise it (e.g. `ulimit -n 4096` in the shell that starts loopfleet) or lower `concurrency:`, then start again',
  ENFILE:
    "the system's table of open files is full (ENFILE): close other programs or raise the system's limit (fs.file-max), then start again",
  ENOMEM: 'out of memory (ENOMEM): free some memory or lower `concurrency:`, then start again',
} as const;
export type LimitCode = keyof typeof LIMITS;

/**
 * The machine ran out of something no attempt can fix (open files, memory). Exit 1, no stack trace: the run
 * stops, the attempt it was in is queued again (not charged), and the report is written.
 */
export class ResourceLimitError extends Error {
  override readonly name = 'ResourceLimitError';
  readonly exitCode = 1;
  constructor(readonly code: LimitCode) {
    super(`${LIMITS[code]} — the run stops; the tasks it was on are queued again`);
  }

  /** The limit `error` (or anything in its cause chain, or a message that wraps one) names; null for any other error. */
  static of(error: unknown): ResourceLimitError | null {
    for (
      let e = error, depth = 0;
      e !== undefined && e !== null && depth < 5;
      e = (e as { cause?: unknown }).cause, depth++
    ) {
      if (e instanceof ResourceLimitError) return e;
      const code = (e as NodeJS.ErrnoException).code;
      if (code !== undefined && code in LIMITS) return new ResourceLimitError(code as LimitCode);
      const named = /\b(EMFILE|ENFILE|ENOMEM)\b/.exec(e instanceof Error ? e.message : String(e));
      if (named !== null) return new ResourceLimitError(named[1] as LimitCode);
    }
    return null;
  }
}
