import { parentOf } from '../core/backlog/scan.js';
import type { FleetEvents, FleetSnapshotSummary } from '../core/task/events.js';
import type { FleetHandle } from '../core/fleet/handle.js';
import { TASK_STATUSES, type GateName, type TaskState, type TaskStatus } from '../domain/types.js';
import { appendAgentText, appendPhaseOutput, appendToolCall, emptyLog, type OutputLog } from './output-log.js';

/** A task snapshot and when the UI received it (for the live elapsed time of a running task). */
export interface TaskEntry {
  readonly task: TaskState;
  readonly receivedAt: number;
}

export interface Notice {
  readonly level: 'info' | 'warn' | 'error';
  readonly text: string;
}

/**
 * Everything the TUI knows about the fleet, built only from `fleet.tasks()`, `fleet.summary()` and events.
 *
 * Invariants: `order` holds each id once, in backlog order (first snapshot order, then later tasks appended
 * as they appear, a split task's parts right under it); every id in `order` has an entry in `tasks` and vice versa. Entries, logs and the maps
 * are replaced, never mutated, so unchanged tasks keep their identity across updates.
 */
export interface FleetUiState {
  readonly order: readonly string[];
  readonly tasks: ReadonlyMap<string, TaskEntry>;
  readonly summary: FleetSnapshotSummary;
  readonly summaryAt: number;
  /** streamed agent text and tool calls, per task */
  readonly output: ReadonlyMap<string, OutputLog>;
  /** streamed setup and check output, per task */
  readonly phaseOutput: ReadonlyMap<string, OutputLog>;
  /** the latest warning, error or gate the engine reported */
  readonly notice: Notice | null;
}

type Payload<K extends keyof FleetEvents> = FleetEvents[K][0];

export type FleetAction =
  | { type: 'task'; event: Payload<'task'>; at: number }
  | { type: 'agent-text'; event: Payload<'agent-text'> }
  | { type: 'tool-call'; event: Payload<'tool-call'> }
  | { type: 'usage'; event: Payload<'usage'>; at: number }
  | { type: 'phase-output'; event: Payload<'phase-output'> }
  | { type: 'gate'; event: Payload<'gate'> }
  | { type: 'backlog'; added: readonly TaskState[]; removed: readonly string[]; at: number }
  | { type: 'fleet'; summary: FleetSnapshotSummary; at: number }
  | { type: 'log'; event: Payload<'log'> }
  | { type: 'batch'; actions: readonly FleetAction[] };

export function initFleetState(
  fleet: Pick<FleetHandle, 'tasks' | 'summary'>,
  at = Date.now(),
  notice: Notice | null = null,
): FleetUiState {
  const tasks = new Map<string, TaskEntry>();
  const order: string[] = [];
  for (const task of fleet.tasks()) {
    if (tasks.has(task.id)) continue;
    order.push(task.id);
    tasks.set(task.id, { task, receivedAt: at });
  }
  return { order, tasks, summary: fleet.summary(), summaryAt: at, output: new Map(), phaseOutput: new Map(), notice };
}

/**
 * The maps a batch has already copied, so that the rest of the batch writes into them instead of copying
 * again: a batch of k events over n tasks costs O(n + k), not O(n·k). Safe because a map in the draft was
 * created by this batch and reaches no one (React, a memo) before the batch returns.
 */
type Draft = Partial<Record<'tasks' | 'output' | 'phaseOutput', ReadonlyMap<string, unknown>>>;

/** `current` as a map this batch may write into: the draft's own copy, made on the batch's first write. */
function own<V>(draft: Draft | null, key: keyof Draft, current: ReadonlyMap<string, V>): Map<string, V> {
  if (draft !== null && draft[key] === current) return current as Map<string, V>;
  const copy = new Map(current);
  if (draft !== null) draft[key] = copy;
  return copy;
}

function putTask(state: FleetUiState, task: TaskState, at: number, draft: Draft | null): FleetUiState {
  const tasks = own(draft, 'tasks', state.tasks);
  const known = state.tasks.has(task.id);
  tasks.set(task.id, { task, receivedAt: at });
  const order = known ? state.order : withNewTask(state.order, task.id);
  return { ...state, tasks, order };
}

/**
 * `order` with a task the view has not seen: at the end, except a part (`T-7.1`), which goes right after its
 * task and the parts already under it, as BACKLOG.md lists them.
 */
function withNewTask(order: readonly string[], id: string): string[] {
  const parent = parentOf(id);
  const at = parent === null ? -1 : order.indexOf(parent);
  if (at < 0) return [...order, id];
  let end = at + 1;
  while (end < order.length && parentOf(order[end]!) === parent) end++;
  return [...order.slice(0, end), id, ...order.slice(end)];
}

