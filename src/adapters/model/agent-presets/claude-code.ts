import { AgentSetupError } from '../../../domain/errors.js';
import type { AgentPreset, RunOutcome } from './types.js';
import { notLoggedIn, rateLimitOf } from './errors.js';

/**
 * Claude Code (`@anthropic-ai/claude-code`, the `claude` executable) in print mode:
 * `claude -p --output-format stream-json --verbose`, the prompt on stdin, the role's system prompt appended
 * to Claude Code's own (which its tools rely on), the role's model and turn limit.
 *
 * Permissions:
 * - the implementer runs with `--permission-mode acceptEdits` and an explicit allow-list that includes Bash:
 *   edits inside the working folder and every shell command run without a prompt, while Claude Code's own
 *   guards (edits outside the folder, web tools) stay in force. `--dangerously-skip-permissions` is not
 *   used: it drops those guards and Claude Code refuses it when run as root unless told it is sandboxed;
 *   loopfleet's bubblewrap sandbox is the confinement in both cases;
 * - read-only roles get Read, Glob and Grep and have Edit, Write, NotebookEdit and Bash removed, so a
 *   write is refused by Claude Code itself; loopfleet checks the worktree afterwards anyway.
 * Web tools are removed for every role: the sandbox lets the agent reach its model and nothing else.
 * On macOS, inside loopfleet's Seatbelt sandbox, Claude Code's own sandbox (`sandbox.enabled`, Seatbelt too,
 * which cannot nest) is turned off with `--settings`, which outranks the user's and the project's settings.
 *
 * A final-answer schema (the reviewer's verdict) is passed with `--json-schema`; the answer is then the
 * `structured_output` of the final result.
 */

const QUIET = {
  DISABLE_TELEMETRY: '1',
  DISABLE_ERROR_REPORTING: '1',
  DISABLE_AUTOUPDATER: '1',
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  DISABLE_BUG_COMMAND: '1',
};

const WRITE_TOOLS = ['Read', 'Glob', 'Grep', 'Edit', 'Write', 'NotebookEdit', 'Bash', 'TodoWrite'];
const READ_TOOLS = ['Read', 'Glob', 'Grep'];
const NEVER = ['WebFetch', 'WebSearch'];
const WRITING = ['Edit', 'Write', 'NotebookEdit', 'Bash'];

const NOT_LOGGED_IN =
  /(not logged in|please run \/login|invalid api key|authentication_error|oauth token (?:has )?expired|x-api-key header is required|could not resolve authentication)/i;
const API_ERROR = /API Error:?\s*(\d{3})?[^\n]*/;
const CANNOT_CONNECT = /(unable to connect to api|ECONNREFUSED|ENOTFOUND|fetch failed|connection error)/i;

function classify(o: RunOutcome): Error | null {
  const text = `${o.reportedError ?? ''}\n${o.output}`;
  if (NOT_LOGGED_IN.test(text)) {
    return notLoggedIn(
      'claude-code',
      "run `claude /login`, or set ANTHROPIC_API_KEY in loopfleet's environment",
      NOT_LOGGED_IN.exec(text)![0],
    );
  }
  const limited = rateLimitOf(o.reportedError ?? '') ?? (o.exitCode !== 0 ? rateLimitOf(o.output) : null);
  if (limited) return limited;
  if (o.denials.length > 0 && o.access === 'write') {
    return new AgentSetupError(
      `claude-code refused tools the implementer needs: ${[...new Set(o.denials)].join(', ')}; check permissions.deny in ~/.claude/settings.json or the repository's .claude/settings.json`,
      'permission-denied',
    );
  }
  if (CANNOT_CONNECT.test(text) && o.exitCode !== 0) {
    return new AgentSetupError(
      `claude-code cannot reach its model (${CANNOT_CONNECT.exec(text)![0]}): check ANTHROPIC_BASE_URL, and add the host to network: in BACKLOG.md if it is a proxy`,
      'api-error',
    );
  }
  const api = API_ERROR.exec(text);
  if (api && (o.exitCode !== 0 || o.reportedError !== null)) {
    return new AgentSetupError(`claude-code got an API error: ${api[0].trim().slice(0, 200)}`, 'api-error');
  }
  return null;
}

export const claudeCode: AgentPreset = {
  name: 'claude-code',
  defaultBin: 'claude',
  packageName: '@anthropic-ai/claude-code',
  credentialEnv: /^(ANTHROPIC_|CLAUDE_)/,
  configPaths: [
    {
      path: '.claude',
      kind: 'dir',
      cache: ['projects', 'todos', 'shell-snapshots', 'statsig', 'debug', 'file-history'],
    },
    { path: '.claude.json', kind: 'file' },
  ],
  baseUrlEnv: ['ANTHROPIC_BASE_URL'],
  defaultEndpoint: 'https://api.anthropic.com',
  loginHint: 'run `claude /login`, or set ANTHROPIC_API_KEY',
  keyEnv: ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'CLAUDE_CODE_OAUTH_TOKEN'],
  loginFiles: ['.claude/.credentials.json'],
  build(request, bin, _env, sandboxed, _scratch, platform = 'linux') {
    const write = request.access === 'write';
    const argv = [bin, '-p', '--output-format', 'stream-json', '--verbose'];
    argv.push('--model', request.model, '--max-turns', String(request.maxTurns));
    argv.push('--append-system-prompt', request.system);
    if (write) {
      // Without a sandbox (and without `sandbox: off`) the shell is not offered, as for an API agent.
      const tools = request.shell ? WRITE_TOOLS : WRITE_TOOLS.filter((t) => t !== 'Bash');
      const never = request.shell ? NEVER : [...NEVER, 'Bash'];
      argv.push(
        '--permission-mode',
        'acceptEdits',
        '--allowedTools',
        tools.join(','),
        '--disallowedTools',
        never.join(','),
      );
    } else {
      argv.push(
        '--permission-mode',
        'default',
        '--allowedTools',
        READ_TOOLS.join(','),
        '--disallowedTools',
        [...WRITING, ...NEVER].join(','),
      );
    }
    // The reviewer's verdict schema: Claude Code offers a StructuredOutput tool for it, insists that the model
    // call it, and reports what it took as `structured_output`.
    if (request.outputSchema !== undefined) argv.push('--json-schema', JSON.stringify(request.outputSchema));
    if (sandboxed && platform === 'darwin') argv.push('--settings', JSON.stringify({ sandbox: { enabled: false } }));
    return { argv, stdin: `${request.prompt.trimEnd()}\n`, env: { ...QUIET } };
  },
  classify,
};
