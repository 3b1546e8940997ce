import { acquireLock, type FleetLock } from '../adapters/store/fleet-lock.js';
import { FsBacklogFile } from '../adapters/store/file-store.js';
import { watchBacklog, type BacklogWatcher } from '../core/backlog/watch.js';
import { addIds, addParts, tickDone } from '../core/backlog/write-back.js';
import { runnableTasks } from '../core/backlog/parse.js';
import { Fleet } from '../core/fleet/fleet.js';
import { FleetState } from '../core/task/state.js';
import { WORK_DIR } from '../domain/layout.js';
import type { Backlog, FleetGates, TaskSpec } from '../domain/types.js';
import type { FleetServices } from '../core/fleet/fleet.js';
import { readBacklog, resolveBase, type Repo } from './repo.js';
import { keepParse } from './backlog-cache.js';
import { scanGitConfig } from '../adapters/git/config-scan.js';
import { neutraliseConfig } from '../adapters/git/exec.js';
import { SimpleGitAdapter } from '../adapters/git/simple-git.js';
import { assertKeptSandboxHolds, selfTestCacheDir } from '../adapters/sandbox/selftest-cache.js';
import { buildServices, serviceLog } from './services.js';
import { guardLimits } from './limit-guard.js';
import { SessionTelemetry, type TelemetrySources } from './session-telemetry.js';
import { landOf } from '../core/land/pr/forge-link.js';
import type { QueueAccess } from '../adapters/queue/queue-guard.js';
import type { OpenedQueue } from './queue-executor.js';
import { openExchanges, type ExchangesOption } from './exchanges.js';
import { openTracker, type TrackerSession, type TrackerTuning } from './tracker-session.js';

export interface Overrides {
  concurrency?: number;
  fleetGates?: Partial<FleetGates>;
  /** only `loopfleet demo` sets it, for its own repository where bubblewrap is missing (see {@link demo}) */
  sandbox?: 'off';
  /** what the backlog cannot say of a task: `loopfleet eval` gives each eval task its text and hidden tests */
  amend?: (spec: TaskSpec) => TaskSpec;
}

export interface SessionOptions {
  overrides: Overrides;
  autoMerge: boolean;
  /** --no-wait: a rate or usage limit fails the task and ends the run instead of pausing the fleet */
  noWait?: boolean;
  /** re-read BACKLOG.md when it changes */
  watch: boolean;
  env: NodeJS.ProcessEnv;
  /** false for merge/discard/prune: no credentials needed */
  requireModel?: boolean;
  /** `--queue`: attempts run on workers fed through this Redis; absent: in this process */
  queue?: QueueAccess;
  /** replace services (the demo and tests inject their own model client) */
  services?: (services: FleetServices) => FleetServices;
  /** a coordinator's queue depth and worker count for the OpenTelemetry gauges (default: the local queue, 1) */
  telemetry?: TelemetrySources;
  /** a task lands by pull request and the forge cannot be reached (no token, no remote): refuse to start (exit 2); default: for a run, not for merge/discard/retry */
  needForge?: boolean;
  /** aborts every forge request in flight, and those to come (a signal to `loopfleet sync`) */
  forgeSignal?: AbortSignal;
  /** `--record DIR` / `--replay DIR`: every model exchange kept, or played back with no model */
  exchanges?: ExchangesOption;
  /** the tracker's and the forge's client waits (tests shorten them, never skip them) */
  trackerTuning?: TrackerTuning;
  forgeTuning?: TrackerTuning;
}

export interface Session {
  fleet: Fleet;
  backlog: Backlog;
  services: FleetServices;
  /** settings of the person's git configuration the run turns off ({@link scanGitConfig}), said once at start */
  gitWarnings: string[];
  /** the run's traces and metrics (OTEL_EXPORTER_OTLP_*ENDPOINT): closed with the session */
  telemetry: SessionTelemetry;
  /** with --queue: the workers live at start (a warning when none takes jobs), said once at start */
  queueNotice: { level: 'info' | 'warn'; message: string } | null;
  /** the tracker (`tracker:`), for a server that hears its webhooks ({@link TrackerSession.hear}); null without one */
  tracker: TrackerSession | null;
  close(): Promise<void>;
}

