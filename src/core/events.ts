import { EventEmitter } from 'node:events';
import type { QueueResult } from './merge-queue.js';
import type { FleetTotals, GateName, Phase, Role, TaskState, TaskStatus, Usage } from '../domain/types.js';

/** Everything the engine tells its subscribers (the headless printer and the TUI). */
export interface FleetEvents {
  /** a task's record changed (status, phase, attempt, usage, reason...); carries a snapshot */
  task: [{ task: TaskState; previousStatus: TaskStatus | null }];
  /** streamed agent text */
  'agent-text': [{ id: string; role: Role; attempt: number; text: string }];
  'tool-call': [{ id: string; role: Role; attempt: number; name: string; input: string }];
  /** `costUsd`: what this report (`delta`) cost; `taskCostUsd` and `fleet` are the totals after it */
  usage: [{ id: string; role: Role; model: string; delta: Usage; costUsd: number; task: Usage; taskCostUsd: number; fleet: FleetTotals }];
  'phase-output': [{ id: string; phase: Phase; chunk: string }];
  gate: [{ scope: 'task' | 'fleet'; id: string | null; gate: GateName; reason: string }];
  /** tasks added to or dropped from the queue because BACKLOG.md changed */
  backlog: [{ added: string[]; removed: string[] }];
  fleet: [FleetSnapshotSummary];
  log: [{ level: 'info' | 'warn' | 'error'; message: string; id?: string }];
}

export interface FleetSnapshotSummary {
  state: 'idle' | 'running' | 'paused' | 'stopping' | 'finished';
  counts: Record<TaskStatus, number>;
  totals: FleetTotals;
  /** the fleet gate that stopped the run, if one did */
  stoppedBy: GateName | null;
  /** while `paused` by a hold (a usage or rate limit) rather than by a person: why, and until when (ISO time) */
  hold?: { reason: string; until: string | null; backoff?: boolean };
}

export class FleetEmitter extends EventEmitter<FleetEvents> {}

/** What the UI may ask of the fleet. Each returns when done; a refusal rejects with a message for the person. */
export interface FleetCommands {
  merge(id: string): Promise<void>;
  /** the merge queue: every verified task in backlog order, each rebased onto the last merge and checked again */
  mergeAll(): Promise<QueueResult>;
  discard(id: string): Promise<void>;
  retry(id: string): Promise<void>;
  /** a task awaiting approval implements `plan` (a person's edit) or the explorer's plan as it is */
  approve(id: string, plan?: string): void;
  pause(): void;
  resume(): void;
  /** stop starting work, abort agents, keep state */
  stop(): Promise<void>;
}

/** Read side the UI uses for its first frame and detail views. */
export interface FleetView {
  tasks(): TaskState[];
  summary(): FleetSnapshotSummary;
  /** unified diff of the task branch against base ('' when none) */
  diff(id: string): Promise<string>;
  readonly repoRoot: string;
  readonly base: string;
  readonly backlogPath: string;
  readonly sandboxed: boolean;
  readonly config: import('../domain/types.js').FleetConfig;
}

export interface FleetHandle extends FleetCommands, FleetView {
  readonly events: FleetEmitter;
}
