import { chooseForge } from '../adapters/forge/select.js';
import { findForgeToken } from '../adapters/forge/token.js';
import { GitLabForge } from '../adapters/forge/gitlab-forge.js';
import { GitHubTracker } from '../adapters/tracker/github-tracker.js';
import { GitLabTracker } from '../adapters/tracker/gitlab-tracker.js';
import { oneLine } from '../domain/sanitize.js';
import type { ForgeSetting } from '../domain/forge-setting.js';
import type { TrackerSetting } from '../domain/tracker-setting.js';
import type { GitPort } from '../ports/git.js';
import type { ForgeCheck } from './doctor-forge.js';
import { linearChecks } from './doctor-linear.js';

/**
 * doctor's tracker section (only with `tracker:`; Linear's is {@link linearChecks}): the repository it names,
 * the token (on GitLab its `api` scope), that the token's user may write there (the state labels and the
 * status comment need it), and that the label exists. Never prints the token, only where it came from.
 */

export interface TrackerDoctorConfig {
  remote?: string;
  forge?: ForgeSetting;
  tracker?: TrackerSetting;
}

export interface TrackerDoctorInput {
  git: Pick<GitPort, 'remoteUrl'>;
  env: Record<string, string | undefined>;
  /** client options for tests (shorter waits) */
  tuning?: { msPerSecond?: number; writeSpacingMs?: number };
}

export async function trackerChecks(config: TrackerDoctorConfig, input: TrackerDoctorInput): Promise<ForgeCheck[]> {
  const setting = config.tracker;
  if (setting === undefined) return [];
  const checks: ForgeCheck[] = [];
  const check = (ok: boolean, what: string, detail: string): void => {
    checks.push({ ok, role: 'fleet', what, detail: oneLine(detail) });
  };
  if (setting.type === 'linear') {
    await linearChecks(setting, input.env, input.tuning, check);
    return checks;
  }
  const remote = config.remote ?? 'origin';
  const choice = chooseForge(config.forge ?? 'auto', await input.git.remoteUrl(remote), input.env, remote);
  if (choice.kind === 'none') {
    check(false, 'tracker', `tracker: ${setting.type} needs its repository: ${choice.reason}`);
    return checks;
  }
  const { target } = choice;
  if (target.kind !== setting.type) {
    check(false, 'tracker', `tracker: ${setting.type}, but the repository ${target.repo} is on ${target.kind}`);
    return checks;
  }
  const token = await findForgeToken(target, input.env);
  if (token.token === null) {
    check(false, 'tracker', token.missing);
    return checks;
  }
  const options = { token: token.token, apiUrl: target.apiUrl, maxRetries: 1, maxWaitSeconds: 10, ...input.tuning };
  const port =
    target.kind === 'gitlab' ? new GitLabTracker(target.repo, options) : new GitHubTracker(target.repo, options);
  const forge = target.kind === 'gitlab' ? 'GitLab' : 'GitHub';
  try {
    const user = await port.self();
    const permission = await port.permission(user);
    check(
      permission.canWrite,
      'tracker',
      permission.canWrite
        ? `${forge} issues of ${target.repo} labelled ${setting.label}, as ${user} (${permission.permission}, through ${token.from})`
        : `${user} (${token.from}) may only ${permission.permission} ${target.repo}: the state labels and the status comment need write access`,
    );
    // GitLab names a personal token's scopes: without `api` the labels and the note cannot be written.
    if (target.kind === 'gitlab') {
      const facts = await new GitLabForge(target.repo, options).tokenFacts();
      if (facts.missing.length > 0)
        check(
          false,
          'tracker token',
          `${token.from} lacks the ${facts.missing.join(', ')} scope: labels and notes need it`,
        );
    }
    const has = await port.hasLabel(setting.label);
    check(
      has,
      'tracker label',
      has
        ? `${setting.label} exists on ${target.repo}`
        : `${target.repo} has no label ${setting.label}: create it, then put it on the issues to run`,
    );
  } catch (error) {
    check(false, 'tracker', `${token.from}: ${(error as Error).message}`);
  }
  return checks;
}
