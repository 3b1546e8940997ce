/**
 * How the fleet's finished tasks land: the person's merge, discard, retry and approve, the merge queue, and
 * the routing of a task that lands by pull request (`land: pr`) to the forge instead of base. It owns the
 * parts that do it (FleetActions, Landing, Merging, PullRequests); every status change still goes through
 * the task lifecycle. Invariant: a task whose `land:` is `pr` is never merged into base by loopfleet — the
 * forge merges it, and a sync sees that.
 */
import { autonomyOf } from '../../domain/task-rules.js';
import type { GitPort } from '../../ports/git.js';
import type { FleetConfig, TaskSpec } from '../../domain/types.js';
import type { FleetEmitter } from '../task/events.js';
import { FleetActions } from '../land/branch-commands.js';
import type { TaskPaths } from '../../domain/layout.js';
import { Landing } from '../land/landing.js';
import type { QueueResult } from '../land/merge-queue.js';
import { Merging } from '../land/merging.js';
import type { Pipeline } from '../attempt/pipeline.js';
import type { PortPool } from '../attempt/port-pool.js';
import type { SetupTrust } from '../attempt/setup-trust.js';
import type { FleetState } from '../task/state.js';
import type { ForgeLink } from '../land/pr/forge-link.js';
import { PullRequests, type SyncResult } from '../land/pr/pull-requests.js';

/** What the merge queue and the task runner both work with: the same worktrees, ports and pipeline. */
export interface SharedParts {
  lifecycle: FleetState['lifecycle'];
  pipeline: Pipeline;
  events: FleetEmitter;
  ports: PortPool;
  paths: TaskPaths;
  repoRoot: string;
  base: string;
  parentEnv: NodeJS.ProcessEnv;
}

export interface FleetLandingServices {
  shared: SharedParts;
  state: FleetState;
  git: GitPort;
  setupTrust: SetupTrust;
  forge: ForgeLink | null;
  forgeMissing: string | null;
  /** ticks `[x]` on the task's item in BACKLOG.md; false when the item is gone */
  tickDone: (id: string) => Promise<boolean>;
  spec: (id: string) => TaskSpec | undefined;
  specs: () => ReadonlyMap<string, TaskSpec>;
  config: () => FleetConfig;
  order: () => readonly string[];
  /** --auto-merge: every verified task lands unasked */
  autoMerge: boolean;
  markRan: (id: string) => void;
  /** run the scheduler again: a command may have queued a task */
  schedule: () => void;
  stop: AbortSignal;
}

export class FleetLanding {
  readonly #s: FleetLandingServices;
  readonly #actions: FleetActions;
  readonly #merges: Merging;
  readonly #pulls: PullRequests;
  readonly #landing: Landing;

