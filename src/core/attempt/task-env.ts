/**
 * The environment of sandboxed setup, check, shell tool and command-line agents. It is an allow-list, built
 * from scratch: PATH, the locale, TERM, the CA bundle variables (their files are bound read-only into the
 * sandbox), loopfleet's own LOOPFLEET_* and PORT, and the names the person lists under `env:` in the front
 * matter. Nothing else passes, whatever its name, so no credential of the person running loopfleet
 * (DATABASE_URL, SENTRY_DSN, SSH_AUTH_SOCK, cloud keys) reaches code an agent wrote. HOME is not passed:
 * inside the sandbox it is an empty private folder.
 *
 * Setup on the person's own code ({@link runSetup}) gets {@link personEnv} instead: everything the person's shell
 * has — HOME, proxies, CA bundles, registry configuration — minus the credentials loopfleet holds.
 */
import { CA_VARIABLES, isLoopfleetCredential } from '../../domain/host-env.js';

const SECRET_NAME =
  /^(ANTHROPIC_|OPENAI_|AWS_|GH_|GITHUB_TOKEN|NPM_TOKEN|CLAUDE_)|(_KEY|_TOKEN|_SECRET|SECRET|PASSWORD|PASSWD|CREDENTIALS?)$/i;

/** Names that look like credentials; used for the notify command, which runs the person's own code. */
export function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name);
}

/** Host variables every task gets, when set: the tools' search path, the locale, the terminal. */
const ALWAYS_PASSED = new Set(['PATH', 'LANG', 'LANGUAGE', 'TERM', ...CA_VARIABLES]);

export function isPassedByDefault(name: string): boolean {
  return ALWAYS_PASSED.has(name) || name.startsWith('LC_') || name.startsWith('LOOPFLEET_') || name === 'PORT';
}

export interface TaskEnvInput {
  taskId: string;
  worktree: string;
  branch: string;
  base: string;
  gitRoot: string;
  port: number;
  /** `env:` of the front matter: further names to pass */
  passed?: readonly string[];
}

export function taskEnv(parent: NodeJS.ProcessEnv, input: TaskEnvInput): Record<string, string> {
  const listed = new Set(input.passed ?? []);
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(parent)) {
    // A credential loopfleet holds (model keys, forge tokens) is never passed, even when `env:` lists it.
    if (value !== undefined && (isPassedByDefault(name) || listed.has(name)) && !isLoopfleetCredential(name))
      env[name] = value;
  }
  return loopfleetVariables(env, input);
}

function loopfleetVariables(env: Record<string, string>, input: TaskEnvInput): Record<string, string> {
  env.LOOPFLEET_TASK_ID = input.taskId;
  env.LOOPFLEET_WORKTREE_PATH = input.worktree;
  env.LOOPFLEET_BRANCH = input.branch;
  env.LOOPFLEET_BASE_BRANCH = input.base;
  env.LOOPFLEET_GIT_ROOT = input.gitRoot;
  env.PORT = String(input.port);
  return env;
}

/** The person's whole environment minus loopfleet's credentials (model keys, forge tokens), plus the task's variables. */
export function personEnv(parent: NodeJS.ProcessEnv, input: TaskEnvInput): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(parent))
    if (value !== undefined && !isLoopfleetCredential(name)) env[name] = value;
  return loopfleetVariables(env, input);
}
