import type { AgentPreset, RunOutcome } from './types.js';
import { notLoggedIn, rateLimitOf } from './errors.js';
import { AgentSetupError } from '../../domain/errors.js';

/**
 * Codex CLI (`@openai/codex`) in exec mode: `codex exec --json`, JSONL events on stdout (`item.completed`,
 * `turn.completed` with usage). Codex has no system-prompt flag, so the role's prompt leads the user turn.
 * The implementer runs with Codex's own sandbox at `workspace-write`, read-only roles at `read-only`;
 * approvals are never asked in exec mode. Codex reports no cache writes and no cost: loopfleet prices its
 * tokens from the table.
 */

const NOT_LOGGED_IN = /(not logged in|please log in|codex login|401 Unauthorized|invalid_api_key|OPENAI_API_KEY)/i;

function classify(o: RunOutcome): Error | null {
  const text = `${o.reportedError ?? ''}\n${o.output}`;
  if (NOT_LOGGED_IN.test(text) && (o.exitCode !== 0 || o.reportedError !== null)) {
    return notLoggedIn('codex', 'run `codex login`, or set OPENAI_API_KEY', NOT_LOGGED_IN.exec(text)![0]);
  }
  const limited = rateLimitOf(o.reportedError ?? '') ?? (o.exitCode !== 0 ? rateLimitOf(o.output) : null);
  if (limited) return limited;
  if (o.reportedError !== null) return new AgentSetupError(`codex reported an error: ${o.reportedError.slice(0, 200)}`, 'api-error');
  return null;
}

export const codex: AgentPreset = {
  name: 'codex',
  defaultBin: 'codex',
  packageName: '@openai/codex',
  credentialEnv: /^(OPENAI_|CODEX_)/,
  configPaths: [{ path: '.codex', kind: 'dir' }],
  baseUrlEnv: ['OPENAI_BASE_URL'],
  defaultEndpoint: 'https://api.openai.com',
  loginHint: 'run `codex login`, or set OPENAI_API_KEY',
  keyEnv: ['OPENAI_API_KEY', 'CODEX_API_KEY'],
  loginFiles: ['.codex/auth.json'],
  build(request, bin) {
    const sandbox = request.access === 'write' ? 'workspace-write' : 'read-only';
    const argv = [bin, 'exec', '--json', '--skip-git-repo-check', '--sandbox', sandbox, '--model', request.model, '-'];
    return { argv, stdin: `${request.system.trimEnd()}\n\n${request.prompt.trimEnd()}\n`, env: {} };
  },
  classify,
};
