/**
 * `loopfleet eval`: the eval tasks of a repository's own history. For each commit of the range (newest
 * first, at most `--limit`), the commit's test changes are applied to its parent and the front matter's
 * check runs there, then at the commit itself, each in a scratch worktree of its own, sandboxed like every
 * check. A commit is kept when tests fail before and pass after and nothing that passed before breaks
 * ({@link judgeCandidate}). Every candidate, kept or dropped and why, goes to
 * `.loop-worktrees/evals/<timestamp>/candidates.json` (and a Markdown table beside it): the same range
 * gives the same tasks. Then every kept task runs under each configuration ({@link runEvalSet}), and the
 * figures per configuration go beside the candidates as `report.md`, `result.json` and `chart.svg`.
 *
 * Invariant: the person's checkout, index and branches are never touched — the runs happen in detached
 * scratch worktrees, removed afterwards whatever happened.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { changedPaths, type HistoryRange, historyCommits } from '../adapters/git/history.js';
import { GitScratchTrees } from '../adapters/git/scratch-trees.js';
import { SimpleGitAdapter } from '../adapters/git/simple-git.js';
import { writeNew } from '../adapters/fs/nofollow.js';
import { FsWorkspace } from '../adapters/workspace/fs-workspace.js';
import { taskEnv } from '../core/attempt/task-env.js';
import { judgeCandidate, selectCandidate, type HistoryRun } from '../core/verify/fail-to-pass.js';
import { parseTestCounts } from '../core/verify/test-counts.js';
import { WORK_DIR } from '../domain/layout.js';
import { UsageError } from '../domain/errors.js';
import { jsonText, oneLine } from '../domain/sanitize.js';
import type { Backlog } from '../domain/types.js';
import { loadBacklog, type Repo } from './repo.js';
import { evalChart } from '../core/report/eval-chart.js';
import { evalMarkdown, type EvalResult } from '../core/report/eval-result.js';
import { loadEvalConfigs } from './eval-configs.js';
import { runEvalSet } from './eval-run.js';
import { type Candidate, readCandidates } from './eval-from.js';
import { sharedRunner } from './services.js';

export interface EvalOptions {
  history: HistoryRange;
  limit: number;
  json: boolean;
  env: NodeJS.ProcessEnv;
  /** `--config NAME=DIR`, as given; none: the repository's own setup */
  configs: ReadonlyArray<{ name: string; dir: string }>;
  /** `--max-cost`: what the whole eval may spend */
  maxCostUsd: number | null;
  /** `--dry-run`: find the tasks, run none */
  dryRun: boolean;
  /** `--from FILE`: the candidates of this file (an edited candidates.json) instead of mining history */
  from: string | null;
}

const EVALS_DIR = 'evals';

interface Runs {
  /** the check in a scratch worktree at `commit`, with `tests` taken from `testsFrom` first */
  run(name: string, commit: string, tests?: { from: string; paths: string[] }): Promise<HistoryRun>;
}

async function checkRunner(repo: Repo, backlog: Backlog, env: NodeJS.ProcessEnv): Promise<Runs> {
  const config = backlog.config;
  const check = config.check;
  if (check === null) throw new UsageError("loopfleet eval runs the front matter's check: BACKLOG.md has no `check:`");
  const runner = sharedRunner();
  const sandboxed = config.sandbox !== 'off';
  if (sandboxed && !(await runner.sandboxAvailable()))
    throw new UsageError(
      'loopfleet eval runs the tests of past commits in the sandbox, and bubblewrap cannot run here; `sandbox: off` in the front matter runs them unsandboxed',
    );
  const git = new SimpleGitAdapter(repo.root);
  const scratch = new GitScratchTrees(git);
  const workspace = new FsWorkspace(repo.workDir);
  return {
    async run(name, commit, tests) {
      const dir = await scratch.create(name, commit);
      try {
        if (tests !== undefined) await scratch.restore(dir, tests.from, tests.paths);
        await workspace.prepare(repo.root, dir);
        const childEnv = taskEnv(env, {
          taskId: 'eval',
          worktree: dir,
          branch: '',
          base: commit,
          gitRoot: repo.root,
          port: 4100,
          passed: config.env,
        });
        const sandbox = sandboxed ? { writable: [dir] } : null;
        const options = { cwd: dir, env: childEnv, sandbox, maxOutputBytes: 256 * 1024 };
        if (config.setup !== null) {
          const setup = await runner.run(config.setup, { ...options, timeoutMs: config.setupTimeoutMs });
          if (setup.exitCode !== 0) return { exitCode: setup.exitCode, timedOut: setup.timedOut, counts: null };
        }
        const result = await runner.run(check, { ...options, timeoutMs: config.checkTimeoutMs });
        return { exitCode: result.exitCode, timedOut: result.timedOut, counts: parseTestCounts(result.output) };
      } finally {
        await scratch.remove(dir);
      }
    },
  };
}