function applyOverrides(backlog: Backlog, overrides: Overrides): Backlog {
  const config = { ...backlog.config, fleetGates: { ...backlog.config.fleetGates } };
  if (overrides.concurrency !== undefined) config.concurrency = overrides.concurrency;
  if (overrides.sandbox !== undefined) config.sandbox = overrides.sandbox;
  for (const [key, value] of Object.entries(overrides.fleetGates ?? {})) {
    if (value !== undefined) (config.fleetGates as unknown as Record<string, number | null>)[key] = value;
  }
  const tasks = runnableTasks(backlog);
  return { ...backlog, config, tasks: overrides.amend === undefined ? tasks : tasks.map(overrides.amend) };
}

/**
 * The forge of a backlog whose tasks land by pull request (`forge:`, `remote:`, the token from the
 * environment). Without one, a run refuses to start when `needForge`, and otherwise says why at the first PR.
 */
async function forgeServices(
  backlog: Backlog,
  git: SimpleGitAdapter,
  options: SessionOptions,
): Promise<Pick<FleetServices, 'forge' | 'forgeMissing'>> {
  const remote = backlog.config.remote ?? 'origin';
  // Loaded only for a backlog that lands by pull request: the forge clients are large, and most runs need none.
  const { openForge, requireForge } = await import('../adapters/forge/open.js');
  const pr = backlog.config.pr;
  const input = {
    setting: backlog.config.forge ?? 'auto',
    git,
    remote,
    env: options.env,
    ...(pr === undefined ? {} : { allow: pr.allow, timeoutMs: pr.timeoutMs }),
    ...(options.forgeSignal === undefined ? {} : { signal: options.forgeSignal }),
    ...(options.forgeTuning === undefined ? {} : { tuning: options.forgeTuning }),
  };
  // A run (the TUI, --overnight, --watch) must not spend a night on work that cannot land: exit 2 naming what is missing.
  const opened =
    (options.needForge ?? options.requireModel ?? true)
      ? await requireForge(input, backlog.path)
      : await openForge(input);
  if (opened.kind === 'forge')
    return { forge: { forge: opened.forge, remote, ...(opened.auth === undefined ? {} : { auth: opened.auth }) } };
  return { forge: null, forgeMissing: `land: pr needs a forge: ${opened.reason}` };
}

/**
 * Everything a run needs, in an order that writes nothing until the input is known good: validate the
 * backlog and base first, then take the lock, then prune what a crash left and open state.
 */
