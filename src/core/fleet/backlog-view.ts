import {
  TASK_STATUSES,
  type Backlog,
  type FleetConfig,
  type TaskSpec,
  type TaskState,
  type TaskStatus,
} from '../../domain/types.js';
import { taskGates } from '../budget/gates.js';
import type { FleetState } from '../task/state.js';

/**
 * The tasks BACKLOG.md lists now, in its order, and its settings, as the fleet runs them. Invariants:
 * - `order` is the backlog's order (the scheduler's priority) and `specs` holds exactly those ids;
 * - `ports:` keeps the range the fleet started with, since running tasks hold ports from it;
 * - `missing` is true only between gone() and back(): while BACKLOG.md is deleted or renamed away.
 */
export class BacklogView {
  #config: FleetConfig;
  #specs = new Map<string, TaskSpec>();
  #order: string[] = [];
  #missing = false;

  constructor(backlog: Backlog) {
    this.#config = backlog.config;
    this.#set(backlog.tasks);
  }

  get config(): FleetConfig {
    return this.#config;
  }

  get specs(): ReadonlyMap<string, TaskSpec> {
    return this.#specs;
  }

  get order(): readonly string[] {
    return this.#order;
  }

  get missing(): boolean {
    return this.#missing;
  }

  /** Take the backlog as it is now; returns the ids it added and the ones it no longer lists. */
  replace(backlog: Backlog): { added: string[]; removed: string[] } {
    const before = new Set(this.#specs.keys());
    this.#config = { ...backlog.config, ports: this.#config.ports };
    this.#set(backlog.tasks);
    const added = [...this.#specs.keys()].filter((id) => !before.has(id));
    const removed = [...before].filter((id) => !this.#specs.has(id));
    return { added, removed };
  }

  /**
   * A split task's parts, listed right after it (and after parts it has already) until BACKLOG.md, which
   * they are written to, is read again.
   */
  addParts(parent: string, parts: readonly TaskSpec[]): string[] {
    const fresh = parts.filter((p) => !this.#specs.has(p.id));
    const at = this.#order.indexOf(parent);
    if (at < 0 || fresh.length === 0) return [];
    let end = at + 1;
    while (end < this.#order.length && this.#specs.get(this.#order[end]!)?.parent === parent) end++;
    this.#order = [...this.#order.slice(0, end), ...fresh.map((p) => p.id), ...this.#order.slice(end)];
    for (const p of fresh) this.#specs.set(p.id, p);
    return fresh.map((p) => p.id);
  }

  /** Every listed task has a record, with the gates its spec and the settings give it. */
  ensure(state: FleetState): void {
    for (const spec of this.#specs.values()) state.lifecycle.ensure(spec, taskGates(spec, this.#config));
  }

  /** The tasks in backlog order, then the ones the backlog no longer lists that are not queued. */
  records(state: FleetState): Readonly<TaskState>[] {
    const seen = new Set(this.#order);
    const rest = state.all().filter((t) => !seen.has(t.id) && t.status !== 'queued');
    return [...this.#order.map((id) => state.get(id)).filter((t) => t !== undefined), ...rest];
  }

  /**
   * How many of `records` have each status, without listing them: every record but a queued one the
   * backlog no longer lists. Its cost follows the number of queued tasks, not of all tasks.
   */
  counts(state: FleetState): Record<TaskStatus, number> {
    const life = state.lifecycle;
    const counts = Object.fromEntries(TASK_STATUSES.map((s) => [s, life.countOf(s)])) as Record<TaskStatus, number>;
    let listed = 0;
    for (const id of life.queuedIds()) if (this.#specs.has(id)) listed++;
    counts.queued = listed;
    return counts;
  }

  /** BACKLOG.md went away; false when it was already gone. */
  gone(): boolean {
    if (this.#missing) return false;
    this.#missing = true;
    return true;
  }

  /** BACKLOG.md is back; false when it was not gone. */
  back(): boolean {
    if (!this.#missing) return false;
    this.#missing = false;
    return true;
  }

  #set(tasks: TaskSpec[]): void {
    this.#specs = new Map(tasks.map((t) => [t.id, t]));
    this.#order = tasks.map((t) => t.id);
  }
}
