/**
 * What the MCP server asks of the fleet: reading the state as `status --json` does, one task in detail, adding
 * a task through the backlog's parser, and the CLI's merge / discard / retry. The server holds no state and
 * touches no file or git itself: `loopfleet mcp` hands it an implementation.
 */
import type { Autonomy, CheckStatusJson, ProofResult, TaskStatusJson, TestCounts } from '../domain/types.js';

export type McpAction = 'retry' | 'merge' | 'discard';

/** One check of the last attempt that ran checks, with the tail of its output. */
export interface CheckEvidence extends CheckStatusJson {
  /** the last lines of the check's output, as kept in state */
  output: string;
}

export interface TaskDetail {
  /** the task's row of `status --json` */
  row: TaskStatusJson;
  /** the indented prose under the item in BACKLOG.md; null for a task the backlog no longer lists */
  description: string | null;
  /** the latest plan and the attempt that wrote it; null before any explorer ran */
  plan: { attempt: number; text: string } | null;
  /** the task branch against base, as the interactive view's Diff tab shows it; null without a worktree */
  diff: { base: string; branch: string; text: string; truncated: boolean } | null;
  /** the verification facts of the last attempt that ran a check */
  evidence: {
    attempt: number | null;
    checks: CheckEvidence[];
    counts: TestCounts | null;
    baseline: CheckStatusJson[];
    proof: ProofResult | null;
    /** "7/22 failing → 1/22", against the previous attempt or base */
    progress: string | null;
  };
  /** the last reviewer verdict or failed guard checks; null when none ran */
  review: { attempt: number; pass: boolean | null; reasons: string[]; guard: string[] } | null;
  /** every attempt, oldest first */
  history: Array<{ attempt: number; outcome: string; reason: string | null; tokens: number; costUsd: number }>;
  /** the task's section of the morning report, as it would read now (Markdown) */
  report: string;
}

export interface AddTaskInput {
  title: string;
  description?: string;
  keys?: Record<string, string>;
}

export interface AddedTask {
  id: string;
  /** BACKLOG.md, where the task was written */
  file: string;
  /** the task's row of `status --json` right after the write */
  row: TaskStatusJson | null;
}

export interface ActionResult {
  /** what `loopfleet <action> <id>` prints */
  lines: string[];
  /** its exit code: 0 done, 1 not done (a conflict, sent back), 130 interrupted */
  exitCode: number;
}

export interface McpBackend {
  /** the repository's top-level folder */
  readonly root: string;
  listTasks(): Promise<TaskStatusJson[]>;
  /** throws UsageError, in the CLI's words, for an id the backlog and state do not know */
  getTask(id: string): Promise<TaskDetail>;
  /** throws in the parser's words when the task or the file would not parse; nothing is written then */
  addTask(input: AddTaskInput): Promise<AddedTask>;
  /** the autonomy that applies to the task: its own `autonomy:`, else the front matter's */
  autonomyOf(id: string): Promise<Autonomy>;
  /** the CLI's command, through its engine calls and lock; throws the lock's refusal while a fleet runs */
  act(action: McpAction, id: string): Promise<ActionResult>;
  /** the newest morning report; throws when there is none */
  latestReport(): Promise<{ name: string; text: string }>;
}
