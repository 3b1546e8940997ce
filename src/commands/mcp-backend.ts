/**
 * The fleet as `loopfleet mcp` reaches it ({@link McpBackend}).
 *
 * Invariants:
 * - reading (list_tasks, get_task, the report) writes nothing and takes no lock, as `status` does, so it
 *   works while a fleet runs;
 * - add_task writes BACKLOG.md only through the write-back's {@link edit} (re-read right before, replaced
 *   atomically over exactly the bytes planned on, a concurrent save kept) and only what {@link planAddTask}
 *   checked with the parser;
 * - retry, merge and discard are the CLI's {@link manage}: the same engine calls and the same lock. A live
 *   fleet holding the lock is refused at once in the lock's own words; one action runs at a time here, so
 *   two calls of one client never meet at the lock.
 */
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { SimpleGitAdapter } from '../adapters/git/simple-git.js';
import { lockHolder } from '../adapters/store/fleet-lock.js';
import { FsBacklogFile } from '../adapters/store/file-store.js';
import { LowdbStateStore } from '../adapters/store/lowdb-state.js';
import { planAddTask } from '../core/backlog/add-task.js';
import { edit } from '../core/backlog/write-back.js';
import {
  attemptCounts,
  baselineJson,
  checkJson,
  checksOfAttempt,
  progressLine,
  realAttempts,
} from '../core/report/check-facts.js';
import { taskReport } from '../core/report/morning-report.js';
import { LockedError, UsageError } from '../domain/errors.js';
import { REPORTS_DIR } from '../domain/layout.js';
import { newestReport } from './newest-report.js';
import { autonomyOf } from '../domain/task-rules.js';
import { totalTokens, type Autonomy, type Backlog, type TaskState } from '../domain/types.js';
import type { ActionResult, AddedTask, AddTaskInput, McpAction, McpBackend, TaskDetail } from '../mcp/backend.js';
import { manage } from './manage.js';
import { EXIT_INTERRUPTED } from './overnight.js';
import { loadBacklog, resolveBase, type Repo } from './repo.js';
import { statusRows } from './status.js';

/** The most of a diff get_task returns; the rest is cut at a line and said to be. */
export const MAX_DIFF_CHARS = 200_000;

export class FleetMcpBackend implements McpBackend {
  readonly #repo: Repo;
  readonly #env: NodeJS.ProcessEnv;
  readonly #onInterrupted: () => void;
  /** the action running now, if any: the next one starts after it */
  #acting: Promise<unknown> = Promise.resolve();

  constructor(repo: Repo, env: NodeJS.ProcessEnv, onInterrupted: () => void) {
    this.#repo = repo;
    this.#env = env;
    this.#onInterrupted = onInterrupted;
  }

  get root(): string {
    return this.#repo.root;
  }

