import type { GitPort } from '../../ports/git.js';
import type { FleetConfig, TaskSpec } from '../../domain/types.js';
import { DirtyWorktreeError, RefusedError } from '../../domain/errors.js';
import { conflictDetail, ForecastMemo, forecastFleet } from './conflict-forecast.js';
import { conflictEvidence, replayConflict } from './conflict-work.js';
import type { FleetEmitter } from '../task/events.js';
import type { FleetActions } from './branch-commands.js';
import type { TaskPaths } from '../../domain/layout.js';
import { runMergeQueue, type QueueResult, type QueueSteps } from './merge-queue.js';
import type { Pipeline } from '../attempt/pipeline.js';
import type { RecheckOutcome } from '../attempt/attempt-io.js';
import type { PortPool } from '../attempt/port-pool.js';
import { taskEnv } from '../attempt/task-env.js';
import type { TaskLifecycle } from '../task/lifecycle.js';

/** What landing verified work needs from its fleet, given once. */
export interface LandingServices {
  git: GitPort;
  pipeline: Pipeline;
  lifecycle: TaskLifecycle;
  actions: FleetActions;
  paths: TaskPaths;
  ports: PortPool;
  events: FleetEmitter;
  repoRoot: string;
  base: string;
  parentEnv: NodeJS.ProcessEnv;
}

/**
 * Verified work onto base: the merge queue's steps on the real worktrees, and the forecast of which verified
 * branches would conflict. Invariant: base only moves through `actions.merge`, after the branch's checks
 * passed on the base it is merged into (or the branch already contained that base).
 */
export class Landing {
  readonly #s: LandingServices;
  readonly #memo = new ForecastMemo();

  constructor(services: LandingServices) {
    this.#s = services;
  }

