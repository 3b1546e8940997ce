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
  constructor(readonly pid: number, lockPath: string) {
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
    super(`disk full: ${path} could not be written; the run stops — free some space, then start again (state is written as soon as there is room)`);
  }
}
