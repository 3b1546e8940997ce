/**
 * Running git through simple-git with exit codes, full error messages and a predictable environment.
 *
 * Where git over agent-written trees runs: on the host, hardened. Every command loopfleet runs in a
 * worktree, a scratch tree or the person's checkout goes through GitExec, whose every client carries
 * HARDENING_CONFIG, so git itself executes nothing a tree or an agent wrote (no hooks, no fsmonitor, no
 * submodule recursion, no transport helpers); programs the person's own configuration names that resolve
 * into a work tree are found by {@link scanGitConfig} and turned off the same way (`neutraliseConfig`).
 * Running git inside the sandbox instead would not make its results trustworthy (the sandbox is where the
 * agent writes) and would need the person's `.git` bound writable into it; the index loopfleet commits is
 * rebuilt on the host from HEAD and the worktree's files ({@link commitSnapshot}), never the agent's.
 *
 * Invariants:
 * - every failure is a `GitCommandError` whose message holds the git command line and git's stderr;
 * - an exit code listed in `ok` is a result, not a failure (e.g. `merge-tree` exits 1 on a conflict);
 * - git runs in the C locale, without prompts, editors or pagers, with the environment {@link gitEnvironment}
 *   allows (no credential of loopfleet's or the person's but what one transport is given): an instance is
 *   bound to one folder.
 */
import { GitError, simpleGit, type SimpleGit } from 'simple-git';
import { gitEnvironment } from './environment.js';

/** Author and committer of everything loopfleet writes into a repository. */
export const LOOPFLEET_IDENTITY = { name: 'loopfleet', email: 'loopfleet@localhost' } as const;

/** The same identity through the environment, which takes precedence over the user's configuration. */
export const IDENTITY_ENV = {
  GIT_AUTHOR_NAME: LOOPFLEET_IDENTITY.name,
  GIT_AUTHOR_EMAIL: LOOPFLEET_IDENTITY.email,
  GIT_COMMITTER_NAME: LOOPFLEET_IDENTITY.name,
  GIT_COMMITTER_EMAIL: LOOPFLEET_IDENTITY.email,
};

/** `-c` options that make a commit work without any git identity, and without hooks or signing prompts. */
export const COMMIT_CONFIG = [
  '-c',
  `user.name=${LOOPFLEET_IDENTITY.name}`,
  '-c',
  `user.email=${LOOPFLEET_IDENTITY.email}`,
  '-c',
  'commit.gpgsign=false',
  // Hooks can live in the working tree (core.hooksPath=.husky); a task branch's tree is agent-written code.
  '-c',
  'core.hooksPath=/dev/null',
];

/**
 * `-c` options before every command any GitExec runs; each closes one way a tree loopfleet runs git over
 * could make git start a program on the host.
 */
export const HARDENING_CONFIG = [
  // Hooks: with `core.hooksPath=.husky` (husky 5–9) the hooks are files of the working tree, which an agent
  // rewrites; `read-tree`/`add` (post-index-change), `update-ref`/`branch -D` (reference-transaction),
  // `worktree add` and `checkout` (post-checkout), `rebase` (pre-rebase, post-rewrite) would run them.
  // /dev/null is no folder, so git finds no hook for any command (checked for each in git-host-attacks).
  'core.hooksPath=/dev/null',
  // A nested repository's or the person's `core.fsmonitor` is a program `status`/`add`/`diff` start.
  'core.fsmonitor=false',
  // Submodules and gitlinks an agent added to an index are never entered: entering one runs git with that
  // repository's config (its core.fsmonitor, its hooks).
  'submodule.recurse=false',
  'diff.ignoreSubmodules=all',
  'status.submoduleSummary=false',
  // No transport runs a command: `ext::` URLs run arbitrary programs, `file://` reads any repository on the
  // host; loopfleet's own commands are local and need no protocol at all.
  'protocol.allow=never',
  'protocol.ext.allow=never',
  'protocol.file.allow=never',
  // `core.sshCommand` of a repository config is a program; nothing here uses ssh.
  'core.sshCommand=false',
  // A pager is a program; output goes to loopfleet, never to a terminal.
  'core.pager=cat',
];

/** The person's settings that name a program resolving into a work tree, set empty (see {@link scanGitConfig}). */
let neutralised: readonly string[] = [];

