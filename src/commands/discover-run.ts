/**
 * Runs the finders over a checkout of base and returns their proposals. Runs nothing an agent wrote and
 * changes nothing but the throw-away checkout it is given: the project's own commands (check, lint) run as
 * the pipeline runs checks, sandboxed when the sandbox is on; npm and gh are the person's tools and run as
 * they would in a terminal (they need the network); issues come through the forge client (Octokit, GitLab's
 * REST API) with the token of loopfleet's own process.
 */
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { openForge } from '../adapters/forge/open.js';
import type { ForgeSetting } from '../domain/forge-setting.js';
import type { Backlog } from '../domain/types.js';
import { ForgeError, ForgeRateLimitError, type ForgeIssue, type ForgePort } from '../ports/forge.js';
import type { GitPort } from '../ports/git.js';
import type { ProcessRunner } from '../ports/process.js';
import { depProposals, jsonIn, npmError, parseAudit, parseOutdated } from '../core/discover/deps.js';
import { issueProposal, parseIssues } from '../core/discover/issues.js';
import { lintCommandProposal, lintCommands, lintFindings, lintProposal } from '../core/discover/lint.js';
import type { Proposal } from '../core/discover/proposal.js';
import type { DiscoverSource } from '../domain/types.js';
import {
  failingCheckProposal,
  failingFileProposal,
  failingTestFiles,
  narrowedCheck,
  testRunnerOf,
} from '../core/discover/tests.js';
import { oneLine } from '../core/discover/text.js';
import { findTodos, isBinary, isScannable, MAX_TODO_FILE_BYTES, todoProposal } from '../core/discover/todo.js';

/** At most this many failing files are re-run alone for their own output. */
const MAX_NARROWED_RUNS = 8;
const TOOL_TIMEOUT_MS = 120_000;
/** The shell's exit code for a command it cannot find: the project is not set up, nothing to propose. */
const NOT_FOUND = 127;

export interface CommandOutput {
  exitCode: number | null;
  output: string;
}

/**
 * What only the network knows. Production runs the commands (`commandSources`); tests replay recorded
 * output through the same parsers.
 */
export interface RemoteSources {
  npmOutdated(): Promise<CommandOutput>;
  npmAudit(): Promise<CommandOutput>;
  /** null when gh is not installed; otherwise its exit code and output */
  gh(args: string): Promise<CommandOutput | null>;
}

export function commandSources(runner: ProcessRunner, cwd: string, env: Record<string, string>): RemoteSources {
  const run = async (command: string): Promise<CommandOutput> => {
    const r = await runner.run(command, { cwd, env, timeoutMs: TOOL_TIMEOUT_MS, maxOutputBytes: 16 * 1024 * 1024 });
    return { exitCode: r.timedOut ? null : r.exitCode, output: r.output };
  };
  return {
    // stderr carries npm's warnings; --json output is on stdout, errors included.
    npmOutdated: () => run('npm outdated --json 2>/dev/null'),
    npmAudit: () => run('npm audit --json 2>/dev/null'),
    gh: async (args) => ((await run('command -v gh >/dev/null 2>&1')).exitCode === 0 ? run(`gh ${args}`) : null),
  };
}

export interface DiscoverInput {
  runner: ProcessRunner;
  /** a checkout of base, prepared as a task worktree is (dependencies cloned, setup run) */
  dir: string;
  base: string;
  backlog: Backlog;
  /** environment of the project's commands: the person's, secrets removed */
  projectEnv: Record<string, string>;
  sandboxed: boolean;
  remote: RemoteSources;
  only: ReadonlySet<DiscoverSource>;
  githubLabel: string;
  /** the forge client for issues (absent: gh is asked, as without a forge) */
  issueForge?: IssueForgeSource;
  /** one line of what was done or skipped, for the person */
  note(line: string): void;
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}

async function trackedFiles(input: DiscoverInput): Promise<string[]> {
  const r = await input.runner.run('git ls-files -z', {
    cwd: input.dir,
    env: input.projectEnv,
    timeoutMs: 60_000,
    maxOutputBytes: 64 * 1024 * 1024,
  });
  if (r.exitCode !== 0) throw new Error(`git ls-files failed in ${input.dir}: ${r.output.trim().slice(-300)}`);
  // A path with a line break or another control character could not be named on one line: left out.
  return r.output.split('\0').filter((f) => f !== '' && !/[\x00-\x1f\x7f]/.test(f));
}

async function scripts(dir: string): Promise<Record<string, string>> {
  try {
    const pkg = JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')) as { scripts?: Record<string, unknown> };
    return Object.fromEntries(
      Object.entries(pkg.scripts ?? {}).filter((e): e is [string, string] => typeof e[1] === 'string'),
    );
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || error instanceof SyntaxError) return {};
    throw error;
  }
}

