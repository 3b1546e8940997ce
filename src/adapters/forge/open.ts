import { InputError } from '../../domain/errors.js';
import type { ForgeSetting } from '../../domain/forge-setting.js';
import type { ForgePort } from '../../ports/forge.js';
import type { GitPort, RemoteAuth } from '../../ports/git.js';
import { chooseForge, type ForgeTarget, remoteAuth } from './select.js';
import { findForgeToken } from './token.js';
import { GitHubForge } from './github-forge.js';
import { GitLabForge } from './gitlab-forge.js';

/**
 * The forge client for a repository: the setting and the remote decide which forge, the environment gives
 * the token. What `commands` wire into the PR path, `discover` and `doctor`.
 */

export type OpenedForge =
  | {
      kind: 'forge';
      forge: ForgePort;
      target: ForgeTarget;
      /** where the token came from (`GH_TOKEN`, `gh auth token`): for doctor, never the token */
      tokenFrom: string;
      remoteUrl: string | null;
      /** the header for loopfleet's own git on an https remote of the forge's host */
      auth: RemoteAuth | undefined;
    }
  | { kind: 'none'; reason: string; target: ForgeTarget | null };

export interface OpenForgeInput {
  setting: ForgeSetting;
  git: Pick<GitPort, 'remoteUrl'>;
  remote: string;
  env: Record<string, string | undefined>;
  /** client options for tests (shorter waits); the API URL and token always come from the environment */
  tuning?: { msPerSecond?: number; writeSpacingMs?: number; maxRetries?: number; maxWaitSeconds?: number };
  /** `pr.allow`: names whose comments and reviews count whatever their permission */
  allow?: readonly string[];
  /** `pr.timeout`: how long one request may take, ms */
  timeoutMs?: number;
  /** ends every request in flight and refuses new ones (a signal to the process) */
  signal?: AbortSignal;
}

export async function openForge(input: OpenForgeInput): Promise<OpenedForge> {
  const remoteUrl = await input.git.remoteUrl(input.remote);
  const choice = chooseForge(input.setting, remoteUrl, input.env, input.remote);
  if (choice.kind === 'none') return { kind: 'none', reason: choice.reason, target: null };
  const { target } = choice;
  const token = await findForgeToken(target, input.env);
  if (token.token === null) return { kind: 'none', reason: token.missing, target };
  const options = {
    token: token.token,
    apiUrl: target.apiUrl,
    ...input.tuning,
    ...(input.allow === undefined ? {} : { allow: input.allow }),
    ...(input.timeoutMs === undefined ? {} : { timeoutMs: input.timeoutMs }),
    ...(input.signal === undefined ? {} : { signal: input.signal }),
  };
  const forge =
    target.kind === 'github' ? new GitHubForge(target.repo, options) : new GitLabForge(target.repo, options);
  return {
    kind: 'forge',
    forge,
    target,
    tokenFrom: token.from,
    remoteUrl,
    auth: remoteUrl === null ? undefined : remoteAuth(target, remoteUrl, token.token),
  };
}

/**
 * The forge client `land: pr` needs, or an InputError (exit 2, nothing started) naming what is missing —
 * the remote, a forge its URL names, the token — located at `where` (the file that asked for it).
 */
export async function requireForge(
  input: OpenForgeInput,
  where: string,
): Promise<Extract<OpenedForge, { kind: 'forge' }>> {
  const opened = await openForge(input);
  if (opened.kind === 'none') throw new InputError(where, null, `land: pr needs a forge: ${opened.reason}`);
  return opened;
}
