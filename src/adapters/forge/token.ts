import { execa } from 'execa';
import { InputError } from '../../domain/errors.js';
import type { ForgeTarget } from './select.js';

/**
 * The forge token, read by loopfleet's own process only: GitHub `GH_TOKEN` or `GITHUB_TOKEN` (on a GitHub
 * Enterprise host `GH_ENTERPRISE_TOKEN` / `GITHUB_ENTERPRISE_TOKEN` first, as `gh` reads them), else
 * `gh auth token --hostname HOST` when `gh` is on PATH; GitLab `GITLAB_TOKEN`. `gh` runs with an argument
 * list, never through a shell, and its stderr is never shown (it may name the host's config).
 */

const GH_TIMEOUT_MS = 10_000;

export type TokenSource = { token: string; from: string } | { token: null; missing: string };

export async function findForgeToken(
  target: ForgeTarget,
  env: Record<string, string | undefined>,
): Promise<TokenSource> {
  if (target.kind === 'gitlab') {
    const token = env.GITLAB_TOKEN?.trim();
    return token
      ? { token, from: 'GITLAB_TOKEN' }
      : { token: null, missing: `no GitLab token: set GITLAB_TOKEN to a token with the api scope for ${target.host}` };
  }
  const names =
    target.host === 'github.com'
      ? ['GH_TOKEN', 'GITHUB_TOKEN']
      : ['GH_ENTERPRISE_TOKEN', 'GITHUB_ENTERPRISE_TOKEN', 'GH_TOKEN', 'GITHUB_TOKEN'];
  for (const name of names) {
    const token = env[name]?.trim();
    if (token) return { token, from: name };
  }
  const fromGh = await ghAuthToken(target.host, env);
  if (fromGh !== null) return { token: fromGh, from: 'gh auth token' };
  return {
    token: null,
    missing: `no GitHub token for ${target.host}: set GH_TOKEN or GITHUB_TOKEN, or log in with gh auth login`,
  };
}

/** The token, or an InputError (exit 2) naming what is missing and where the forge was asked for. */
export async function requireForgeToken(
  target: ForgeTarget,
  env: Record<string, string | undefined>,
  where: string,
): Promise<string> {
  const found = await findForgeToken(target, env);
  if (found.token === null) throw new InputError(where, null, found.missing);
  return found.token;
}

async function ghAuthToken(host: string, env: Record<string, string | undefined>): Promise<string | null> {
  const clean: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) if (value !== undefined) clean[name] = value;
  const result = await execa('gh', ['auth', 'token', '--hostname', host], {
    env: clean,
    extendEnv: false,
    reject: false,
    timeout: GH_TIMEOUT_MS,
    stdin: 'ignore',
  });
  // Not on PATH (ENOENT), logged out, or timed out: no token from gh.
  if (result.failed || result.exitCode !== 0) return null;
  const token = String(result.stdout).trim();
  return token === '' || /\s/.test(token) ? null : token;
}
