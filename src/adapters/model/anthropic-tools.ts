import { realpath } from 'node:fs/promises';
import * as path from 'node:path';
import type { BetaRunnableTool } from '@anthropic-ai/sdk/lib/tools/BetaRunnableTool';
import { ToolError } from '@anthropic-ai/sdk/lib/tools/ToolError';
import { betaAgentToolset20260401 } from '@anthropic-ai/sdk/tools/agent-toolset/node';
import type { AgentEvent, AgentRequest } from '../../ports/model.js';
import type { ProcessRunner } from '../../ports/process.js';
import { formatLimitDuration } from '../../core/text/format-units.js';

/**
 * The tools an agent gets. File tools are the SDK's agent toolset (confined to the worktree, symlink-aware),
 * with `.git` refused on top. The shell is never the SDK's unrestricted bash: it is our own `bash` with the
 * same input schema, running each command through the ProcessRunner — in the sandbox when there is one.
 * Every tool reports its result as a `tool-result` event.
 */

export const READ_ONLY_TOOLS = ['read', 'glob', 'grep'] as const;
export const WRITE_TOOLS = ['read', 'write', 'edit', 'glob', 'grep'] as const;

export const SHELL_TIMEOUT_MS = 120_000;
export const SHELL_MAX_OUTPUT_BYTES = 30_000;
const EVENT_TEXT_LIMIT = 4_000;

/** The SDK bash tool's input schema, used when the toolset does not offer one to copy. */
const BASH_INPUT_SCHEMA = {
  type: 'object',
  properties: {
    command: { type: 'string', description: 'The command to run' },
    restart: { type: 'boolean', description: 'Restart the persistent shell before running' },
    timeout_ms: { type: 'integer', description: 'Per-call timeout in milliseconds' },
  },
} as const;

interface BashInput {
  command?: string;
  restart?: boolean;
  timeout_ms?: number;
}

export interface ToolDeps {
  processRunner: ProcessRunner;
  sandboxAvailable: boolean;
}

export function truncate(text: string, limit = EVENT_TEXT_LIMIT): string {
  return text.length <= limit ? text : `${text.slice(0, limit)}… [${text.length - limit} more characters]`;
}

function resultText(result: unknown): string {
  if (typeof result === 'string') return result;
  if (Array.isArray(result)) {
    return result
      .map((b: { type?: string; text?: string }) => (b.type === 'text' ? (b.text ?? '') : `[${b.type}]`))
      .join('\n');
  }
  return String(result);
}

/** Whether `p` (relative to `workdir` or absolute) names `.git` or something in it, following symlinks. */
export async function touchesGitDir(workdir: string, p: string): Promise<boolean> {
  const lexical = path.relative(workdir, path.resolve(workdir, p));
  if (lexical.split(path.sep).includes('.git')) return true;
  const root = await realpath(workdir);
  // The nearest existing ancestor, resolved, so a symlink to .git is seen for what it is.
  let existing = path.resolve(workdir, p);
  const rest: string[] = [];
  for (;;) {
    try {
      existing = await realpath(existing);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      const parent = path.dirname(existing);
      if (parent === existing) return false;
      rest.unshift(path.basename(existing));
      existing = parent;
    }
  }
  return path
    .relative(root, path.join(existing, ...rest))
    .split(path.sep)
    .includes('.git');
}

function guardGitDir(tool: BetaRunnableTool, workdir: string): BetaRunnableTool {
  const run = tool.run;
  return {
    ...tool,
    run: async (input: Record<string, unknown>, context) => {
      for (const key of ['file_path', 'path', 'pattern']) {
        const value = input?.[key];
        if (typeof value !== 'string' || value === '') continue;
        const hit = key === 'pattern' ? value.split(/[\\/{},]/).includes('.git') : await touchesGitDir(workdir, value);
        if (hit) throw new ToolError(`${tool.name}: ${value}: the .git directory is off limits`);
      }
      return run(input, context);
    },
  };
}

