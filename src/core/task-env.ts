/**
 * The environment of setup, check, shell tool and command-line agents. It is built from scratch so that
 * no credential of the person running loopfleet reaches code an agent wrote.
 */

const SECRET_NAME = /^(ANTHROPIC_|OPENAI_|AWS_|GH_|GITHUB_TOKEN|NPM_TOKEN|CLAUDE_)|(_KEY|_TOKEN|_SECRET|SECRET|PASSWORD|PASSWD|CREDENTIALS?)$/i;

export function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name);
}

export interface TaskEnvInput {
  taskId: string;
  worktree: string;
  branch: string;
  base: string;
  gitRoot: string;
  port: number;
}

export function taskEnv(parent: NodeJS.ProcessEnv, input: TaskEnvInput): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(parent)) {
    if (value !== undefined && !isSecretName(name)) env[name] = value;
  }
  env.LOOPFLEET_TASK_ID = input.taskId;
  env.LOOPFLEET_WORKTREE_PATH = input.worktree;
  env.LOOPFLEET_BRANCH = input.branch;
  env.LOOPFLEET_BASE_BRANCH = input.base;
  env.LOOPFLEET_GIT_ROOT = input.gitRoot;
  env.PORT = String(input.port);
  return env;
}
