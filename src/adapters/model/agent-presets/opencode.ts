import type { AgentPreset, RunOutcome } from './types.js';
import { notLoggedIn, rateLimitOf } from './errors.js';
import { AgentSetupError } from '../../../domain/errors.js';

/**
 * opencode (`opencode-ai`): `opencode run --format json`, JSON events on stdout; the model is
 * `provider/model` (a bare Anthropic model id gets `anthropic/`). Permissions come from opencode's own
 * config (`permission.edit`, `permission.bash`): loopfleet passes them in OPENCODE_CONFIG_CONTENT — allow
 * for the implementer, deny for read-only roles — with the provider's endpoint from ANTHROPIC_BASE_URL /
 * OPENAI_BASE_URL, which opencode does not read itself. It reports tokens and its own cost per step.
 */

const NOT_LOGGED_IN = /(no (?:api key|credentials)|opencode auth login|unauthorized|ProviderAuthError)/i;

function classify(o: RunOutcome): Error | null {
  const text = `${o.reportedError ?? ''}\n${o.output}`;
  if (NOT_LOGGED_IN.test(text) && (o.exitCode !== 0 || o.reportedError !== null)) {
    return notLoggedIn(
      'opencode',
      'run `opencode auth login`, or set the provider key (ANTHROPIC_API_KEY, OPENAI_API_KEY)',
      NOT_LOGGED_IN.exec(text)![0],
    );
  }
  const limited = rateLimitOf(o.reportedError ?? '') ?? (o.exitCode !== 0 ? rateLimitOf(o.output) : null);
  if (limited) return limited;
  if (o.reportedError !== null)
    return new AgentSetupError(`opencode reported an error: ${o.reportedError.slice(0, 200)}`, 'api-error');
  return null;
}

export const opencode: AgentPreset = {
  name: 'opencode',
  defaultBin: 'opencode',
  packageName: 'opencode-ai',
  credentialEnv: /^(OPENCODE_|ANTHROPIC_|OPENAI_)/,
  configPaths: [
    { path: '.local/share/opencode', kind: 'dir', cache: ['log', 'snapshot', 'storage'] },
    { path: '.config/opencode', kind: 'dir' },
  ],
  baseUrlEnv: ['ANTHROPIC_BASE_URL', 'OPENAI_BASE_URL'],
  defaultEndpoint: 'https://api.anthropic.com',
  loginHint: 'run `opencode auth login`',
  keyEnv: ['ANTHROPIC_API_KEY', 'OPENAI_API_KEY'],
  loginFiles: ['.local/share/opencode/auth.json'],
  build(request, bin, env) {
    const write = request.access === 'write';
    const model = request.model.includes('/') ? request.model : `anthropic/${request.model}`;
    const permission = write
      ? { edit: 'allow', bash: request.shell ? 'allow' : 'deny', webfetch: 'deny' }
      : { edit: 'deny', bash: 'deny', webfetch: 'deny' };
    const config: Record<string, unknown> = { permission, autoupdate: false, share: 'disabled' };
    // opencode's providers take their endpoint from its config, not from *_BASE_URL: pass it on.
    const provider: Record<string, unknown> = {};
    if (env.ANTHROPIC_BASE_URL)
      provider.anthropic = { options: { baseURL: `${env.ANTHROPIC_BASE_URL.replace(/\/+$/, '')}/v1` } };
    if (env.OPENAI_BASE_URL) provider.openai = { options: { baseURL: env.OPENAI_BASE_URL } };
    if (Object.keys(provider).length > 0) config.provider = provider;
    const argv = [bin, 'run', '--format', 'json', '--model', model];
    return {
      argv,
      stdin: `${request.system.trimEnd()}\n\n${request.prompt.trimEnd()}\n`,
      env: {
        OPENCODE_CONFIG_CONTENT: JSON.stringify(config),
        OPENCODE_DISABLE_MODELS_FETCH: '1',
        OPENCODE_DISABLE_AUTOUPDATE: '1',
      },
    };
  },
  classify,
};