function observed(tool: BetaRunnableTool, onEvent: (event: AgentEvent) => void): BetaRunnableTool {
  const run = tool.run;
  return {
    ...tool,
    run: async (input, context) => {
      try {
        const result = await run(input, context);
        onEvent({ type: 'tool-result', name: tool.name, output: truncate(resultText(result)), isError: false });
        return result;
      } catch (error) {
        const text = error instanceof ToolError ? resultText(error.content) : String(error);
        onEvent({ type: 'tool-result', name: tool.name, output: truncate(text), isError: true });
        throw error;
      }
    },
  };
}

function shellTool(
  request: AgentRequest,
  deps: ToolDeps,
  inputSchema: Record<string, unknown>,
): BetaRunnableTool<BashInput> {
  const sandbox = deps.sandboxAvailable ? { writable: [request.workdir] } : null;
  return {
    type: 'custom',
    name: 'bash',
    description:
      'Run a shell command in the task worktree (the working directory). Each call starts a fresh shell: ' +
      'cd and variables do not carry over. Output is cut to its last 30000 bytes; the timeout is 120 s.',
    input_schema: inputSchema as { type: 'object' },
    parse: (content: unknown) => content as BashInput,
    run: async ({ command, restart, timeout_ms }, context) => {
      if (!command) {
        if (restart) return 'shell restarted (every command runs in a fresh shell anyway)';
        throw new ToolError('bash: command is required');
      }
      const timeoutMs = Math.min(SHELL_TIMEOUT_MS, Math.max(1_000, timeout_ms ?? SHELL_TIMEOUT_MS));
      const result = await deps.processRunner.run(command, {
        cwd: request.workdir,
        env: request.env,
        timeoutMs,
        sandbox,
        maxOutputBytes: SHELL_MAX_OUTPUT_BYTES,
        signal: context?.signal ?? request.signal,
      });
      const output = `${result.truncated ? `[output cut to its last ${SHELL_MAX_OUTPUT_BYTES} bytes]\n` : ''}${result.output}`;
      if (result.aborted) throw new ToolError('bash: aborted');
      if (result.timedOut) throw new ToolError(`${output}\nbash: timed out after ${formatLimitDuration(timeoutMs)}`);
      if (result.exitCode !== 0) {
        throw new ToolError(
          `${output}\n[exit ${result.exitCode === null ? `signal ${result.signal}` : `code ${result.exitCode}`}]`,
        );
      }
      return output === '' ? '(no output)' : output;
    },
  };
}

/** The tools for `request`, in a stable order (the cached prefix), the last one marked for caching. */
export function agentTools(
  request: AgentRequest,
  deps: ToolDeps,
  onEvent: (event: AgentEvent) => void,
): BetaRunnableTool[] {
  const toolset = betaAgentToolset20260401({ workdir: request.workdir, env: request.env });
  const names: readonly string[] = request.access === 'write' ? WRITE_TOOLS : READ_ONLY_TOOLS;
  const tools: BetaRunnableTool[] = names.map((name) => {
    const tool = toolset.find((t) => t.name === name);
    if (tool === undefined) throw new Error(`the SDK agent toolset has no '${name}' tool`);
    return guardGitDir(tool, request.workdir);
  });
  if (request.access === 'write' && request.shell) {
    const sdkBash = toolset.find((t) => t.name === 'bash');
    const copied = sdkBash !== undefined && 'input_schema' in sdkBash ? sdkBash.input_schema : undefined;
    const schema = (copied as Record<string, unknown> | undefined) ?? BASH_INPUT_SCHEMA;
    tools.push(shellTool(request, deps, schema) as BetaRunnableTool);
  }
  const result = tools.map((t) => observed(t, onEvent));
  const last = result.length - 1;
  if (last >= 0) result[last] = { ...result[last]!, cache_control: { type: 'ephemeral' } };
  return result;
}
