import type { ForgeSetting } from '../../domain/forge-setting.js';
import type { RemoteAuth } from '../../ports/git.js';
import { originOf } from '../../domain/remote-url.js';
import type { ForgeKind } from '../../ports/forge.js';
import { DEFAULT_GITHUB_API } from './github-client.js';
import { DEFAULT_GITLAB_API } from './gitlab-client.js';
import { tokenHeader } from '../git/transport.js';

/**
 * Which forge and repository the remote is, from the `forge:` setting, the remote's URL and the API URLs of
 * the environment (GITHUB_API_URL, GITLAB_API_URL). A GitHub Enterprise or self-hosted GitLab host is
 * recognised by its API URL's host; with `forge: github|gitlab` and no API URL, the host's standard API
 * root is assumed (`https://HOST/api/v3`, `https://HOST/api/v4`).
 */

export interface ForgeTarget {
  kind: ForgeKind;
  /** `owner/name` or `group/…/project` */
  repo: string;
  /** the API root */
  apiUrl: string;
  /** the forge's web and git host (`github.com`, `ghe.corp`) */
  host: string;
}

export type ForgeChoice = { kind: 'forge'; target: ForgeTarget } | { kind: 'none'; reason: string };

export interface RemoteLocation {
  host: string;
  /** the path without leading slash or `.git` suffix: `owner/name`, `group/sub/project` */
  path: string;
  scheme: 'https' | 'http' | 'ssh';
}

/** The host and path of a remote URL (https, ssh, scp-like `git@host:path`); null for a local path or file URL. */
export function parseRemoteUrl(url: string): RemoteLocation | null {
  const trimmed = url.trim();
  const explicit = /^([a-z][a-z0-9+.-]*):\/\/(?:[^@/]*@)?([^/:]+)(?::\d+)?\/(.+)$/i.exec(trimmed);
  if (explicit !== null) {
    const scheme = (explicit[1] ?? '').toLowerCase();
    const kind =
      scheme === 'https'
        ? 'https'
        : scheme === 'http'
          ? 'http'
          : scheme === 'ssh' || scheme === 'git+ssh' || scheme === 'ssh+git'
            ? 'ssh'
            : null;
    if (kind === null) return null;
    return { host: (explicit[2] ?? '').toLowerCase(), path: cleanPath(explicit[3] ?? ''), scheme: kind };
  }
  // `<transport>::<address>` is a remote helper, never a forge.
  if (/^[A-Za-z0-9+.-]+::/.test(trimmed)) return null;
  // scp-like: `[user@]host:path`, no slash before the colon, not a Windows drive.
  const scp = /^(?:[^@/:]+@)?([^/:]+):(?!\/\/)(.+)$/.exec(trimmed);
  if (scp !== null && !/^[A-Za-z]:[\\/]/.test(trimmed))
    return { host: (scp[1] ?? '').toLowerCase(), path: cleanPath(scp[2] ?? ''), scheme: 'ssh' };
  return null;
}

function cleanPath(path: string): string {
  return path
    .replace(/^\/+/, '')
    .replace(/\/+$/, '')
    .replace(/\.git$/, '');
}

/** Hosts git reaches a forge under besides its own (GitHub's and GitLab's ssh over port 443). */
const HOST_ALIASES: Record<string, string> = { 'ssh.github.com': 'github.com', 'altssh.gitlab.com': 'gitlab.com' };

function hostOf(apiUrl: string): string {
  try {
    const host = new URL(apiUrl).hostname.toLowerCase();
    return host === 'api.github.com' ? 'github.com' : host;
  } catch {
    return '';
  }
}

function apiFor(kind: ForgeKind, host: string, env: Record<string, string | undefined>): string {
  const set = (kind === 'github' ? env.GITHUB_API_URL : env.GITLAB_API_URL)?.trim();
  if (set) return set.replace(/\/+$/, '');
  if (kind === 'github') return host === 'github.com' || host === '' ? DEFAULT_GITHUB_API : `https://${host}/api/v3`;
  return host === 'gitlab.com' || host === '' ? DEFAULT_GITLAB_API : `https://${host}/api/v4`;
}

/** The forge `setting` and `remoteUrl` (null: no such remote) point at, or why there is none. */
export function chooseForge(
  setting: ForgeSetting,
  remoteUrl: string | null,
  env: Record<string, string | undefined>,
  remote = 'origin',
): ForgeChoice {
  if (setting === 'none') return { kind: 'none', reason: 'forge: none' };
  if (typeof setting === 'object') {
    const host = hostOf(apiFor(setting.type, '', env));
    return {
      kind: 'forge',
      target: { kind: setting.type, repo: setting.repo, apiUrl: apiFor(setting.type, host, env), host },
    };
  }
  if (remoteUrl === null)
    return { kind: 'none', reason: `there is no remote ${JSON.stringify(remote)} (git remote add ${remote} URL)` };
  const location = parseRemoteUrl(remoteUrl);
  if (location === null)
    return {
      kind: 'none',
      reason: `the remote ${JSON.stringify(remote)} is a local path, which names no repository on a forge: set forge: { type: github, repo: owner/name }`,
    };
  const host = HOST_ALIASES[location.host] ?? location.host;
  let kind: ForgeKind | null = setting === 'github' || setting === 'gitlab' ? setting : null;
  if (kind === null) {
    const githubHost = env.GITHUB_API_URL?.trim() ? hostOf(env.GITHUB_API_URL) : 'github.com';
    const gitlabHost = env.GITLAB_API_URL?.trim() ? hostOf(env.GITLAB_API_URL) : 'gitlab.com';
    kind =
      host === githubHost || host === 'github.com'
        ? 'github'
        : host === gitlabHost || host === 'gitlab.com'
          ? 'gitlab'
          : null;
  }
  if (kind === null) {
    return {
      kind: 'none',
      reason: `the remote's host ${host} is neither GitHub's nor GitLab's: set forge: github or gitlab, or GITHUB_API_URL / GITLAB_API_URL to its API`,
    };
  }
  const parts = location.path.split('/').filter((p) => p !== '');
  if (kind === 'github' ? parts.length !== 2 : parts.length < 2) {
    return {
      kind: 'none',
      reason: `the remote's path ${JSON.stringify(location.path)} is no ${kind === 'github' ? 'owner/name' : 'group/…/project'}: set forge: { type: ${kind}, repo: … }`,
    };
  }
  return { kind: 'forge', target: { kind, repo: parts.join('/'), apiUrl: apiFor(kind, host, env), host } };
}

/**
 * The header loopfleet's own git gives an https remote on the forge's host (GitHub: `x-access-token`,
 * GitLab: `oauth2`); undefined for ssh and for another host, whose credentials stay the person's.
 */
export function remoteAuth(target: ForgeTarget, remoteUrl: string, token: string): RemoteAuth | undefined {
  const location = parseRemoteUrl(remoteUrl);
  const origin = originOf(remoteUrl);
  if (location === null || location.scheme !== 'https' || location.host !== target.host || origin === null)
    return undefined;
  return {
    // the remote's own origin, its port included: git matches `http.<url>.*` on scheme, host and port
    urlPrefix: origin,
    header: tokenHeader(target.kind === 'github' ? 'x-access-token' : 'oauth2', token),
  };
}