async function todos(input: DiscoverInput, files: string[]): Promise<Proposal[]> {
  const out: Proposal[] = [];
  let skipped = 0;
  for (const file of files.filter(isScannable)) {
    const path = join(input.dir, file);
    const info = await stat(path).catch(() => null);
    if (info === null || !info.isFile()) continue;
    if (info.size > MAX_TODO_FILE_BYTES) {
      skipped++;
      continue;
    }
    const bytes = await readFile(path);
    if (isBinary(bytes)) continue;
    for (const hit of findTodos(bytes.toString('utf8'), file)) out.push(todoProposal(file, hit));
  }
  input.note(
    `todo: ${out.length} comment(s)${skipped > 0 ? `, ${skipped} file(s) over ${MAX_TODO_FILE_BYTES / 1024} KiB not read` : ''}`,
  );
  return out;
}

/** Runs one of the project's commands; the throw-away checkout's path is cut from its output. */
async function projectRun(input: DiscoverInput, command: string): Promise<CommandOutput> {
  const r = await input.runner.run(command, {
    cwd: input.dir,
    env: input.projectEnv,
    timeoutMs: input.backlog.config.checkTimeoutMs,
    sandbox: input.sandboxed ? { writable: [input.dir] } : null,
    maxOutputBytes: 1024 * 1024,
  });
  return { exitCode: r.timedOut ? null : r.exitCode, output: r.output.split(`${input.dir}/`).join('') };
}

async function failingTests(input: DiscoverInput, tracked: ReadonlySet<string>): Promise<Proposal[]> {
  const check = input.backlog.config.check;
  if (check === null) {
    input.note('tests: skipped, the front matter sets no check:');
    return [];
  }
  const run = await projectRun(input, check);
  if (run.exitCode === 0) {
    input.note(`tests: \`${check}\` passes on ${input.base}`);
    return [];
  }
  if (run.exitCode === null || run.exitCode === NOT_FOUND) {
    input.note(
      `tests: \`${check}\` ${run.exitCode === null ? 'did not finish' : 'could not run (a command was not found: are the dependencies installed? see setup:)'} on ${input.base}${run.exitCode === null ? ' (timed out or killed)' : ''}: nothing proposed`,
    );
    return [];
  }
  const files = failingTestFiles(run.output, tracked, input.dir);
  if (files.length === 0) {
    input.note(`tests: \`${check}\` fails on ${input.base}; no failing test file recognised in its output`);
    return [failingCheckProposal(check, input.base, run.output)];
  }
  const runner = testRunnerOf(check, await scripts(input.dir));
  const out: Proposal[] = [];
  for (const [i, file] of files.entries()) {
    let narrowed = narrowedCheck(runner, file);
    let output = run.output;
    if (narrowed !== null && i < MAX_NARROWED_RUNS) {
      const alone = await projectRun(input, narrowed);
      // A file that passes alone fails only with the others: the whole check stays its check.
      if (alone.exitCode === 0) narrowed = null;
      else output = alone.output;
    }
    out.push(failingFileProposal(file, check, input.base, narrowed, output));
  }
  input.note(`tests: \`${check}\` fails on ${input.base} in ${files.length} test file(s)`);
  return out;
}

async function lint(input: DiscoverInput, files: string[], tracked: ReadonlySet<string>): Promise<Proposal[]> {
  const ruff =
    files.some((f) => f.endsWith('.py')) &&
    (await input.runner.run('command -v ruff', { cwd: input.dir, env: input.projectEnv, timeoutMs: 10_000 }))
      .exitCode === 0;
  const commands = lintCommands({
    scripts: await scripts(input.dir),
    hasTsconfig: tracked.has('tsconfig.json'),
    hasTypescript: await exists(join(input.dir, 'node_modules', '.bin', 'tsc')),
    hasEslint: await exists(join(input.dir, 'node_modules', '.bin', 'eslint')),
    hasRuff: ruff,
  });
  if (commands.length === 0) {
    input.note('lint: skipped, the project defines no lint script, and has no tsc, eslint or ruff to run');
    return [];
  }
  const byFile = new Map<string, { tools: string[]; lines: string[] }>();
  const out: Proposal[] = [];
  for (const tool of commands) {
    const run = await projectRun(input, tool.command);
    if (run.exitCode === 0 || run.exitCode === null || run.exitCode === NOT_FOUND) {
      const why =
        run.exitCode === 0
          ? 'passes'
          : run.exitCode === null
            ? 'did not finish (timed out or killed)'
            : 'could not run (a command was not found)';
      input.note(`lint: \`${tool.name}\` ${why}`);
      continue;
    }
    const found = lintFindings(run.output, tracked, input.dir);
    input.note(`lint: \`${tool.name}\` reports ${found.size} file(s)`);
    if (found.size === 0) out.push(lintCommandProposal(tool, input.base, run.output));
    for (const [file, lines] of found) {
      const entry = byFile.get(file) ?? { tools: [], lines: [] };
      entry.tools.push(tool.name);
      entry.lines.push(...lines);
      byFile.set(file, entry);
    }
  }
  for (const [file, e] of byFile) out.push(lintProposal(file, input.base, e.tools, e.lines));
  return out;
}

