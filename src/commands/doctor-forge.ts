import { chooseForge, remoteAuth } from '../adapters/forge/select.js';
import { redact } from '../adapters/forge/text.js';
import { findForgeToken } from '../adapters/forge/token.js';
import { displayUrl } from '../adapters/git/transport.js';
import { GitHubForge } from '../adapters/forge/github-forge.js';
import { GitLabForge } from '../adapters/forge/gitlab-forge.js';
import { oneLine } from '../domain/sanitize.js';
import type { ForgeSetting } from '../domain/forge-setting.js';
import type { ForgePort } from '../ports/forge.js';
import type { GitPort } from '../ports/git.js';

/**
 * doctor's forge section, before a night of pull requests: the remote exists and answers (through
 * loopfleet's own hardened git, with the token as a header for an https remote of the forge's host), base
 * is on it, the token is there and has the scopes loopfleet needs, and what base's branch protection
 * requires. Only when `land: pr` or `forge:` is set. Never prints the token, only where it came from.
 */

export interface ForgeDoctorConfig {
  base: string | null;
  land?: 'merge' | 'pr';
  remote?: string;
  forge?: ForgeSetting;
}

export interface ForgeCheck {
  ok: boolean;
  role: 'fleet';
  what: string;
  detail: string;
}

export interface ForgeDoctorInput {
  git: Pick<GitPort, 'remoteUrl' | 'lsRemote' | 'currentBranch'>;
  env: Record<string, string | undefined>;
  /** client options for tests (shorter waits) */
  tuning?: { msPerSecond?: number; writeSpacingMs?: number };
}

export async function forgeChecks(config: ForgeDoctorConfig, input: ForgeDoctorInput): Promise<ForgeCheck[]> {
  const wanted = config.land === 'pr' || config.forge !== undefined;
  if (!wanted) return [];
  const checks: ForgeCheck[] = [];
  const check = (ok: boolean, what: string, detail: string): void => {
    checks.push({ ok, role: 'fleet', what, detail: oneLine(detail) });
  };
  const remote = config.remote ?? 'origin';
  const remoteUrl = await input.git.remoteUrl(remote);
  const setting = config.forge ?? 'auto';
  if (remoteUrl === null) check(false, 'remote', `there is no remote ${remote}: git remote add ${remote} URL`);

  const choice = chooseForge(setting, remoteUrl, input.env, remote);
  if (choice.kind === 'none') {
    // forge: none with the local merge is a choice, not a problem.
    if (config.land === 'pr' || setting !== 'none')
      check(false, 'forge', `${config.land === 'pr' ? 'land: pr needs a forge: ' : ''}${choice.reason}`);
    else check(true, 'forge', 'none (forge: none)');
    return checks;
  }
  const { target } = choice;
  check(true, 'forge', `${target.kind === 'github' ? 'GitHub' : 'GitLab'} ${target.repo} at ${target.apiUrl}`);

  const token = await findForgeToken(target, input.env);
  const base = config.base ?? (await input.git.currentBranch());
  // The remote is checked without a token too: an ssh remote needs none, and the person learns both at once.
  if (remoteUrl !== null) {
    const auth = token.token === null ? undefined : remoteAuth(target, remoteUrl, token.token);
    await checkRemote(check, input.git, remote, remoteUrl, base, auth, token.token === null ? [] : [token.token]);
  }
  if (token.token === null) {
    check(false, 'token', token.missing);
    return checks;
  }

  const options = { token: token.token, apiUrl: target.apiUrl, maxRetries: 1, maxWaitSeconds: 10, ...input.tuning };
  const forge: ForgePort =
    target.kind === 'github' ? new GitHubForge(target.repo, options) : new GitLabForge(target.repo, options);
  try {
    const facts = await forge.tokenFacts();
    const need = target.kind === 'github' ? 'repo' : 'api';
    if (facts.scopes === null)
      check(
        true,
        'token',
        `${token.from}, as ${facts.user}; a fine-grained token (its permissions are not listed: it needs read and write on contents, pull requests and issues, read on checks and statuses)`,
      );
    else if (facts.missing.length > 0)
      check(
        false,
        'token',
        `${token.from}, as ${facts.user}, lacks the ${facts.missing.join(', ')} scope (it has ${facts.scopes.join(', ') || 'none'}): make one with ${need}`,
      );
    else check(true, 'token', `${token.from}, as ${facts.user}, scopes ${facts.scopes.join(', ')}`);
  } catch (error) {
    check(false, 'token', `${token.from}: ${(error as Error).message}`);
    return checks;
  }
  if (base === null) {
    check(false, 'branch protection', 'no base branch: set base: in the front matter or check a branch out');
    return checks;
  }
  try {
    const p = await forge.branchProtection(base);
    const requires = [
      p.requiredChecks.length > 0 ? `checks ${p.requiredChecks.join(', ')}` : '',
      p.requiredApprovals > 0 ? `${p.requiredApprovals} approving review(s)` : '',
    ].filter((s) => s !== '');
    check(
      true,
      'branch protection',
      p.protected
        ? `${base} is protected${requires.length > 0 ? `: a merge requires ${requires.join(' and ')}` : ''}`
        : `${base} is not protected: anyone who can push can merge`,
    );
  } catch (error) {
    check(false, 'branch protection', `${base}: ${(error as Error).message}`);
  }
  return checks;
}

async function checkRemote(
  check: (ok: boolean, what: string, detail: string) => void,
  git: ForgeDoctorInput['git'],
  remote: string,
  url: string,
  base: string | null,
  auth: Parameters<GitPort['lsRemote']>[2],
  secrets: string[],
): Promise<void> {
  const shown = `${remote} (${displayUrl(url)})`;
  try {
    const refs = base === null ? [] : [`refs/heads/${base}`];
    const found = await git.lsRemote(remote, refs, auth);
    const commit = base === null ? undefined : found.get(`refs/heads/${base}`);
    if (base !== null && commit === undefined)
      check(false, 'remote', `${shown} answers, but has no ${base}: push it first (git push ${remote} ${base})`);
    else
      check(
        true,
        'remote',
        `${shown} answers${commit === undefined ? '' : `, ${base} at ${commit.slice(0, 12)}`}${auth === undefined ? '' : ', with the token'}`,
      );
  } catch (error) {
    check(
      false,
      'remote',
      redact(`${shown} does not answer: ${(error as Error).message.split('\n')[0] ?? ''}`, secrets),
    );
  }
}