/**
 * `key=value` settings added after HARDENING_CONFIG to every GitExec client made from now on; the config
 * scan's overrides, set once when a run or doctor starts.
 */
export function neutraliseConfig(overrides: readonly string[]): void {
  neutralised = [...overrides];
}

/** HARDENING_CONFIG and the current overrides as `-c` arguments, for git started outside GitExec. */
export function hardeningArgs(): string[] {
  return [...HARDENING_CONFIG, ...neutralised].flatMap((c) => ['-c', c]);
}

export { gitEnvironment } from './environment.js';

export class GitCommandError extends Error {
  override readonly name = 'GitCommandError';
  constructor(
    readonly args: readonly string[],
    readonly exitCode: number | null,
    readonly stderr: string,
    readonly stdout: string,
    options?: { cause?: unknown },
  ) {
    const detail = (
      stderr.trim() ||
      stdout.trim() ||
      (options?.cause instanceof Error ? options.cause.message : '')
    ).trim();
    super(
      `git ${args.join(' ')} failed${exitCode === null ? '' : ` (exit ${exitCode})`}: ${detail || 'no output'}`,
      options,
    );
  }
}

/**
 * What simple-git's error hook hands back for a nonzero exit; turned into a GitCommandError by `run`.
 * A GitError, because simple-git replaces any other error with a message-only copy.
 */
class ExitStatus extends GitError {
  constructor(
    readonly exitCode: number,
    readonly stdout: string,
    readonly stderr: string,
  ) {
    super(undefined, stderr || stdout);
  }
}

export interface GitOutput {
  stdout: string;
  exitCode: number;
}

export interface RunOptions {
  /** exit codes that are results rather than failures; default [0] */
  ok?: readonly number[];
}

/**
 * One folder, one environment. Cheap to create; holds no process.
 *
 * simple-git's typed API (`api`) is used wherever it has the command; `run` (its `raw()`) only for
 * commands it has no method for (worktree, merge-tree, commit-tree, update-ref, merge-base...) or whose
 * typed parser would lose what we need (NUL-separated names, exit codes that are results).
 */
export class GitExec {
  readonly #git: SimpleGit;
  readonly #env: Record<string, string>;
  #committer: SimpleGit | undefined;

  /**
   * `config`: `key=value` settings after HARDENING_CONFIG for every command of this instance
   * ({@link transportConfig})
   */
  constructor(
    readonly dir: string,
    env: Record<string, string> = gitEnvironment(),
    config: readonly string[] = [],
  ) {
    this.#env = env;
    this.#git = this.#client([...config]);
  }