async function deps(input: DiscoverInput, tracked: ReadonlySet<string>): Promise<Proposal[]> {
  if (!tracked.has('package.json')) {
    input.note('deps: skipped, no package.json');
    return [];
  }
  const read = async (name: string, get: () => Promise<CommandOutput>): Promise<unknown> => {
    const r = await get();
    const json = jsonIn(r.output);
    const error = npmError(json);
    if (json === null || error !== null) {
      input.note(
        `deps: \`npm ${name} --json\` gave no report${error ? ` (${error})` : r.exitCode === null ? ' (timed out)' : ''}`,
      );
      return null;
    }
    return json;
  };
  const outdated = parseOutdated(await read('outdated', () => input.remote.npmOutdated()));
  const vulnerable =
    tracked.has('package-lock.json') || tracked.has('npm-shrinkwrap.json')
      ? parseAudit(await read('audit', () => input.remote.npmAudit()))
      : [];
  input.note(`deps: ${vulnerable.length} vulnerable, ${outdated.length} outdated package(s)`);
  return depProposals(outdated, vulnerable);
}

/**
 * Where the issue finder reads issues: the forge client of the remote (GitHub or GitLab), or why there is
 * none. `gh` is asked instead only where the forge could be GitHub: no forge could be told from the remote,
 * or GitHub without a token of loopfleet's.
 */
export type IssueForgeSource =
  | { kind: 'forge'; forge: Pick<ForgePort, 'kind' | 'issues'> }
  | { kind: 'none'; reason: string; askGh: boolean };

/** `config` is FleetConfig's: its `forge:` and `remote:` settings decide. */
export async function issueForgeFor(
  config: { base: string | null; forge?: ForgeSetting; remote?: string },
  git: Pick<GitPort, 'remoteUrl'>,
  env: Record<string, string | undefined>,
): Promise<IssueForgeSource> {
  const setting = config.forge ?? 'auto';
  const opened = await openForge({ setting, git, remote: config.remote ?? 'origin', env });
  if (opened.kind === 'forge') return { kind: 'forge', forge: opened.forge };
  return {
    kind: 'none',
    reason: opened.reason,
    askGh: setting !== 'none' && (opened.target === null || opened.target.kind === 'github'),
  };
}

async function issues(input: DiscoverInput): Promise<Proposal[]> {
  const label = input.githubLabel;
  const source = input.issueForge ?? { kind: 'none', reason: 'no forge client', askGh: true };
  if (source.kind === 'forge') {
    const name = source.forge.kind === 'github' ? 'GitHub' : 'GitLab';
    let found: ForgeIssue[];
    try {
      found = await source.forge.issues(label);
    } catch (error) {
      // The forge's refusal (a scope, a rate limit) ends this finder only; the person reads why.
      if (!(error instanceof ForgeError || error instanceof ForgeRateLimitError)) throw error;
      input.note(`issues: ${name} did not list them: ${oneLine(error.message, 300)}`);
      return [];
    }
    input.note(`issues: ${found.length} open ${name} issue(s) labelled ${label}`);
    return found.map((i) => issueProposal(i, label, source.forge.kind));
  }
  if (!source.askGh) {
    input.note(`issues: skipped, ${oneLine(source.reason, 300)}`);
    return [];
  }
  const auth = await input.remote.gh('auth status');
  if (auth === null) {
    input.note(
      `issues: skipped, gh (the GitHub CLI) is not installed, and no forge client (${oneLine(source.reason, 200)})`,
    );
    return [];
  }
  if (auth.exitCode !== 0) {
    input.note('issues: skipped, gh is not logged in (run `gh auth login`)');
    return [];
  }
  const quoted = `'${label.replace(/'/g, `'\\''`)}'`;
  const list = await input.remote.gh(`issue list --state open --label ${quoted} --limit 100 --json number,title,body`);
  const found = list === null || list.exitCode !== 0 ? null : parseIssues(list.output);
  if (found === null) {
    input.note(`issues: \`gh issue list\` failed: ${oneLine(list?.output ?? '', 200)}`);
    return [];
  }
  input.note(`issues: ${found.length} open issue(s) labelled ${label}`);
  return found.map((i) => issueProposal(i, label));
}

/** Every finding of the chosen finders, in the order found. */
export async function findProposals(input: DiscoverInput): Promise<Proposal[]> {
  const files = await trackedFiles(input);
  const tracked = new Set(files);
  const out: Proposal[] = [];
  // TODOs first, while the checkout is as committed: a lint script may fix files in place.
  if (input.only.has('todo')) out.push(...(await todos(input, files)));
  if (input.only.has('deps')) out.push(...(await deps(input, tracked)));
  if (input.only.has('tests')) out.push(...(await failingTests(input, tracked)));
  if (input.only.has('lint')) out.push(...(await lint(input, files, tracked)));
  if (input.only.has('issues')) out.push(...(await issues(input)));
  return out;
}