  constructor(services: FleetLandingServices) {
    this.#s = services;
    const { shared } = services;
    const { events } = shared;
    this.#actions = new FleetActions({
      git: services.git,
      lifecycle: shared.lifecycle,
      base: shared.base,
      paths: shared.paths,
      tickDone: services.tickDone,
      markRan: services.markRan,
      recurring: (id) => services.spec(id)?.everyMs !== undefined,
      setupTrust: services.setupTrust,
      log: (message, id) => events.emit('log', { level: 'info', message, ...(id === undefined ? {} : { id }) }),
    });
    const landing = new Landing({ ...shared, git: services.git, actions: this.#actions });
    this.#landing = landing;
    this.#merges = new Merging({ landing, actions: this.#actions, events, stop: services.stop });
    this.#pulls = new PullRequests({
      ...shared,
      git: services.git,
      link: services.forge,
      missing: services.forgeMissing,
      landing,
      spec: services.spec,
      specs: services.specs,
      config: services.config,
      order: services.order,
      tickDone: services.tickDone,
      autoLand: (id) => {
        const spec = services.spec(id);
        return spec !== undefined && this.#autoLands(spec);
      },
      signal: services.stop,
      log: (id, message, level = 'info') => events.emit('log', { level, message, ...(id === 'fleet' ? {} : { id }) }),
    });
  }

  /**
   * Merge a verified task; under `land: pr`, push its branch and open or update its pull request instead —
   * after its tip passed its checks here ({@link Landing.checkBeforeMerge}), or the task goes back.
   */
  async merge(id: string): Promise<void> {
    if (this.#pulls.lands(id)) {
      if (await this.#landing.checkBeforeMerge(id, this.#s.specs(), this.#s.config(), this.#s.stop))
        await this.#pulls.publish(id);
    } else await this.#merges.merge(id, this.#s.specs(), this.#s.config());
    this.#s.schedule();
  }

  /** whether any task lands through a pull request (`land: pr`) */
  get landsByPr(): boolean {
    return this.#s.order().some((id) => this.#pulls.lands(id));
  }

  /** One pass over the open pull requests (see {@link syncPulls}); tasks it sends back start as usual. */
  async sync(): Promise<SyncResult> {
    const result = await this.#pulls.sync();
    this.#s.schedule();
    return result;
  }

  /** Verified tasks landing by pull request with none open have theirs opened or found again (a run's start). */
  openPending(): Promise<string[]> {
    return this.#pulls.openPending();
  }

  /** The merge queue over `ids` (see Fleet.mergeAll); tasks that land by pull request have their PRs opened or updated. */
  async mergeAll(ids: readonly string[]): Promise<QueueResult> {
    // The forge merges those that land by pull request.
    for (const id of ids.filter((i) => this.#pulls.lands(i) && this.#s.state.get(i)?.status === 'verified'))
      await this.#pulls.afterVerified(id);
    const result = await this.#merges.land(
      ids.filter((i) => !this.#pulls.lands(i)),
      this.#s.specs(),
      this.#s.config(),
    );
    this.#s.schedule();
    return result;
  }

  /** A task's attempt ended: a verified one whose autonomy lets it land goes through the merge queue, or to its PR. */
  async afterRun(spec: TaskSpec): Promise<void> {
    const verified = this.#s.state.get(spec.id)?.status === 'verified';
    if (this.#pulls.lands(spec.id)) {
      // Landed on the forge: a sync merges it once CI is green when its autonomy allows (`landReady`).
      if (verified) await this.#pulls.afterVerified(spec.id);
      return;
    }
    if (this.#autoLands(spec) && verified) await this.#landVerified(spec.id);
  }

  /**
   * At start: the verified tasks a run before left unlanded (it was killed while its merge queue ran, or
   * before it reached them) whose autonomy lets them land, in backlog order.
   */
  unlanded(): string[] {
    return this.#s.order().filter((id) => {
      const spec = this.#s.spec(id);
      return (
        spec !== undefined &&
        this.#s.state.get(id)?.status === 'verified' &&
        !this.#pulls.lands(id) &&
        this.#autoLands(spec)
      );
    });
  }

  /**
   * {@link unlanded} tasks through the merge queue. One whose merge commit is already on base (the run died
   * after the merge, before its state was saved) is only marked merged — the merge finds it merged — so
   * none lands twice.
   */
  async resumeLanding(ids: readonly string[]): Promise<void> {
    this.#s.shared.events.emit('log', {
      level: 'info',
      message: `merge queue: landing ${ids.length} verified task(s) a run before left unlanded: ${ids.join(', ')}`,
    });
    await this.mergeAll(ids);
  }

  /** A branch newly verified, or base moved by a merge: predict the verified branches' conflicts again. */
  forecast(): void {
    this.#merges.forecast(this.#s.order());
  }

  /** Stop the merge queue after the task it is on (its check is aborted; base stays at the last good merge). */
  stopLanding(): void {
    this.#merges.stopLanding();
  }

  /** A task awaiting approval runs again implementing `plan` (default: the explorer's plan, as it is). */
  approve(id: string, plan?: string): void {
    this.#actions.approve(id, plan);
    this.#s.schedule();
  }

  async discard(id: string): Promise<void> {
    const pr = this.#s.state.get(id)?.pr;
    await this.#actions.discard(id);
    // loopfleet never closes a pull request itself: the person is told where it stays open.
    if (pr?.state === 'open')
      this.#s.shared.events.emit('log', {
        level: 'warn',
        id,
        message: `PR #${pr.number} stays open on the forge: close it there (${pr.url})`,
      });
    this.#s.schedule();
  }

  /** A failed or discarded task runs again with a fresh budget; a conflict one is rebased (or replayed, see FleetActions.retry). */
  async retry(id: string): Promise<void> {
    if (await this.#actions.retry(id)) this.#s.schedule();
  }

  /**
   * A split task whose parts have all landed: its own check runs on base as it is now; passing, the task is
   * merged with them (its worktree and empty branch removed, its item ticked), failing, it fails saying so.
   */
  async finishParent(id: string): Promise<void> {
    const { lifecycle, paths, base } = this.#s.shared;
    const parts = this.#s.state.get(id)?.parts ?? [];
    // Parts that landed as pull requests are on the remote's base, not on the local one: checked there.
    const byPr = this.#pulls.lands(id);
    let unfetched = '';
    const onto = byPr
      ? await this.#pulls.fetchedBase().catch((error: Error) => {
          unfetched = ` (${error.message})`;
          return null;
        })
      : base;
    if (this.#s.stop.aborted || lifecycle.get(id)?.status !== 'queued') return;
    if (onto === null) {
      this.#s.markRan(id);
      lifecycle.fail(id, {
        gate: null,
        reason: `its parts landed, but ${base} could not be fetched to check it${unfetched}`,
      });
      return;
    }
    const outcome = await this.#landing.checkOnBase(id, this.#s.specs(), this.#s.config(), this.#s.stop, onto);
    if (this.#s.stop.aborted || lifecycle.get(id)?.status !== 'queued') return;
    this.#s.markRan(id);
    const where = byPr ? `${base} as the remote holds it` : base;
    if (!outcome.pass) {
      lifecycle.fail(id, {
        gate: null,
        reason: `its parts landed, but its check fails on ${where}: ${outcome.reason}`,
      });
      return;
    }
    await this.#s.git.removeWorktree(paths.worktreeOf(id), true);
    const branch = paths.branchOf(id);
    if (await this.#s.git.isMerged(branch, onto)) await this.#s.git.deleteBranch(branch, true);
    const ticked = await this.#s.tickDone(id);
    lifecycle.partsLanded(
      id,
      `its ${parts.length} parts landed (${parts.join(', ')}) and its check passes on ${where}${ticked ? '' : '; its item was no longer in BACKLOG.md to tick'}`,
    );
  }

  /** Resolves once every merge, forecast and pull request pass started so far has ended. */
  async settled(): Promise<void> {
    await this.#merges.settled();
    await this.#pulls.settled();
  }

  #autoLands(spec: TaskSpec): boolean {
    return this.#s.autoMerge || autonomyOf(spec, this.#s.config()) === 'auto';
  }

  /** A verified task whose autonomy lets it land (`auto`, or --auto-merge): the one place that merges it unasked. */
  async #landVerified(id: string): Promise<void> {
    // Through the merge queue: rebased onto base as it is now and checked again before it lands.
    await this.mergeAll([id]).catch((error: Error) =>
      this.#s.shared.events.emit('log', { level: 'warn', id, message: `auto-merge: ${error.message}` }),
    );
  }
}