function updateLog(
  draft: Draft | null,
  key: 'output' | 'phaseOutput',
  logs: ReadonlyMap<string, OutputLog>,
  id: string,
  f: (log: OutputLog) => OutputLog,
): ReadonlyMap<string, OutputLog> {
  const next = own(draft, key, logs);
  next.set(id, f(logs.get(id) ?? emptyLog()));
  return next;
}

const GATE_LABEL: Readonly<Record<GateName, string>> = {
  attempts: 'attempts',
  tokens: 'tokens',
  time: 'time',
  cost: 'cost',
  'no-progress': 'no progress',
  fleet_tokens: 'fleet tokens',
  fleet_cost: 'fleet cost',
  fleet_time: 'fleet time',
};

export function fleetReducer(state: FleetUiState, action: FleetAction): FleetUiState {
  return reduce(state, action, null);
}

function reduce(state: FleetUiState, action: FleetAction, draft: Draft | null): FleetUiState {
  switch (action.type) {
    case 'batch': {
      const batch: Draft = draft ?? {};
      return action.actions.reduce((next, a) => reduce(next, a, batch), state);
    }
    case 'task':
      return putTask(state, action.event.task, action.at, draft);
    case 'usage': {
      const { id, task: usage, taskCostUsd, fleet } = action.event;
      const entry = state.tasks.get(id);
      const summary = { ...state.summary, totals: fleet };
      if (entry === undefined) return { ...state, summary, summaryAt: action.at };
      // Keep receivedAt: a usage report says nothing new about the task's elapsed time.
      const tasks = own(draft, 'tasks', state.tasks);
      tasks.set(id, { task: { ...entry.task, usage, costUsd: taskCostUsd }, receivedAt: entry.receivedAt });
      return { ...state, tasks, summary, summaryAt: action.at };
    }
    case 'agent-text': {
      const { id, role, attempt, text } = action.event;
      return {
        ...state,
        output: updateLog(draft, 'output', state.output, id, (log) => appendAgentText(log, role, attempt, text)),
      };
    }
    case 'tool-call': {
      const { id, role, attempt, name, input } = action.event;
      return {
        ...state,
        output: updateLog(draft, 'output', state.output, id, (log) => appendToolCall(log, role, attempt, name, input)),
      };
    }
    case 'phase-output': {
      const { id, phase, chunk } = action.event;
      return {
        ...state,
        phaseOutput: updateLog(draft, 'phaseOutput', state.phaseOutput, id, (log) =>
          appendPhaseOutput(log, phase, chunk),
        ),
      };
    }
    case 'backlog': {
      const removed = new Set(action.removed);
      let next: FleetUiState = state;
      if (removed.size > 0) {
        const tasks = own(draft, 'tasks', state.tasks);
        for (const id of removed) tasks.delete(id);
        next = { ...state, tasks, order: state.order.filter((id) => !removed.has(id)) };
      }
      for (const task of action.added) {
        if (!removed.has(task.id)) next = putTask(next, task, action.at, draft);
      }
      return next;
    }
    case 'fleet':
      return { ...state, summary: action.summary, summaryAt: action.at };
    case 'gate': {
      const { scope, id, gate, reason } = action.event;
      const who = scope === 'fleet' ? 'fleet' : (id ?? 'task');
      return { ...state, notice: { level: 'warn', text: `${who}: ${GATE_LABEL[gate]} gate — ${reason}` } };
    }
    case 'log': {
      const { level, message, id } = action.event;
      if (level === 'info') return state;
      return { ...state, notice: { level, text: id === undefined ? message : `${id}: ${message}` } };
    }
  }
}

/** Counts by status from the task snapshots the list shows, so the bar and the rows always agree. */
export function countByStatus(tasks: ReadonlyMap<string, TaskEntry>): Record<TaskStatus, number> {
  const counts = Object.fromEntries(TASK_STATUSES.map((s) => [s, 0])) as Record<TaskStatus, number>;
  for (const { task } of tasks.values()) counts[task.status]++;
  return counts;
}

/** A task's running time now: the snapshot's figure, plus the time since it arrived while the task runs. */
export function liveElapsed(entry: TaskEntry, now: number): number {
  if (entry.task.status !== 'running') return entry.task.elapsedMs;
  return entry.task.elapsedMs + Math.max(0, now - entry.receivedAt);
}

/** The fleet's running time now, by the same rule. */
export function liveFleetElapsed(state: FleetUiState, now: number): number {
  const base = state.summary.totals.elapsedMs;
  return state.summary.state === 'running' ? base + Math.max(0, now - state.summaryAt) : base;
}