async function judge(repo: Repo, runs: Runs, testGlobs: readonly string[], c: Candidate, parents: string[]) {
  const changes = c.parent === null ? [] : await changedPaths(repo.root, c.parent, c.commit);
  const selected = selectCandidate({ parents, changes }, testGlobs);
  if ('why' in selected) return { ...c, why: selected.why };
  const short = c.commit.slice(0, 12);
  const before = await runs.run(`eval-${short}-before`, c.parent!, { from: c.commit, paths: selected.tests });
  const after = await runs.run(`eval-${short}-after`, c.commit);
  const verdict = judgeCandidate(before, after);
  const base = { ...c, tests: selected.tests, code: selected.code };
  if (!verdict.kept) return { ...base, why: verdict.why };
  return {
    ...base,
    kept: true,
    why: `${verdict.failToPass.length} failing test(s) pass after it, ${verdict.passToPass} passing before still pass`,
    failToPass: verdict.failToPass,
    passToPass: verdict.passToPass,
  };
}

function markdown(candidates: readonly Candidate[], heading: string): string {
  const cell = (s: string) => oneLine(s).replaceAll('|', '\\|');
  return [
    `# ${heading}`,
    '',
    '| commit | title | kept | why | FAIL_TO_PASS | PASS_TO_PASS |',
    '| --- | --- | --- | --- | --- | --- |',
    ...candidates.map(
      (c) =>
        `| ${c.commit.slice(0, 12)} | ${cell(c.title)} | ${c.kept ? 'yes' : 'no'} | ${cell(c.why)} | ${cell(c.failToPass.join(', '))} | ${c.kept ? c.passToPass : ''} |`,
    ),
    '',
  ].join('\n');
}

/** The candidates of the range, each judged by running the check before and after it. */
async function mine(repo: Repo, options: EvalOptions, out: (line: string) => void): Promise<Candidate[]> {
  const backlog = await loadBacklog(repo, false);
  const runs = await checkRunner(repo, backlog, options.env);
  const commits = await historyCommits(repo.root, options.history, options.limit).catch((error: Error) => {
    throw new UsageError(`loopfleet eval: git cannot list that history: ${error.message.split('\n')[0]}`);
  });
  const candidates: Candidate[] = [];
  for (const h of commits) {
    const blank: Candidate = {
      commit: h.commit,
      parent: h.parents[0] ?? null,
      title: h.subject,
      text: h.body === '' ? h.subject : `${h.subject}\n\n${h.body}`,
      kept: false,
      why: '',
      tests: [],
      code: [],
      failToPass: [],
      passToPass: 0,
    };
    const c = await judge(repo, runs, backlog.config.tests, blank, h.parents);
    candidates.push(c);
    if (!options.json) out(`${c.kept ? 'kept   ' : 'dropped'} ${c.commit.slice(0, 12)} ${oneLine(c.title)} — ${c.why}`);
  }
  return candidates;
}

export async function evaluate(repo: Repo, options: EvalOptions, out: (line: string) => void): Promise<number> {
  // Every configuration is read and checked before anything is written.
  const configs = options.dryRun ? [] : await loadEvalConfigs(repo, options.configs);
  const candidates =
    options.from === null ? await mine(repo, options, out) : await readCandidates(repo.root, options.from);
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const dir = join(repo.workDir, EVALS_DIR, stamp);
  await mkdir(dir, { recursive: true });
  await writeNew(join(dir, 'candidates.json'), `${jsonText(candidates, 2)}\n`);
  const kept = candidates.filter((c) => c.kept);
  await writeNew(
    join(dir, 'candidates.md'),
    markdown(candidates, `loopfleet eval — ${kept.length} of ${candidates.length} commits are eval tasks`),
  );
  const shown = join(WORK_DIR, EVALS_DIR, stamp);
  if (!options.json)
    out(`${kept.length} of ${candidates.length} commits are eval tasks; candidates: ${join(shown, 'candidates.json')}`);
  const result: EvalResult = {
    tasks: kept.map((c) => ({ commit: c.commit, title: c.title, failToPass: c.failToPass, passToPass: c.passToPass })),
    configs: [],
  };
  if (configs.length > 0 && kept.length > 0) {
    const ran = await runEvalSet(
      repo,
      configs,
      kept.map((c) => ({
        commit: c.commit,
        parent: c.parent!,
        title: c.title,
        text: c.text,
        tests: c.tests,
        code: c.code,
      })),
      { dir, maxCostUsd: options.maxCostUsd, env: options.env, progress: options.json ? null : out },
    );
    result.configs = ran.results;
    await writeNew(join(dir, 'result.json'), `${jsonText({ ...result, outcomes: ran.outcomes }, 2)}\n`);
    const heading = `loopfleet eval — ${kept.length} task(s) under ${configs.length} configuration(s)`;
    await writeNew(join(dir, 'report.md'), evalMarkdown(result, heading));
    await writeNew(
      join(dir, 'chart.svg'),
      evalChart(
        result.configs.map((c) => ({
          name: c.name,
          share: c.verifiedShare,
          ci95: c.ci95,
          costPerVerified: c.costPerVerified,
        })),
        heading,
      ),
    );
    if (!options.json) {
      for (const c of result.configs)
        out(
          `${c.name}: ${c.verified} of ${c.tasks} verified (95 % interval ${Math.round(c.ci95[0] * 100)}–${Math.round(c.ci95[1] * 100)} %), $${c.costUsd.toFixed(4)} spent, ${c.costPerVerified === null ? 'none verified' : `$${c.costPerVerified.toFixed(4)} per verified task`}`,
        );
      out(`report: ${join(shown, 'report.md')}`);
    }
  }
  if (options.json) out(jsonText(result, 2));
  return 0;
}