  listTasks() {
    return statusRows(this.#repo);
  }

  /** The backlog (a missing file reads as empty, as merge and discard read it) and the task's state. */
  async #known(id: string): Promise<{
    backlog: Backlog;
    task: TaskState | undefined;
    base: string | null;
    tasks: Record<string, TaskState>;
  }> {
    const backlog = await loadBacklog(this.#repo, false, [], true);
    const state = await new LowdbStateStore(this.#repo.statePath).load();
    const task = state?.tasks[id];
    if (task === undefined && !backlog.tasks.some((t) => t.id === id)) {
      const known = backlog.tasks.map((t) => t.id).join(', ') || 'none';
      throw new UsageError(`no task ${id} in ${this.#repo.backlogPath} (tasks: ${known})`);
    }
    return { backlog, task, base: state?.base ?? null, tasks: state?.tasks ?? {} };
  }

  async getTask(id: string): Promise<TaskDetail> {
    const { backlog, task, base: stateBase, tasks } = await this.#known(id);
    const row = (await statusRows(this.#repo)).find((r) => r.id === id);
    if (row === undefined) {
      const known = backlog.tasks.map((t) => t.id).join(', ') || 'none';
      throw new UsageError(`no task ${id} in ${this.#repo.backlogPath} (tasks: ${known})`);
    }
    const git = new SimpleGitAdapter(this.#repo.root);
    const base = stateBase ?? (await resolveBase(this.#repo, backlog, git).catch(() => null));
    const spec = backlog.tasks.find((t) => t.id === id);
    return {
      row,
      description: spec?.description ?? null,
      plan: planOf(task),
      diff: task === undefined || base === null ? null : await this.#diff(git, task, base),
      evidence: evidenceOf(task),
      review: reviewOf(task),
      history: (task?.attempts ?? []).map((a) => ({
        attempt: Math.abs(a.n),
        outcome: a.outcome,
        reason: a.reason,
        tokens: Object.values(a.usageByRole).reduce((sum, u) => sum + (u === undefined ? 0 : totalTokens(u)), 0),
        costUsd: a.costUsd,
      })),
      report:
        task === undefined
          ? `## ${id} ${row.title}\n\n- **Outcome:** · not started`
          : taskReport(task, backlog.config, base ?? 'base', (part) => tasks[part], new Date().toISOString()),
    };
  }

  /** The branch against base in the task's worktree, as the interactive view's Diff tab reads it. */
  async #diff(git: SimpleGitAdapter, task: TaskState, base: string): Promise<TaskDetail['diff']> {
    const worktree = join(this.#repo.workDir, task.id);
    const present = await stat(worktree).then(
      (s) => s.isDirectory(),
      () => false,
    );
    if (task.branch === null || !present) return null;
    const text = await git.diff(worktree, base);
    const truncated = text.length > MAX_DIFF_CHARS;
    const kept = truncated ? text.slice(0, text.lastIndexOf('\n', MAX_DIFF_CHARS) + 1) : text;
    return { base, branch: task.branch, text: kept, truncated };
  }

  async addTask(input: AddTaskInput): Promise<AddedTask> {
    const file = new FsBacklogFile(this.#repo.backlogPath);
    if ((await file.readIfPresent()) === null)
      throw new UsageError(`no BACKLOG.md in ${this.#repo.root}: run \`loopfleet init\` to write one`);
    // Ids state remembers (a task since removed from the file still has a branch) are never given again.
    const state = await new LowdbStateStore(this.#repo.statePath).load();
    const taken = Object.keys(state?.tasks ?? {});
    const id = await edit(
      file,
      (text) => {
        const plan = planAddTask(text, this.#repo.backlogPath, input, taken);
        return { edits: [plan.edit], result: plan.id };
      },
      {},
    );
    const row = (await statusRows(this.#repo)).find((r) => r.id === id) ?? null;
    return { id, file: this.#repo.backlogPath, row };
  }

  async autonomyOf(id: string): Promise<Autonomy> {
    const { backlog } = await this.#known(id);
    return autonomyOf(backlog.tasks.find((t) => t.id === id) ?? {}, backlog.config);
  }

  act(action: McpAction, id: string): Promise<ActionResult> {
    const run = this.#acting.then(() => this.#act(action, id));
    // The next action waits for this one whatever its outcome; its error is its own caller's.
    this.#acting = run.catch(() => undefined);
    return run;
  }

  async #act(action: McpAction, id: string): Promise<ActionResult> {
    // A fleet that runs holds the lock for hours: say so now, in the lock's words, instead of waiting for it.
    const holder = await lockHolder(this.#repo.lockPath);
    if (holder !== null) throw new LockedError(holder, this.#repo.lockPath);
    const lines: string[] = [];
    const exitCode = await manage(this.#repo, action, id, this.#env, (line) => lines.push(line));
    if (exitCode === EXIT_INTERRUPTED) this.#onInterrupted();
    return { lines, exitCode };
  }

  async latestReport(): Promise<{ name: string; text: string }> {
    const report = await newestReport(this.#repo);
    if (report === null)
      throw new UsageError(
        `no report yet in ${join(this.#repo.workDir, REPORTS_DIR)}: \`loopfleet --overnight\` writes one when it ends, \`loopfleet --watch\` when it stops`,
      );
    return { name: report.name, text: report.markdown };
  }
}

function planOf(task: TaskState | undefined): TaskDetail['plan'] {
  const attempt = [...(task?.attempts ?? [])].reverse().find((a) => a.plan !== null && a.plan.trim() !== '');
  return attempt === undefined ? null : { attempt: Math.abs(attempt.n), text: attempt.plan! };
}

function evidenceOf(task: TaskState | undefined): TaskDetail['evidence'] {
  const last = task === undefined ? undefined : realAttempts(task).findLast((a) => checksOfAttempt(a).length > 0);
  return {
    attempt: last?.n ?? null,
    checks: last === undefined ? [] : checksOfAttempt(last).map((c) => ({ ...checkJson(c), output: c.outputTail })),
    counts: last === undefined ? null : attemptCounts(last),
    baseline: (last?.baseline ?? []).map(baselineJson),
    proof: last?.proof ?? null,
    progress: task === undefined ? null : progressLine(task),
  };
}

function reviewOf(task: TaskState | undefined): TaskDetail['review'] {
  const a = [...(task?.attempts ?? [])].reverse().find((x) => x.verdict !== null || x.guard.length > 0);
  if (a === undefined) return null;
  return { attempt: Math.abs(a.n), pass: a.verdict?.pass ?? null, reasons: a.verdict?.reasons ?? [], guard: a.guard };
}
