/**
 * Runs the eval set under each configuration: every kept task goes through the normal pipeline — the
 * engine's {@link Fleet} opened by {@link openSession}, with its explorer, implementer, verifier and
 * reviewer, sandbox, guard and gates — in a repository of its own made for the run
 * (`.loop-worktrees/evals/<timestamp>/runs/<config>/<commit>/repo`, holding the history up to the task's
 * parent and nothing later). The task's test files are its hidden tests: applied only for the check.
 *
 * Invariants: the person's checkout, index, branches and fleet state are never touched — no ref is written
 * to their repository, every run has its own state, lock and worktrees. `--max-cost` bounds the eval as a
 * fleet cost gate bounds a run: each task's run gets what is left as its fleet cost gate (so it stops at its
 * next model call once the eval's money is spent), and no task starts after that.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { changedLines, filesAt, seedRepository } from '../adapters/git/eval-seed.js';
import { checkCommandLine, checksOf } from '../core/verify/checks.js';
import { configResult, type EvalConfigResult, type EvalTaskOutcome } from '../core/report/eval-result.js';
import { LOCK_FILE, STATE_FILE, WORK_DIR } from '../domain/layout.js';
import { oneLine } from '../domain/sanitize.js';
import type { TaskSpec } from '../domain/types.js';
import type { Workspace } from '../ports/workspace.js';
import { EVAL_TASK_ID, type EvalConfig } from './eval-configs.js';
import type { Repo } from './repo.js';
import { openSession } from './session.js';

/** The branch of a run repository that holds the task's start (the human change's parent). */
const START_BRANCH = 'eval-start';

/** A kept candidate as the run needs it. */
export interface EvalTask {
  commit: string;
  parent: string;
  title: string;
  text: string;
  tests: string[];
  code: string[];
}

export interface EvalRunOptions {
  /** the eval's folder, `.loop-worktrees/evals/<timestamp>` */
  dir: string;
  maxCostUsd: number | null;
  env: NodeJS.ProcessEnv;
  /** a line per task as it ends; null: quiet (`--json`) */
  progress: ((line: string) => void) | null;
}

/** The person's dependencies and included files for every worktree of a run: its repository has no checkout. */
function fromPersonsCheckout(workspace: Workspace, personRoot: string): Workspace {
  return {
    prepare: (_root, worktree) => workspace.prepare(personRoot, worktree),
    included: () => workspace.included(personRoot),
    transcript: (taskId, attempt, record) => workspace.transcript(taskId, attempt, record),
    flush: () => workspace.flush(),
    removeOrphan: (path) => workspace.removeOrphan(path),
    exists: (path) => workspace.exists(path),
    entries: () => workspace.entries(),
  };
}

function skipped(task: EvalTask, humanLines: number): EvalTaskOutcome {
  return {
    commit: task.commit,
    status: 'skipped',
    costUsd: 0,
    seconds: 0,
    attempts: 0,
    vetoes: 0,
    guardRefusals: 0,
    diffLines: null,
    humanLines,
    reason: 'the eval cost gate (--max-cost) was spent before it started',
  };
}

async function runTask(
  repo: Repo,
  config: EvalConfig,
  task: EvalTask,
  humanLines: number,
  costLeft: number | null,
  options: EvalRunOptions,
): Promise<EvalTaskOutcome> {
  const home = join(options.dir, 'runs', config.name, task.commit.slice(0, 12));
  const root = join(home, 'repo');
  await seedRepository(repo.root, task.parent, root, START_BRANCH);
  const backlogPath = join(home, 'BACKLOG.md');
  await writeFile(backlogPath, config.backlogText, { flag: 'wx' });
  const workDir = join(root, WORK_DIR);
  const runRepo: Repo = {
    root,
    workDir,
    statePath: join(workDir, STATE_FILE),
    lockPath: join(workDir, LOCK_FILE),
    backlogPath,
  };
  const hiddenTests = await filesAt(repo.root, task.commit, task.tests);
  const checks = checksOf({ id: EVAL_TASK_ID } as TaskSpec, config.backlog.config);
  const newline = task.text.indexOf('\n');
  // The task's own check: it must pass outright, never by "not worse than base".
  const amend = (spec: TaskSpec): TaskSpec => ({
    ...spec,
    title: oneLine(task.title),
    description: newline < 0 ? '' : task.text.slice(newline + 1).trim(),
    checks,
    check: checkCommandLine(checks) ?? undefined,
    hiddenTests,
  });
  const session = await openSession(runRepo, {
    overrides: { amend, ...(costLeft === null ? {} : { fleetGates: { costUsd: costLeft } }) },
    autoMerge: false,
    watch: false,
    env: options.env,
    needForge: false,
    services: (s) => ({ ...s, roles: config.roles, workspace: fromPersonsCheckout(s.workspace, repo.root) }),
  });
  let state: ReturnType<typeof session.fleet.task>;
  try {
    session.fleet.start();
    await session.fleet.whenIdle();
    state = session.fleet.task(EVAL_TASK_ID);
  } finally {
    await session.close();
  }
  const status = state?.status === 'verified' || state?.status === 'merged' ? 'verified' : 'failed';
  const attempts = state?.attempts ?? [];
  const branch = state?.branch ?? null;
  return {
    commit: task.commit,
    status,
    costUsd: state?.costUsd ?? 0,
    seconds: (state?.elapsedMs ?? 0) / 1000,
    attempts: attempts.length,
    vetoes: attempts.filter((a) => a.outcome === 'vetoed').length,
    guardRefusals: attempts.filter((a) => a.outcome === 'guard-failed').length,
    diffLines: status === 'verified' && branch !== null ? await changedLines(root, START_BRANCH, branch) : null,
    humanLines,
    // The last attempt's own reason (a failed check, a veto) says more than the gate that ended the task.
    reason: attempts.at(-1)?.reason ?? state?.reason ?? null,
  };
}

/** Every configuration over every task, one task at a time; the figures per configuration. */
export async function runEvalSet(
  repo: Repo,
  configs: readonly EvalConfig[],
  tasks: readonly EvalTask[],
  options: EvalRunOptions,
): Promise<{ results: EvalConfigResult[]; outcomes: Record<string, EvalTaskOutcome[]> }> {
  const human = new Map<string, number>();
  for (const t of tasks) human.set(t.commit, await changedLines(repo.root, t.parent, t.commit, t.code));
  let spent = 0;
  const outcomes: Record<string, EvalTaskOutcome[]> = {};
  for (const config of configs) {
    const list: EvalTaskOutcome[] = [];
    for (const task of tasks) {
      const left = options.maxCostUsd === null ? null : options.maxCostUsd - spent;
      const outcome =
        left !== null && left <= 0
          ? skipped(task, human.get(task.commit)!)
          : await runTask(repo, config, task, human.get(task.commit)!, left, options);
      spent += outcome.costUsd;
      list.push(outcome);
      options.progress?.(
        `${config.name}: ${outcome.status.padEnd(8)} ${task.commit.slice(0, 12)} ${oneLine(task.title)} — ${outcome.attempts} attempt(s), $${outcome.costUsd.toFixed(4)}${outcome.status === 'verified' || outcome.reason === null ? '' : `; ${oneLine(outcome.reason)}`}`,
      );
    }
    outcomes[config.name] = list;
  }
  return { results: configs.map((c) => configResult(c.name, outcomes[c.name]!)), outcomes };
}
