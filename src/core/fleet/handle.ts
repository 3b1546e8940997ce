/**
 * The one handle that the TUI, the headless printer and every command hold on a running fleet: what they
 * may ask of it ({@link FleetCommands}), what they may read ({@link FleetView}) and its typed events.
 */
import type { FleetConfig, TaskState } from '../../domain/types.js';
import type { FleetEmitter, FleetSnapshotSummary } from '../task/events.js';
import type { QueueResult } from '../land/merge-queue.js';

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
  /** `review_capacity:` reached and this queued task needs a person: the load it waits behind; else null */
  waitingForReview(id: string): ReviewWait | null;
  /** unified diff of the task branch against base ('' when none) */
  diff(id: string): Promise<string>;
  readonly repoRoot: string;
  readonly base: string;
  readonly backlogPath: string;
  readonly sandboxed: boolean;
  readonly config: FleetConfig;
}

/** The review queue a task waits behind: `status --json`'s `waitingForReview`. */
export interface ReviewWait {
  running: number;
  waiting: number;
  capacity: number;
}

export interface FleetHandle extends FleetCommands, FleetView {
  readonly events: FleetEmitter;
}
