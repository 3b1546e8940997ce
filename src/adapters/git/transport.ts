/**
 * The one deliberate exception to HARDENING_CONFIG's "no transport": loopfleet's own push, fetch and
 * ls-remote to the person's remote (pull requests, workers).
 *
 * What stays closed, and why it is enough:
 * - only the scheme of the URL being reached is allowed (`protocol.<scheme>.allow=always` after
 *   `protocol.allow=never`): an `ext::` URL, or a second transport a server's redirect names, stays refused;
 * - the URL is the person's: a remote's URL comes from `.git/config`, which no agent can write (the sandbox
 *   mounts the common folder read-only), or from the coordinator's job (a worker), never from a work tree;
 * - hooks stay off (`core.hooksPath=/dev/null`): a `pre-push` hook in `.husky/` is agent-written code;
 * - ssh runs the person's ssh: `GIT_SSH_COMMAND` from their environment, else `ssh` — never a repository
 *   config's `core.sshCommand` (HARDENING_CONFIG sets it to `false` and this overrides it only for ssh URLs);
 * - credentials are the person's credential helper, or a token given here as an `http.extraHeader` through
 *   GIT_CONFIG_* variables of the git process only — never an argument (visible in `ps`), never a file;
 *   the header is scoped to one https origin (`http.https://host[:port]/.extraHeader`).
 */
import { withoutUserinfo } from '../../domain/remote-url.js';

export type TransportScheme = 'https' | 'http' | 'ssh' | 'file' | 'git';

/** The transport a remote URL uses, as git decides it; null for one loopfleet never allows (`ext::`, `fd::`, helpers). */
export function schemeOf(url: string): TransportScheme | null {
  const explicit = /^([a-z][a-z0-9+.-]*):\/\//i.exec(url)?.[1]?.toLowerCase();
  if (explicit !== undefined) {
    if (explicit === 'https' || explicit === 'http' || explicit === 'ssh' || explicit === 'file' || explicit === 'git')
      return explicit;
    if (explicit === 'git+ssh' || explicit === 'ssh+git') return 'ssh';
    return null;
  }
  // `<transport>::<address>` runs git-remote-<transport>: a program, never allowed.
  if (/^[A-Za-z0-9+.-]+::/.test(url)) return null;
  // scp-like `user@host:path` (no slash before the first colon) is ssh; anything else is a local path.
  if (/^[^/:]+:/.test(url) && !/^[A-Za-z]:[\\/]/.test(url)) return 'ssh';
  return 'file';
}

export interface TransportAuth {
  /** the URL prefix the header applies to (`https://github.com/`) */
  urlPrefix: string;
  /** the whole header, e.g. `Authorization: Basic …` */
  header: string;
}

/** `key=value` settings for a command that reaches `url`, after HARDENING_CONFIG; throws for a refused scheme. */
export function transportConfig(url: string, env: NodeJS.ProcessEnv = process.env): string[] {
  const scheme = schemeOf(url);
  if (scheme === null)
    throw new Error(
      `loopfleet does not reach remotes through ${JSON.stringify(url.split(':')[0])}: use an https, ssh or file URL`,
    );
  const config = [`protocol.${scheme}.allow=always`];
  if (scheme === 'ssh') config.push(`core.sshCommand=${env.GIT_SSH_COMMAND?.trim() || 'ssh'}`);
  return config;
}

/** GIT_CONFIG_* variables that give the git process the token's header (appended to any the caller set). */
export function authEnv(auth: TransportAuth, env: Record<string, string>): Record<string, string> {
  const count = Number.parseInt(env.GIT_CONFIG_COUNT ?? '0', 10);
  const n = Number.isInteger(count) && count >= 0 ? count : 0;
  return {
    ...env,
    GIT_CONFIG_COUNT: String(n + 1),
    [`GIT_CONFIG_KEY_${n}`]: `http.${auth.urlPrefix}.extraHeader`,
    [`GIT_CONFIG_VALUE_${n}`]: auth.header,
  };
}

/** An `Authorization: Basic` header for a user and password (or token). */
export function basicHeader(user: string, password: string): string {
  return `Authorization: Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
}

/** The header GitHub and GitLab take for a token over https (`x-access-token` / `oauth2` as the user). */
export function tokenHeader(user: string, token: string): string {
  return basicHeader(user, token);
}

/** A URL with any credentials removed, for messages ({@link withoutUserinfo}). */
export function displayUrl(url: string): string {
  return withoutUserinfo(url);
}