  /** The verified tasks among `ids`, in that order, landed one on top of the other. */
  async land(
    ids: readonly string[],
    specs: ReadonlyMap<string, TaskSpec>,
    config: FleetConfig,
    signal: AbortSignal,
  ): Promise<QueueResult> {
    const verified = ids.filter((id) => this.#s.lifecycle.get(id)?.status === 'verified' && specs.has(id));
    const result = await runMergeQueue(verified, this.#steps(specs, config, signal));
    await this.forecast(ids);
    return result;
  }

  /**
   * The merge queue's steps over the verified tasks among `ids` onto `onto` (a ref: the remote's base, for
   * pull requests), with `land` in place of the local merge. Nothing is forecast.
   */
  async queue(
    ids: readonly string[],
    specs: ReadonlyMap<string, TaskSpec>,
    config: FleetConfig,
    signal: AbortSignal,
    onto: string,
    land: QueueSteps['land'],
  ): Promise<QueueResult> {
    const verified = ids.filter((id) => this.#s.lifecycle.get(id)?.status === 'verified' && specs.has(id));
    return runMergeQueue(verified, { ...this.#steps(specs, config, signal, onto), land });
  }

  /**
   * Before a person's merge of task `id` as it is (`m`, `loopfleet merge`): its branch's tip is checked in
   * the sandbox unless it passed its checks here already; a failing check sends the task back. True when
   * the merge may go on.
   */
  async checkBeforeMerge(
    id: string,
    specs: ReadonlyMap<string, TaskSpec>,
    config: FleetConfig,
    signal: AbortSignal,
  ): Promise<boolean> {
    if (this.#s.lifecycle.get(id)?.status !== 'verified' || !specs.has(id)) return true;
    const steps = this.#steps(specs, config, signal);
    if (await steps.checked(id)) return true;
    steps.log(id, 'not checked here at this commit; checking it before it is merged');
    const recheck = await steps.recheck(id);
    if (signal.aborted) return false;
    if (recheck.pass) return true;
    const reason = `before it lands: ${recheck.reason}`;
    this.#s.events.emit('log', { level: 'warn', id, message: `merge: ${reason}; back to the queue for a new attempt` });
    this.#s.lifecycle.sendBack(
      id,
      reason,
      `On the commit that was to be merged, the check fails.\n\n${recheck.evidence}`,
    );
    return false;
  }

  /**
   * The checks of a split task whose parts have all landed, on base as it is now: its worktree (which holds
   * no commit of its own; made on base when it is missing) is brought up to base, then checked as the merge
   * queue checks a branch. `onto`: the ref it is checked on — the remote's base, fetched, when its parts
   * landed as pull requests.
   */
  async checkOnBase(
    id: string,
    specs: ReadonlyMap<string, TaskSpec>,
    config: FleetConfig,
    signal: AbortSignal,
    onto = this.#s.base,
  ): Promise<RecheckOutcome> {
    const worktree = this.#s.paths.worktreeOf(id);
    try {
      // On workers the task's explorer ran elsewhere: its worktree is made here, on base, when it is missing.
      await this.#s.git.addWorktree(worktree, this.#s.paths.branchOf(id), this.#s.base);
      if (!(await this.#s.git.rebase(worktree, onto))) {
        const reason = `its worktree does not come up to ${onto}`;
        return { pass: false, reason, evidence: reason };
      }
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      return { pass: false, reason, evidence: reason };
    }
    return this.#steps(specs, config, signal, onto).recheck(id);
  }

  /** Predicts, touching nothing, the conflicts of every verified branch among `ids` (backlog order). */
  async forecast(ids: readonly string[]): Promise<void> {
    const { lifecycle, paths, base } = this.#s;
    const branches = ids
      .filter((id) => lifecycle.get(id)?.status === 'verified')
      .map((id) => ({ id, branch: paths.branchOf(id) }));
    const found = await forecastFleet({ git: this.#s.git, base, branches, memo: this.#memo });
    for (const { id } of branches) {
      // A task may have left `verified` while the forecast ran (a merge, a discard): skip it then.
      if (lifecycle.get(id)?.status === 'verified') lifecycle.forecast(id, found.get(id) ?? []);
    }
  }

  #steps(
    specs: ReadonlyMap<string, TaskSpec>,
    config: FleetConfig,
    signal: AbortSignal,
    onto = this.#s.base,
  ): QueueSteps {
    const { git, lifecycle, paths } = this.#s;
    const base = onto;
    const log = (id: string, message: string, level: 'info' | 'warn' = 'info') =>
      this.#s.events.emit('log', { level, id, message });
    return {
      rebase: async (id) => {
        const branch = paths.branchOf(id);
        if (await git.isMerged(base, branch)) return { kind: 'unchanged' };
        const worktree = paths.worktreeOf(id);
        try {
          if (await git.rebase(worktree, base)) return { kind: 'rebased' };
          const replayed = await replayConflict(git, { id, worktree, branch, base });
          return { kind: 'conflict', files: replayed.files, evidence: replayed.evidence };
        } catch (error) {
          if (error instanceof DirtyWorktreeError) {
            const files = [...error.files];
            const evidence = `The worktree held uncommitted changes to ${files.join(', ')}, so it was not rebased onto ${base}. Commit nothing by hand in a task's worktree: loopfleet commits each attempt's work itself.`;
            return { kind: 'dirty', files, evidence };
          }
          if (!(error instanceof RefusedError)) throw error;
          // Git refused and changed nothing (an untracked file in the way): the attempt gets the conflict to read.
          log(id, error.message, 'warn');
          const detail = conflictDetail(base, await git.forecastConflicts(base, branch));
          return { kind: 'conflict', files: detail.files, evidence: conflictEvidence(base, detail, null) };
        }
      },
      recheck: async (id) => {
        const spec = specs.get(id)!;
        const task = lifecycle.get(id)!;
        const worktree = paths.worktreeOf(id);
        const branch = paths.branchOf(id);
        const port = this.#s.ports.acquire(id);
        try {
          return await this.#s.pipeline.recheck({
            spec,
            config,
            base: onto,
            repoRoot: this.#s.repoRoot,
            worktree,
            branch,
            attempt: task.attempt,
            verifyOnly: true,
            previousPlan: null,
            approvedPlan: null,
            stopAfterPlan: false,
            env: taskEnv(this.#s.parentEnv, {
              taskId: id,
              worktree,
              branch,
              base: this.#s.base,
              gitRoot: this.#s.repoRoot,
              port,
              passed: config.env,
            }),
            // A recheck runs no setup.
            hostEnv: {},
            evidence: null,
            signal,
            observer: {
              phase: () => undefined,
              agentEvent: () => undefined,
              output: (phase, chunk) => this.#s.events.emit('phase-output', { id, phase, chunk }),
              notice: (message, level) => log(id, message, level),
            },
            budget: { beforeCall: () => undefined, remainingMs: () => config.checkTimeoutMs },
          });
        } finally {
          this.#s.ports.release(id);
        }
      },
      checked: (id) => this.#s.pipeline.checkedHere(id, paths.branchOf(id)),
      land: async (id) => {
        try {
          await this.#s.actions.merge(id);
        } catch (error) {
          if (error instanceof RefusedError) return { kind: 'refused', reason: error.message };
          throw error;
        }
        const after = lifecycle.get(id)!;
        if (after.status === 'merged') return { kind: 'merged', commit: '' };
        // A conflict now means base moved under the queue: the lifecycle already says `conflict`.
        return { kind: 'conflict', files: [] };
      },
      sendBack: (id, reason, evidence) => {
        log(id, `merge queue: ${reason}; back to the queue for a new attempt`, 'warn');
        lifecycle.sendBack(id, reason, evidence);
      },
      stopped: () => signal.aborted,
      log: (id, message) => log(id, message),
    };
  }
}
