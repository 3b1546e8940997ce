import type { AgentPreset, RunOutcome } from './types.js';
import { notLoggedIn, rateLimitOf } from './errors.js';
import { AgentSetupError } from '../../../domain/errors.js';

/**
 * Gemini CLI (`@google/gemini-cli`) headless: `gemini --output-format stream-json`, the prompt on stdin
 * (`-p` holds a one-line lead that stdin is appended to). The implementer runs with `--approval-mode yolo`
 * (or `auto_edit` when the shell is not offered); read-only roles in `plan`, Gemini's read-only mode.
 * `--skip-trust`: the task's worktree is a folder Gemini has not seen. No system-prompt flag short of
 * replacing Gemini's own (GEMINI_SYSTEM_MD), so the role's prompt leads the user turn. Flags and event
 * shapes as in @google/gemini-cli 0.61.0's help, source and runs against the loopback fake. On macOS, inside
 * loopfleet's Seatbelt sandbox, Gemini's own (`sandbox-exec`, which cannot nest) is off: GEMINI_SANDBOX=false,
 * which outranks its settings files.
 */

const NOT_LOGGED_IN = /(please set an auth method|GEMINI_API_KEY|login required|UNAUTHENTICATED|API key not valid)/i;

function classify(o: RunOutcome): Error | null {
  const text = `${o.reportedError ?? ''}\n${o.output}`;
  if (NOT_LOGGED_IN.test(text) && (o.exitCode !== 0 || o.reportedError !== null)) {
    return notLoggedIn(
      'gemini',
      'run `gemini` once to log in with Google, or set GEMINI_API_KEY',
      NOT_LOGGED_IN.exec(text)![0],
    );
  }
  const limited = rateLimitOf(o.reportedError ?? '') ?? (o.exitCode !== 0 ? rateLimitOf(o.output) : null);
  if (limited) return limited;
  if (o.reportedError !== null)
    return new AgentSetupError(`gemini reported an error: ${o.reportedError.slice(0, 200)}`, 'api-error');
  return null;
}

export const gemini: AgentPreset = {
  name: 'gemini',
  defaultBin: 'gemini',
  packageName: '@google/gemini-cli',
  credentialEnv: /^(GEMINI_|GOOGLE_)/,
  configPaths: [{ path: '.gemini', kind: 'dir', cache: ['tmp', 'history'] }],
  baseUrlEnv: ['GOOGLE_GEMINI_BASE_URL', 'GEMINI_BASE_URL'],
  defaultEndpoint: 'https://generativelanguage.googleapis.com',
  loginHint: 'log in with `gemini`, or set GEMINI_API_KEY',
  keyEnv: ['GEMINI_API_KEY', 'GOOGLE_API_KEY', 'GOOGLE_APPLICATION_CREDENTIALS'],
  loginFiles: ['.gemini/oauth_creds.json'],
  build(request, bin, _env, sandboxed, _scratch, platform = 'linux') {
    const write = request.access === 'write';
    // plan: Gemini's read-only mode; yolo: every tool without a prompt (the shell too), inside loopfleet's confinement
    const mode = !write ? 'plan' : request.shell ? 'yolo' : 'auto_edit';
    const argv = [
      bin,
      '--output-format',
      'stream-json',
      '--model',
      request.model,
      '--approval-mode',
      mode,
      '--skip-trust',
    ];
    argv.push('-p', 'Follow the instructions below.');
    const env: Record<string, string> = sandboxed && platform === 'darwin' ? { GEMINI_SANDBOX: 'false' } : {};
    return { argv, stdin: `${request.system.trimEnd()}\n\n${request.prompt.trimEnd()}\n`, env };
  },
  classify,
};
