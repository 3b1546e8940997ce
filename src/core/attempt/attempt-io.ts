/**
 * What one attempt is given and what it gives back: the input, the observer it reports through, the gates it
 * asks, and its result. The pipeline runs attempts; the task runner makes them and settles their results.
 */
import type { GitPort } from '../../ports/git.js';
import type { AgentEvent, ModelClient } from '../../ports/model.js';
import type { ProcessRunner } from '../../ports/process.js';
import type { BaselineStore, ScratchTrees, TrackedFiles } from '../../ports/verification.js';
import type { Workspace } from '../../ports/workspace.js';
import type { FleetConfig, Phase, Role, TaskSpec } from '../../domain/types.js';
import type { RoleDefinition } from '../roles/definitions.js';
import type { Lessons } from '../roles/lessons.js';

export type { AttemptResult } from '../../domain/attempt-result.js';

export interface AttemptInput {
  spec: TaskSpec;
  config: FleetConfig;
  base: string;
  repoRoot: string;
  worktree: string;
  branch: string;
  attempt: number;
  /** how many times this attempt number was interrupted and started again before (0: the first run) */
  rerun?: number;
  /** skip explore and implement: verify the branch as it is (after a rebase) */
  verifyOnly: boolean;
  /** the plan of the attempt that produced the branch, for the reviewer of a verify-only attempt */
  previousPlan: string | null;
  /** a plan a person approved: the explorer is skipped and the implementer follows it */
  approvedPlan: string | null;
  /** `autonomy: plan` without an approved plan: stop after the explorer, the plan awaiting approval */
  stopAfterPlan: boolean;
  /**
   * Best-of-N (`parallel:`): stop once the plan is made (explored or approved) and claimed, before anything
   * is implemented; the candidates then implement it, each in its own worktree ({@link CandidateRound}).
   */
  planOnly?: boolean;
  /** the task waited for an overlapping task: bring its branch up to base before implementing */
  rebaseFirst?: boolean;
  /** the environment of sandboxed commands and agents: an allow-list ({@link taskEnv}) */
  env: Record<string, string>;
  /** the environment of setup on the person's own code, outside the sandbox: theirs minus loopfleet's credentials */
  hostEnv: Record<string, string>;
  /**
   * Set by an executor that runs another machine's job (a worker): false — setup runs in the sandbox, whatever
   * this machine's {@link SetupTrust} says; true — the coordinator's own trust found base to be the person's.
   * Absent: this machine's trust decides (one machine).
   */
  hostSetupVouched?: boolean;
  evidence: string | null;
  signal: AbortSignal;
  /** told of the attempt's progress as it happens */
  observer: AttemptObserver;
  /** the gates, asked before each model call and for the time left */
  budget: CallBudget;
}

/** What an attempt reports while it runs, in order: the phases, the agents' events, commands' output. */
export interface AttemptObserver {
  phase(phase: Phase): void;
  agentEvent(role: Role, model: string, event: AgentEvent): void;
  output(phase: Phase, chunk: string): void;
  /** something the person should know now, not only in the report (a check that fails on base) */
  notice(message: string, level: 'info' | 'warn'): void;
  /**
   * The plan this attempt is about to implement: the task whose planned files it overlaps (it must wait),
   * or null — and then the plan is this task's claim. The task runner answers synchronously, so two plans
   * never pass each other; an executor that relays the question (a worker's plan) answers when the answer
   * has come back, and the pipeline awaits it.
   */
  planned?(plan: string): PlanBlocker | null | Promise<PlanBlocker | null>;
  /** the worker that took the attempt (a remote executor only); told again when another worker restarts it */
  worker?(id: string): void;
  /**
   * A worker's claim disagreed with the coordinator's own check of the commit it fetched (a remote executor
   * only): `reason` says how. The attempt's result then carries the coordinator's evidence, not the claim.
   */
  flagged?(worker: string, reason: string): void;
}

/** The task a plan overlaps, and the shared paths. */
export interface PlanBlocker {
  id: string;
  files: string[];
}

/** The task's gates as one attempt sees them. */
export interface CallBudget {
  /** throws (GateError) when a gate has tripped; called before each model call */
  beforeCall(): void;
  /** remaining wall clock of the task, bounds every agent and command */
  remainingMs(): number;
}

/** What the pipeline of every attempt is given once: the ports it acts through and the run's roles. */
export interface PipelineServices {
  git: GitPort;
  runner: ProcessRunner;
  /** the API client and the command-line agent client; a role with `command:` uses the latter */
  model: ModelClient;
  cliModel: ModelClient;
  workspace: Workspace;
  roles: Record<Role, RoleDefinition>;
  /** bubblewrap is there and `sandbox:` is not off */
  sandboxed: boolean;
  /** the shell tool may be offered: sandboxed, or `sandbox: off` said explicitly */
  shellAllowed: boolean;
  /** the checks' results on base commits */
  baselines: BaselineStore;
  /** throw-away checkouts for baselines and proofs */
  scratch: ScratchTrees;
  /** what a check does to the tracked files it runs on */
  tracked: TrackedFiles;
  /** `.loop-worktrees/lessons.md`: read for every explorer, added to from implementers' answers */
  lessons: Lessons;
}

/** The merge queue's re-check of a branch before it lands: its checks on the commit it would land. */
export type RecheckOutcome = { pass: true } | { pass: false; reason: string; evidence: string };
