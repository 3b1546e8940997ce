/**
 * A worker's repositories: one per remote URL under the cache folder (`<cache>/<hash of the URL>`), made
 * once and fetched into incrementally by each job (never a clone per task), with the task worktrees under
 * its `.loop-worktrees/`. Each holds the pipeline that runs jobs there, built from the worker's own
 * services (its model client, agents, process runner and sandbox).
 *
 * Invariant: in one repository, the git commands that change shared refs or the worktree list (fetch,
 * worktree add/remove/prune, ref updates) run one at a time: two jobs fetching the same base ref at once
 * would race on git's ref locks.
 */
import { createHash } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { existsSync } from 'node:fs';
import { GitExec, IDENTITY_ENV, gitEnvironment } from '../adapters/git/exec.js';
import { SimpleGitAdapter } from '../adapters/git/simple-git.js';
import { InProcessExecutor } from '../core/executor/attempt-executor.js';
import { Pipeline } from '../core/attempt/pipeline.js';
import { LOCK_FILE, STATE_FILE, WORK_DIR, BACKLOG_NAME } from '../domain/layout.js';
import type { FleetConfig } from '../domain/types.js';
import type { GitPort } from '../ports/git.js';
import type { FleetServices } from '../core/fleet/fleet.js';
import { buildServices } from './services.js';
import type { Repo } from './repo.js';

export function defaultCacheRoot(env: NodeJS.ProcessEnv): string {
  const base =
    env.XDG_CACHE_HOME !== undefined && env.XDG_CACHE_HOME !== '' ? env.XDG_CACHE_HOME : join(os.homedir(), '.cache');
  return join(base, 'loopfleet', 'repos');
}

export function cacheDirOf(root: string, remoteUrl: string): string {
  return join(root, createHash('sha256').update(remoteUrl).digest('hex').slice(0, 16));
}

export interface CachedRepo {
  repo: Repo;
  git: GitPort;
  services: FleetServices;
  pipeline: InProcessExecutor;
}

export class RepoCache {
  readonly #root: string;
  readonly #env: NodeJS.ProcessEnv;
  readonly #repos = new Map<string, Promise<CachedRepo>>();

  constructor(root: string, env: NodeJS.ProcessEnv) {
    this.#root = root;
    this.#env = env;
  }

  /** The repository for `remoteUrl` with the pipeline for a job of `config` (the sandbox setting is the job's). */
  get(remoteUrl: string, config: FleetConfig): Promise<CachedRepo> {
    const key = `${config.sandbox}\0${remoteUrl}`;
    let entry = this.#repos.get(key);
    if (entry === undefined) {
      entry = this.#open(remoteUrl, config);
      this.#repos.set(key, entry);
      // A repository that could not be made is tried again by the next job.
      entry.catch(() => this.#repos.delete(key));
    }
    return entry;
  }

  async #open(remoteUrl: string, config: FleetConfig): Promise<CachedRepo> {
    const root = cacheDirOf(this.#root, remoteUrl);
    await mkdir(root, { recursive: true });
    if (!existsSync(join(root, '.git'))) await new GitExec(root, gitEnvironment(IDENTITY_ENV)).run(['init', '--quiet']);
    const workDir = join(root, WORK_DIR);
    await mkdir(workDir, { recursive: true });
    const repo: Repo = {
      root,
      workDir,
      statePath: join(workDir, STATE_FILE),
      lockPath: join(workDir, LOCK_FILE),
      backlogPath: join(root, BACKLOG_NAME),
    };
    const git = serialised(new SimpleGitAdapter(root));
    await git.ensureExcluded(`/${WORK_DIR}/`);
    const services = await buildServices(repo, { path: repo.backlogPath, config, tasks: [] }, this.#env, true, git);
    return { repo, git, services, pipeline: new InProcessExecutor(new Pipeline(services)) };
  }
}

const SHARED_STATE: ReadonlySet<string> = new Set([
  'fetch',
  'addWorktree',
  'removeWorktree',
  'pruneWorktrees',
  'updateRef',
  'deleteBranch',
  'ensureExcluded',
]);

/** `git` with the commands of SHARED_STATE queued one after another. */
function serialised(git: SimpleGitAdapter): SimpleGitAdapter {
  let tail: Promise<unknown> = Promise.resolve();
  return new Proxy(git, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (typeof value !== 'function') return value;
      const method = value as (...args: unknown[]) => Promise<unknown>;
      if (typeof prop !== 'string' || !SHARED_STATE.has(prop)) return method.bind(target);
      return (...args: unknown[]) => {
        const next = tail.then(() => method.apply(target, args));
        tail = next.catch(() => undefined);
        return next;
      };
    },
  });
}