  /** a simple-git client on `dir`; `config` becomes `-c` options before every command */
  #client(config: string[]): SimpleGit {
    const env = this.#env;
    const git = simpleGit({
      baseDir: this.dir,
      maxConcurrentProcesses: 16,
      trimmed: false,
      config: [...HARDENING_CONFIG, ...neutralised, ...config],
      // The environment is built deliberately (gitEnvironment): every variable in it is meant for git.
      allowEnvironment: Object.keys(env),
      // simple-git refuses arguments and variables that can make git run other programs or read other
      // configuration. Each one allowed here is needed, and none carries agent-written input:
      unsafe: {
        // our own `-c core.hooksPath=/dev/null` (HARDENING_CONFIG, COMMIT_CONFIG), which turns hooks *off*
        // for commands that would run agent-written ones;
        allowUnsafeHooksPath: true,
        // likewise our own HARDENING_CONFIG and the config scan's overrides, which set each of these to
        // nothing or to a program that does nothing (`false`, `cat`); no argument loopfleet passes that
        // could carry agent input (a path, after `--`; a ref, refused when it starts with `-`) is an option;
        allowUnsafeFsMonitor: true,
        allowUnsafeSubmodule: true,
        allowUnsafeProtocolOverride: true,
        allowUnsafeSshCommand: true,
        allowUnsafePager: true,
        allowUnsafeFilter: true,
        allowUnsafeDiffTextConv: true,
        allowUnsafeDiffExternal: true,
        allowUnsafeMergeDriver: true,
        allowUnsafeGpgProgram: true,
        allowUnsafeEditor: true,
        allowUnsafeCredentialHelper: true,
        // GIT_CONFIG_GLOBAL / GIT_CONFIG_SYSTEM / GIT_CONFIG inherited from the person's environment: git
        // must read the configuration they chose, as their own git does;
        allowUnsafeConfigPaths: true,
        // GIT_CONFIG_COUNT / GIT_CONFIG_PARAMETERS, which git itself sets when loopfleet runs under it
        // (an alias, a hook, `git -c ... loopfleet`) and which hold that caller's `-c` settings;
        allowUnsafeConfigEnvCount: true,
        // GIT_EXEC_PATH, which git sets for the programs it starts and some installations set globally:
        // it names the git installation to use, not a command of ours.
        allowUnsafeExec: true,
      },
      errors: (error, result) => {
        if (result.exitCode === 0) return error;
        return new ExitStatus(
          result.exitCode,
          Buffer.concat(result.stdOut).toString('utf8'),
          Buffer.concat(result.stdErr).toString('utf8'),
        );
      },
    }).env(env);
    // simple-git waits 50 ms after a command that printed nothing, in case output is late. By the time
    // stdout has ended no output can be late, so mark the command as having produced some.
    git.outputHandler((_command, stdout) => {
      stdout.once('end', () => stdout.emit('data', Buffer.alloc(0)));
    });
    return git;
  }

  /**
   * A call of simple-git's typed API; `what` names the command in errors. A nonzero exit becomes a
   * GitCommandError carrying the exit code, git's stdout and stderr.
   */
  async api<T>(what: readonly string[], call: (git: SimpleGit) => Promise<T>): Promise<T> {
    try {
      return await call(this.#git);
    } catch (error) {
      throw commandError(what, error);
    }
  }

  /** `api` on a client that commits as loopfleet, without hooks or signing (COMMIT_CONFIG) */
  async commitApi<T>(what: readonly string[], call: (git: SimpleGit) => Promise<T>): Promise<T> {
    this.#committer ??= this.#client(COMMIT_CONFIG.filter((_arg, i) => i % 2 === 1));
    try {
      return await call(this.#committer);
    } catch (error) {
      throw commandError(what, error);
    }
  }

  async run(args: string[], options: RunOptions = {}): Promise<GitOutput> {
    const ok = options.ok ?? [0];
    try {
      const stdout = await this.#git.raw(args);
      return { stdout, exitCode: 0 };
    } catch (error) {
      if (error instanceof ExitStatus && ok.includes(error.exitCode))
        return { stdout: error.stdout, exitCode: error.exitCode };
      throw commandError(args, error);
    }
  }

  /** stdout of a command that must succeed */
  async out(args: string[]): Promise<string> {
    return (await this.run(args)).stdout;
  }
}

function commandError(args: readonly string[], error: unknown): GitCommandError {
  if (error instanceof GitCommandError) return error;
  if (error instanceof ExitStatus) return new GitCommandError(args, error.exitCode, error.stderr, error.stdout);
  return new GitCommandError(args, null, '', '', { cause: error });
}

/** Lines of a command's output, without the empty last one. */
export function lines(stdout: string): string[] {
  return stdout.split('\n').filter((line) => line.length > 0);
}

/** Fields of NUL-separated output (`-z`). */
export function fields(stdout: string): string[] {
  return stdout.split('\0').filter((field) => field.length > 0);
}

/** Refuse names git would read as options; everything else is git's to validate. */
export function assertRefName(name: string, what: string): void {
  if (name.length === 0 || name.startsWith('-')) throw new Error(`invalid ${what}: ${JSON.stringify(name)}`);
}

/** `git diff --numstat -z` records; binary files count 0 lines. */
export function parseNumstat(stdout: string): Array<{ path: string; added: number; deleted: number }> {
  const stats: Array<{ path: string; added: number; deleted: number }> = [];
  for (const record of stdout.split('\0')) {
    const match = /^(-|\d+)\t(-|\d+)\t(.+)$/s.exec(record);
    if (!match?.[3]) continue;
    stats.push({
      path: match[3],
      added: match[1] === '-' ? 0 : Number(match[1]),
      deleted: match[2] === '-' ? 0 : Number(match[2]),
    });
  }
  return stats;
}
