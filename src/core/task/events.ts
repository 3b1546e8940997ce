import { EventEmitter } from 'node:events';
import type { FleetTotals, GateName, Phase, Role, TaskState, TaskStatus, Usage } from '../../domain/types.js';

/** Everything the engine tells its subscribers (the headless printer and the TUI). */
export interface FleetEvents {
  /** a task's record changed (status, phase, attempt, usage, reason...); carries a snapshot */
  task: [{ task: TaskState; previousStatus: TaskStatus | null }];
  /** streamed agent text */
  'agent-text': [{ id: string; role: Role; attempt: number; text: string }];
  'tool-call': [{ id: string; role: Role; attempt: number; name: string; input: string }];
  /** `costUsd`: what this report (`delta`) cost; `taskCostUsd` and `fleet` are the totals after it */
  usage: [
    {
      id: string;
      role: Role;
      model: string;
      delta: Usage;
      costUsd: number;
      task: Usage;
      taskCostUsd: number;
      fleet: FleetTotals;
    },
  ];
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
  /** with `review_capacity:` set: the load against it and over this run its peak and how long it held */
  review?: ReviewPacingSummary;
}

/** The review queue (`review_capacity:`): now, and over this run. */
export interface ReviewPacingSummary {
  /** tasks that need a person, running (or enqueued to run) */
  running: number;
  /** tasks waiting for a person to merge, discard, approve or review */
  waiting: number;
  capacity: number;
  /** the capacity holds back a task that could otherwise start */
  held: boolean;
  /** the most tasks running or waiting for a person at once during this run */
  peak: number;
  /** how long, in all, the capacity held tasks back during this run */
  heldMs: number;
}

export class FleetEmitter extends EventEmitter<FleetEvents> {}