export async function openSession(repo: Repo, options: SessionOptions): Promise<Session> {
  // A session that runs no task works from state even when BACKLOG.md is gone (it ticks nothing then).
  const fromState = !(options.requireModel ?? true);
  const first = await readBacklog(repo, false, [], fromState);
  const checked = applyOverrides(first.backlog, options.overrides);
  // Before any git runs: programs of the person's config that resolve into a work tree are turned off for
  // every git of this process (GitExec clients made from here on carry the overrides).
  const gitConfig = await scanGitConfig(repo.root);
  neutraliseConfig(gitConfig.overrides);
  const git = new SimpleGitAdapter(repo.root);
  const base = await resolveBase(repo, checked, git);
  const exchanges = options.exchanges === undefined ? null : await openExchanges(options.exchanges, checked);
  const needsModel = (options.requireModel ?? true) && options.exchanges?.mode !== 'replay';
  let services = await buildServices(repo, checked, options.env, needsModel, git);
  if (options.services !== undefined) services = options.services(services);
  if (exchanges !== null) services = exchanges.wrap(services);
  if (
    services.forge === undefined &&
    (checked.config.land === 'pr' || checked.tasks.some((t) => landOf(t, checked.config) === 'pr'))
  ) {
    services = { ...services, ...(await forgeServices(checked, git, options)) };
  }
  // `tracker:` without a repository or a token refuses a run here (exit 2), before anything is written.
  const tracker = await openTracker(checked, git, options.env, !fromState, options.trackerTuning);
  // Before anything is written or any task runs: a sandbox weaker than promised refuses the start (exit 2).
  // merge, discard, retry and prune run no task, so they do not wait for the self-test.
  // A pass is kept per sandbox configuration in the person's cache, never in the repository or a worktree.
  if (services.sandboxed && (options.requireModel ?? true))
    await assertKeptSandboxHolds(services.runner, { dir: selfTestCacheDir(options.env), untrusted: [repo.root] });
  // Redis must answer and the remote must be there before the lock is taken (exit 2, nothing written).
  let log: (level: 'info' | 'warn', message: string) => void = (level, message) =>
    serviceLog.target(level === 'info' ? 'warn' : level, message);
  // Telemetry before the queue: each job carries its attempt's trace context (traceparentOf).
  const telemetry = await SessionTelemetry.open(options.env);
  let remote: OpenedQueue | null = null;
  if (options.queue !== undefined) {
    try {
      // Loaded only with --queue: BullMQ and ioredis are a large part of a start without it.
      const { openQueue } = await import('./queue-executor.js');
      remote = await openQueue(
        options.queue,
        services,
        (level, message) => log(level, message),
        telemetry.traceparentOf,
        checked.config.remote ?? 'origin',
      );
    } catch (error) {
      await telemetry.close();
      throw error;
    }
  }
  if (remote !== null) services = remote.services;
  let watcher: BacklogWatcher | null = null;
  // loopfleet's own writes to BACKLOG.md are announced to the watcher so they do not come back as edits.
  const onWrite = (before: string, after: string) => watcher?.expectWrite(before, after);
  const backlogFile = new FsBacklogFile(repo.backlogPath);
  services = {
    ...services,
    tickDone: (id) => tickDone(backlogFile, id, { onWrite }),
    writeParts: (parent, lines) => addParts(backlogFile, parent, lines, { onWrite }),
  };
  const lock: FleetLock = await acquireLock(repo.lockPath).catch(async (error: unknown) => {
    await telemetry.close();
    await remote?.close();
    throw error;
  });
  let unguard = () => {};
  try {
    await exchanges?.start();
    await services.git.ensureExcluded(`/${WORK_DIR}/`);
    const state = await FleetState.open(services.store, services.clock);
    // The tracker's new issues join BACKLOG.md before it is read; a tracker that is down is said, not fatal.
    if (tracker !== null && !fromState) await tracker.pass();
    const known = state.all().map((t) => t.id);
    // Read again under the lock; parsed again only when it changed or a task gets an id now.
    const read = await readBacklog(repo, true, known, fromState, first);
    if (read.complete && read.kept !== true && read.text !== null) {
      try {
        await keepParse(repo.workDir, read.text, read.backlog);
      } catch (error) {
        // Not kept (a full or read-only disk): the next session parses the text again, nothing else is lost.
        if (!['ENOSPC', 'EROFS', 'EACCES', 'EPERM', 'EDQUOT'].includes((error as NodeJS.ErrnoException).code ?? ''))
          throw error;
      }
    }
    const backlog = applyOverrides(read.backlog, options.overrides);
    const fleet = new Fleet(services, {
      repoRoot: repo.root,
      backlog,
      base,
      autoMerge: options.autoMerge,
      parentEnv: options.env,
      noWait: options.noWait === true,
    });
    telemetry.attach(fleet, { ...remote?.telemetry, ...options.telemetry });
    await fleet.open(state);
    unguard = guardLimits((error) => fleet.resourceLimit(error));
    log = (level, message) => fleet.events.emit('log', { level, message });
    const queueNotice = remote === null ? null : await remote.census();
    serviceLog.target = (level, message) => fleet.events.emit('log', { level, message: `model client: ${message}` });
    const pruned = await fleet.prune();
    for (const line of pruned.removed) fleet.events.emit('log', { level: 'info', message: `pruned ${line}` });
    if (options.watch) {
      watcher = await watchBacklog(
        backlogFile,
        (change) => {
          if ('error' in change) {
            fleet.events.emit('log', { level: 'warn', message: `BACKLOG.md not applied: ${change.error.message}` });
            return;
          }
          if ('gone' in change) {
            fleet.backlogGone();
            return;
          }
          fleet.backlogBack();
          const apply = () => fleet.applyBacklog(applyOverrides(change.backlog, options.overrides));
          if (change.missingIds.length === 0) {
            apply();
            return;
          }
          addIds(backlogFile, change.missingIds, { onWrite }).then(apply, (error: Error) =>
            fleet.events.emit('log', {
              level: 'error',
              message: `could not write task ids to BACKLOG.md: ${error.message}`,
            }),
          );
        },
        { takenIds: () => fleet.tasks().map((t) => t.id) },
      );
    }
    // Last before the session is handed over: the tracker's first lines reach whoever subscribes to it.
    tracker?.attach(fleet, options.watch, !fromState);
    let closing: Promise<void> | null = null;
    return {
      fleet,
      backlog,
      services,
      gitWarnings: gitConfig.warnings,
      telemetry,
      queueNotice,
      tracker,
      close: () =>
        (closing ??= (async () => {
          watcher?.close();
          try {
            await fleet.stop();
            await tracker?.close();
          } finally {
            unguard();
            await telemetry.close();
            await remote?.close();
            await lock.release();
          }
        })()),
    };
  } catch (error) {
    unguard();
    await telemetry.close();
    await remote?.close();
    await lock.release();
    throw error;
  }
}
