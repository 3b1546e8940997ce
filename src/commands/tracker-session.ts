import { FsBacklogFile } from '../adapters/store/file-store.js';
import type { FleetHandle } from '../core/fleet/handle.js';
import { TrackerPass } from '../core/tracker/tracker-pass.js';
import { TrackerReporter } from '../core/tracker/reporter.js';
import type { TrackerChange } from '../core/tracker/webhook-change.js';
import { InputError } from '../domain/errors.js';
import type { TrackerSetting } from '../domain/tracker-setting.js';
import type { Backlog } from '../domain/types.js';
import type { GitPort } from '../ports/git.js';
import type { TrackerPort } from '../ports/tracker.js';

/**
 * The tracker of a session (`tracker:`): a pass over its labelled issues before the backlog is read, the
 * reporter that keeps each tracker task's issue in step, and under `--watch` a pass every `tracker.poll`.
 * A tracker that cannot be read leaves the fleet running on what BACKLOG.md holds, and says so.
 */

export interface TrackerTuning {
  msPerSecond?: number;
  writeSpacingMs?: number;
  maxRetries?: number;
  maxWaitSeconds?: number;
}

type Log = (level: 'info' | 'warn', message: string) => void;

export class TrackerSession {
  readonly #pass: TrackerPass;
  readonly #reporter: TrackerReporter;
  readonly #setting: TrackerSetting;
  /** lines said before the fleet exists, said through it once it does */
  #early: Array<[level: 'info' | 'warn', message: string]> = [];
  #log: Log = (level, message) => this.#early.push([level, message]);
  #timer: NodeJS.Timeout | null = null;
  #polling: Promise<void> | null = null;
  #again: Promise<void> | null = null;
  #down = false;

  constructor(port: TrackerPort, setting: TrackerSetting, backlogPath: string) {
    this.#setting = setting;
    const log: Log = (level, message) => this.#log(level, message);
    this.#pass = new TrackerPass(port, setting, new FsBacklogFile(backlogPath), log);
    this.#reporter = new TrackerReporter(port, setting, log);
  }

  /** One read of the tracker; new issues go into BACKLOG.md. Never throws: a tracker that is down is said. */
  async pass(): Promise<void> {
    try {
      const result = await this.#pass.run();
      for (const issue of result.issues) this.#reporter.seed(issue.number, issue.labels);
      if (this.#down) this.#log('info', `tracker: ${this.#setting.type} answers again`);
      this.#down = false;
    } catch (error) {
      if (!this.#down)
        this.#log(
          'warn',
          `tracker: ${this.#setting.type} could not be read (${(error as Error).message}); the fleet runs on what BACKLOG.md holds`,
        );
      this.#down = true;
    }
    this.#reporter.retry();
  }

  /**
   * A verified webhook's change ({@link webhookChange}): an issue opened, edited, labelled or reopened reads
   * the tracker now rather than at the next poll (one pass at a time; a change that arrives during a pass
   * is read by one more pass after it). Other changes are the pull request path's; they read nothing here.
   */
  hear(change: TrackerChange): Promise<void> {
    if (change.kind !== 'issue' || change.forge !== this.#setting.type || change.action === 'closed')
      return Promise.resolve();
    if (this.#polling !== null) {
      this.#again ??= this.#polling.then(() => {
        this.#again = null;
        return this.hear(change);
      });
      return this.#again;
    }
    this.#polling = this.pass().finally(() => (this.#polling = null));
    return this.#polling;
  }

  /** The fleet exists: its log takes the lines, each tracker task's issue is brought in step (`catchUp`), and kept so. */
  attach(fleet: FleetHandle, watch: boolean, catchUp = true): void {
    const early = this.#early;
    this.#early = [];
    this.#log = (level, message) => fleet.events.emit('log', { level, message });
    // Said once the caller of openSession has subscribed (it does so as soon as the session is open).
    setImmediate(() => {
      for (const [level, message] of early) this.#log(level, message);
    });
    fleet.events.on('task', ({ task }) => this.#reporter.update(task));
    // A run brings every tracker task's issue in step first; a merge or discard only reports what it changes.
    if (catchUp) for (const task of fleet.tasks()) this.#reporter.update(task);
    if (watch) {
      this.#timer = setInterval(() => {
        this.#polling ??= this.pass().finally(() => (this.#polling = null));
      }, this.#setting.pollEveryMs);
      this.#timer.unref();
    }
  }

  /** Stops polling; resolves once every update of the issues asked for so far is written or has failed. */
  async close(): Promise<void> {
    if (this.#timer !== null) clearInterval(this.#timer);
    await this.#polling;
    await this.#reporter.drained();
  }
}

/**
 * The session's tracker, or null without `tracker:`. A tracker that names no repository on its forge
 * (GitHub, GitLab), or has no token, is an InputError at `backlog.path` (exit 2, nothing started) for a run,
 * and no tracker otherwise.
 */
export async function openTracker(
  backlog: Backlog,
  git: Pick<GitPort, 'remoteUrl'>,
  env: Record<string, string | undefined>,
  run: boolean,
  tuning: TrackerTuning = {},
): Promise<TrackerSession | null> {
  const setting = backlog.config.tracker;
  if (setting === undefined) return null;
  if (setting.type === 'linear') {
    const { openLinearTracker } = await import('./tracker-linear.js');
    const options = { ...tuning, timeoutMs: backlog.config.pr?.timeoutMs ?? 30_000 };
    const port = await openLinearTracker(setting, backlog.path, env, run, options);
    return port === null ? null : new TrackerSession(port, setting, backlog.path);
  }
  const { chooseForge } = await import('../adapters/forge/select.js');
  const { findForgeToken } = await import('../adapters/forge/token.js');
  const { GitHubTracker } = await import('../adapters/tracker/github-tracker.js');
  const remote = backlog.config.remote ?? 'origin';
  const choice = chooseForge(backlog.config.forge ?? 'auto', await git.remoteUrl(remote), env, remote);
  let missing: string | null = null;
  if (choice.kind === 'none') missing = choice.reason;
  else if (choice.target.kind !== setting.type)
    missing = `the repository ${choice.target.repo} is on ${choice.target.kind}, not ${setting.type}`;
  if (missing === null && choice.kind === 'forge') {
    const token = await findForgeToken(choice.target, env);
    if (token.token === null) missing = token.missing;
    else {
      const options = {
        token: token.token,
        apiUrl: choice.target.apiUrl,
        timeoutMs: backlog.config.pr?.timeoutMs ?? 30_000,
        ...tuning,
      };
      const port =
        setting.type === 'gitlab'
          ? new (await import('../adapters/tracker/gitlab-tracker.js')).GitLabTracker(choice.target.repo, options)
          : new GitHubTracker(choice.target.repo, options);
      return new TrackerSession(port, setting, backlog.path);
    }
  }
  if (run) throw new InputError(backlog.path, null, `tracker: ${setting.type} needs its repository: ${missing}`);
  return null;
}
