import path from 'node:path';
import type { AgentPreset, RunOutcome } from './types.js';
import { notLoggedIn, rateLimitOf } from './errors.js';
import { AgentSetupError } from '../../../domain/errors.js';

/**
 * Codex CLI (`@openai/codex`) in exec mode: `codex exec --json`, JSONL events on stdout (`item.completed`,
 * `turn.completed` with usage). Codex has no system-prompt flag, so the role's prompt leads the user turn.
 * Read-only roles run with Codex's own sandbox at `read-only`; the implementer at `workspace-write`, or —
 * inside loopfleet's sandbox, where Codex's own bubblewrap cannot nest — with
 * `--dangerously-bypass-approvals-and-sandbox`, which Codex documents for externally sandboxed runs. On
 * macOS every sandboxed role runs so: Codex's sandbox there is Seatbelt, which cannot apply a profile inside
 * loopfleet's (sandbox-exec refuses nesting); a read-only role's worktree is checked afterwards by loopfleet.
 * Approvals are never asked in exec mode. A final-answer schema (the reviewer's verdict) goes to
 * `--output-schema`, a file in the run's scratch folder. `OPENAI_BASE_URL` is turned into a custom Responses
 * provider. Codex reports no cache writes and no cost: loopfleet prices its tokens from the table.
 */

const SCHEMA_FILE = 'output-schema.json';

const NOT_LOGGED_IN = /(not logged in|please log in|codex login|401 Unauthorized|invalid_api_key|OPENAI_API_KEY)/i;

function classify(o: RunOutcome): Error | null {
  const text = `${o.reportedError ?? ''}\n${o.output}`;
  if (NOT_LOGGED_IN.test(text) && (o.exitCode !== 0 || o.reportedError !== null)) {
    return notLoggedIn('codex', 'run `codex login`, or set OPENAI_API_KEY', NOT_LOGGED_IN.exec(text)![0]);
  }
  const limited = rateLimitOf(o.reportedError ?? '') ?? (o.exitCode !== 0 ? rateLimitOf(o.output) : null);
  if (limited) return limited;
  if (o.reportedError !== null)
    return new AgentSetupError(`codex reported an error: ${o.reportedError.slice(0, 200)}`, 'api-error');
  return null;
}

export const codex: AgentPreset = {
  name: 'codex',
  defaultBin: 'codex',
  packageName: '@openai/codex',
  credentialEnv: /^(OPENAI_|CODEX_)/,
  configPaths: [{ path: '.codex', kind: 'dir', cache: ['sessions', 'archived_sessions', 'log'] }],
  baseUrlEnv: ['OPENAI_BASE_URL'],
  defaultEndpoint: 'https://api.openai.com',
  loginHint: 'run `codex login`, or set OPENAI_API_KEY',
  keyEnv: ['OPENAI_API_KEY', 'CODEX_API_KEY'],
  loginFiles: ['.codex/auth.json'],
  build(request, bin, env, sandboxed, scratch, platform = 'linux') {
    const argv = [bin, 'exec', '--json', '--skip-git-repo-check'];
    if (sandboxed && (request.access === 'write' || platform === 'darwin')) {
      // Codex's own sandbox is bubblewrap too and cannot nest inside loopfleet's, which confines the run.
      argv.push('--dangerously-bypass-approvals-and-sandbox');
    } else {
      argv.push('--sandbox', request.access === 'write' ? 'workspace-write' : 'read-only');
    }
    argv.push('--model', request.model);
    // Codex does not read OPENAI_BASE_URL itself (0.171): a custom provider on the Responses API points it there.
    const base = env.OPENAI_BASE_URL;
    if (base !== undefined && base !== '') {
      argv.push('-c', 'model_provider="loopfleet"');
      argv.push(
        '-c',
        `model_providers.loopfleet={name="loopfleet", base_url=${JSON.stringify(base)}, env_key="OPENAI_API_KEY", wire_api="responses"}`,
      );
    }
    // The reviewer's verdict schema: Codex asks the model for exactly that shape (a strict json_schema format).
    const files: Record<string, string> = {};
    if (request.outputSchema !== undefined) {
      files[SCHEMA_FILE] = JSON.stringify(request.outputSchema);
      argv.push('--output-schema', path.join(scratch, SCHEMA_FILE));
    }
    argv.push('-');
    return { argv, stdin: `${request.system.trimEnd()}\n\n${request.prompt.trimEnd()}\n`, env: {}, files };
  },
  classify,
};
