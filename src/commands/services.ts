import { join } from 'node:path';
import { notifyJson } from '../core/fleet/notify-digest.js';
import { visible } from '../domain/sanitize.js';
import { fileURLToPath } from 'node:url';
import { LazyAnthropicModelClient } from '../adapters/model/lazy-anthropic-model.js';
import { CliAgentClient } from '../adapters/model/cli-agent.js';
import { costOf, priceOf } from '../core/budget/pricing.js';
import { ExecaRunner } from '../adapters/sandbox/execa-runner.js';
import { FsBacklogFile, fsTextFiles } from '../adapters/store/file-store.js';
import { JsonBaselineStore } from '../adapters/store/baseline-store.js';
import { FsWorkspace } from '../adapters/workspace/fs-workspace.js';
import { GitScratchTrees } from '../adapters/git/scratch-trees.js';
import { GitTrackedFiles } from '../adapters/git/tracked-files.js';
import { LowdbStateStore } from '../adapters/store/lowdb-state.js';
import { SimpleGitAdapter } from '../adapters/git/simple-git.js';
import { loadRoles } from '../core/roles/definitions.js';
import { tickDone } from '../core/backlog/write-back.js';
import { UsageError } from '../domain/errors.js';
import type { FleetServices } from '../core/fleet/fleet.js';
import { isSecretName } from '../core/attempt/task-env.js';
import type { Backlog } from '../domain/types.js';
import { systemClock } from '../ports/clock.js';
import type { Repo } from './repo.js';
import { BASELINES_FILE, LESSONS_FILE } from '../domain/layout.js';
import { Lessons } from '../core/roles/lessons.js';
import { FsLessonFile } from '../adapters/store/lessons-file.js';

/** The package's own top-level folder (dist/commands/ → ../../). */
export const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface Credentials {
  apiKey?: string;
  authToken?: string;
  baseURL?: string;
}

/** ANTHROPIC_API_KEY / ANTHROPIC_AUTH_TOKEN / ANTHROPIC_BASE_URL; none of them → exit 2 naming the variable. */
export function credentialsFrom(env: NodeJS.ProcessEnv, required: boolean): Credentials {
  const creds: Credentials = {};
  if (env.ANTHROPIC_API_KEY) creds.apiKey = env.ANTHROPIC_API_KEY;
  if (env.ANTHROPIC_AUTH_TOKEN) creds.authToken = env.ANTHROPIC_AUTH_TOKEN;
  if (env.ANTHROPIC_BASE_URL) creds.baseURL = env.ANTHROPIC_BASE_URL;
  if (required && creds.apiKey === undefined && creds.authToken === undefined && creds.baseURL === undefined) {
    throw new UsageError(
      'no model credentials: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN), or ANTHROPIC_BASE_URL for an Anthropic-compatible server. ' +
        '`loopfleet demo` runs without either.',
    );
  }
  // A local server without auth still needs some key for the SDK to send.
  if (creds.apiKey === undefined && creds.authToken === undefined) creds.apiKey = 'no-key';
  return creds;
}

/**
 * Where warnings of the services go (the SDK's own: deprecated models, retries; a failing notify command). They must not be printed over the
 * interactive view, so a session points this at the fleet's log events; until then they go to stderr.
 */
export const serviceLog: { target: (level: 'warn' | 'error', message: string) => void } = {
  target: (level, message) => process.stderr.write(`loopfleet: ${level}: ${visible(message)}\n`),
};

const sdkLogger = {
  error: (...args: unknown[]) => serviceLog.target('error', args.map(String).join(' ')),
  warn: (...args: unknown[]) => serviceLog.target('warn', args.map(String).join(' ')),
  info: () => undefined,
  debug: () => undefined,
};

/** One runner per process: bubblewrap is probed, and the sandbox self-tested, once. */
const processRunner = new ExecaRunner();

/** the process's one runner (a worker self-tests its sandbox before it builds any services) */
export function sharedRunner(): ExecaRunner {
  return processRunner;
}

/** whether bubblewrap runs here (probed once per process, as every run here sees it) */
export function sandboxRunsHere(): Promise<boolean> {
  return processRunner.sandboxAvailable();
}
/** `.loop-worktrees/baselines.json`: the checks' results on base commits (see {@link baselinesFor}). */
export function baselinesPath(repo: Repo): string {
  return join(repo.workDir, BASELINES_FILE);
}

/** `requireModel: false` for commands that never call a model (merge, discard, prune). */
export async function buildServices(
  repo: Repo,
  backlog: Backlog,
  env: NodeJS.ProcessEnv,
  requireModel = true,
  git: SimpleGitAdapter = new SimpleGitAdapter(repo.root),
): Promise<FleetServices> {
  const roles = await loadRoles(fsTextFiles, `${PACKAGE_ROOT}agents`, repo.root);
  const needsApi = requireModel && Object.values(roles).some((r) => r.command === undefined && r.agent === undefined);
  const creds = credentialsFrom(env, needsApi);
  const runner = processRunner;
  const sandboxAvailable = await runner.sandboxAvailable();
  const sandboxOff = backlog.config.sandbox === 'off';
  const sandboxed = sandboxAvailable && !sandboxOff;
  const model = new LazyAnthropicModelClient({
    ...creds,
    maxRetries: 4,
    processRunner: runner,
    sandboxAvailable: sandboxed,
    logger: sdkLogger,
  });
  const cliModel = new CliAgentClient({
    processRunner: runner,
    sandboxAvailable: sandboxed,
    hostEnv: env,
    priceUsd: (m, usage) => {
      const price = priceOf(m, backlog.config.prices);
      return price === null ? null : costOf(usage, price);
    },
  });
  const safeEnv = Object.fromEntries(
    Object.entries(env).filter(([k, v]) => v !== undefined && !isSecretName(k)),
  ) as Record<string, string>;
  return {
    git,
    runner,
    model,
    cliModel,
    workspace: new FsWorkspace(repo.workDir),
    roles,
    sandboxed,
    shellAllowed: sandboxed || sandboxOff,
    baselines: new JsonBaselineStore(baselinesPath(repo)),
    scratch: new GitScratchTrees(git),
    tracked: new GitTrackedFiles(),
    lessons: new Lessons(new FsLessonFile(join(repo.workDir, LESSONS_FILE)), { enabled: backlog.config.lessons }),
    store: new LowdbStateStore(repo.statePath),
    clock: systemClock,
    tickDone: (id) => tickDone(new FsBacklogFile(repo.backlogPath), id),
    notify: (command, payload) =>
      runner.run(command, { cwd: repo.root, env: safeEnv, timeoutMs: 10_000, input: `${notifyJson(payload)}\n` }).then(
        (r) => {
          if (r.exitCode !== 0)
            serviceLog.target(
              'warn',
              `notify command \`${command}\` exited ${r.exitCode}: ${r.output.trim().slice(-300)}`,
            );
        },
        (error: Error) => serviceLog.target('warn', `notify command \`${command}\` could not run: ${error.message}`),
      ),
  };
}
