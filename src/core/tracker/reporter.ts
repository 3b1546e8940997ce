/**
 * The tracker hears back: each tracker task's issue carries the one state label of its status and one
 * status comment ({@link statusComment}), kept in step with the task.
 *
 * Invariants:
 * - one update at a time per issue, the latest state winning: changes that arrive while one is being
 *   written are folded into the next;
 * - the comment is found again (by its marker, among the token user's own comments) before any is
 *   created, so a restart never adds a second one; after that it is edited in place, and only when its
 *   text changed;
 * - state labels other than the wanted one are removed, the tracker label itself is never touched, and the
 *   issue is never closed;
 * - a tracker with workflow states (Linear) is moved only to the states the setting names, so an issue
 *   reaches a completed state only when the person named one for `merged`;
 * - a tracker that fails leaves the fleet running: the failure is logged, the issue is tried again with
 *   its latest state by {@link TrackerReporter.retry} (each poll) or the next change.
 */
import type { TaskState } from '../../domain/types.js';
import { type TrackerSetting, trackerIssueNumber } from '../../domain/tracker-setting.js';
import type { StatusComment, TrackerPort } from '../../ports/tracker.js';
import { STATUS_MARKER, stateLabels, statusComment, trackerState } from './status-comment.js';

type Log = (level: 'info' | 'warn', message: string) => void;

interface IssueMemory {
  /** the state labels the issue carries, as last read or written; null when not known */
  labels: Set<string> | null;
  commentId: StatusComment['id'] | null;
  /** the workflow state last moved to (Linear), or null */
  moved: string | null;
  commentBody: string | null;
  /** what the last update was made for: a change of anything else (tokens, cost) alone writes nothing */
  key: string | null;
}

export class TrackerReporter {
  readonly #port: TrackerPort;
  readonly #setting: TrackerSetting;
  readonly #log: Log;
  readonly #memory = new Map<number, IssueMemory>();
  readonly #pending = new Map<number, TaskState>();
  readonly #running = new Map<number, Promise<void>>();
  readonly #failed = new Map<number, TaskState>();

  constructor(port: TrackerPort, setting: TrackerSetting, log: Log) {
    this.#port = port;
    this.#setting = setting;
    this.#log = log;
  }

  /** The labels the tracker listed for an issue (a pass's list): what is removed is only what is there. */
  seed(number: number, labels: readonly string[]): void {
    const memory = this.#remember(number);
    memory.labels = new Set(labels.filter((l) => l.startsWith(this.#setting.labelPrefix)));
  }

  /** A task changed: its issue is brought in step (a task that names no issue of this tracker is ignored). */
  update(task: Readonly<TaskState>): void {
    const number = trackerIssueNumber(this.#setting, task.id);
    if (number === null) return;
    this.#pending.set(number, structuredClone(task as TaskState));
    this.#failed.delete(number);
    if (!this.#running.has(number)) this.#running.set(number, this.#drain(number));
  }

  /** Issues whose last update failed are tried again with their latest state. */
  retry(): void {
    const failed = [...this.#failed.values()];
    this.#failed.clear();
    for (const task of failed) this.update(task);
  }

  /** Resolves when every update asked for so far has been written or has failed. */
  async drained(): Promise<void> {
    while (this.#running.size > 0) await Promise.all([...this.#running.values()]);
  }

  async #drain(number: number): Promise<void> {
    try {
      for (let task = this.#pending.get(number); task !== undefined; task = this.#pending.get(number)) {
        this.#pending.delete(number);
        try {
          await this.#write(number, task);
        } catch (error) {
          this.#failed.set(number, task);
          this.#log('warn', `tracker: ${task.id} not brought in step: ${(error as Error).message}`);
        }
      }
    } finally {
      this.#running.delete(number);
    }
  }

  async #write(number: number, task: TaskState): Promise<void> {
    const memory = this.#remember(number);
    const key = [task.status, task.phase, task.attempt, task.pr?.number, task.pr?.state, task.reason].join('|');
    if (memory.key === key) return;
    if (this.#setting.stateLabels !== false) await this.#relabel(number, memory, task);
    const state = trackerState(task.status);
    if (state !== null && this.#port.moveTo !== undefined && this.#setting.states?.[state] !== undefined) {
      const name = this.#setting.states[state]!;
      if (memory.moved !== name) await this.#port.moveTo(number, state);
      memory.moved = name;
    }
    const body = statusComment(task, this.#setting.type);
    if (memory.commentId === null) {
      const found = await this.#port.findComment(number, STATUS_MARKER);
      if (found !== null) Object.assign(memory, { commentId: found.id, commentBody: found.body });
    }
    if (memory.commentId === null) {
      const made = await this.#port.createComment(number, body);
      Object.assign(memory, { commentId: made.id, commentBody: body });
    } else if (memory.commentBody !== body) {
      await this.#port.editComment(memory.commentId, body);
      memory.commentBody = body;
    }
    memory.key = key;
  }

  async #relabel(number: number, memory: IssueMemory, task: TaskState): Promise<void> {
    const { all, wanted } = stateLabels(this.#setting.labelPrefix, task.status);
    const present = memory.labels ?? new Set(all);
    const add = wanted !== null && (memory.labels === null || !present.has(wanted)) ? [wanted] : [];
    const remove = all.filter((l) => l !== wanted && present.has(l));
    if (add.length > 0 || remove.length > 0) {
      await this.#port.relabel(number, add, remove);
      memory.labels = new Set(wanted === null ? [] : [wanted]);
    }
  }

  #remember(number: number): IssueMemory {
    let memory = this.#memory.get(number);
    if (memory === undefined) {
      memory = { labels: null, commentId: null, commentBody: null, key: null, moved: null };
      this.#memory.set(number, memory);
    }
    return memory;
  }
}
