/**
 * A remote's URL as it may leave loopfleet's process: without the credentials a URL can carry in its user
 * information (`https://gitlab-ci-token:TOKEN@host/group/project.git`, as GitLab CI writes them).
 *
 * Invariant: every remote URL that is stored (state, a queued job), logged, shown or passed as an argument
 * goes through {@link withoutUserinfo} first; the credentials are read, where loopfleet needs them, by
 * {@link userinfoOf} and given to the one git process that reaches that host, never on its command line.
 */

/** `scheme://[userinfo@]host…`: the parts around the user information */
const WITH_SCHEME = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#@]*@)?(.*)$/is;

/**
 * The URL without its user information. For http(s) all of it goes (a user name there is a token's label
 * as often as not); for another scheme (`ssh://git@host/…`) the user name stays — ssh needs it and it is no
 * secret — and only a password goes. scp-like `git@host:path` and local paths carry no password: unchanged.
 */
export function withoutUserinfo(url: string): string {
  const m = WITH_SCHEME.exec(url);
  if (m === null || m[2] === undefined) return url;
  const scheme = (m[1] ?? '').toLowerCase();
  if (scheme === 'http://' || scheme === 'https://') return `${m[1]}${m[3]}`;
  const user = m[2].slice(0, -1).split(':')[0] ?? '';
  return `${m[1]}${user === '' ? '' : `${user}@`}${m[3]}`;
}

/** The user name and password an http(s) URL carries (percent-decoded); null when it carries no password. */
export function userinfoOf(url: string): { user: string; password: string } | null {
  const m = WITH_SCHEME.exec(url);
  const scheme = (m?.[1] ?? '').toLowerCase();
  if (m?.[2] === undefined || (scheme !== 'http://' && scheme !== 'https://')) return null;
  const info = m[2].slice(0, -1);
  const colon = info.indexOf(':');
  if (colon < 0) return null;
  const decode = (s: string) => {
    try {
      return decodeURIComponent(s);
    } catch {
      return s;
    }
  };
  return { user: decode(info.slice(0, colon)), password: decode(info.slice(colon + 1)) };
}

/** `https://host[:port]/` of an http(s) URL, lower-cased host, without user information; null for another URL. */
export function originOf(url: string): string | null {
  const bare = withoutUserinfo(url.trim());
  const m = /^(https?):\/\/([^/?#]+)/i.exec(bare);
  if (m === null) return null;
  const scheme = (m[1] ?? '').toLowerCase();
  let host = (m[2] ?? '').toLowerCase();
  if ((scheme === 'https' && host.endsWith(':443')) || (scheme === 'http' && host.endsWith(':80')))
    host = host.slice(0, host.lastIndexOf(':'));
  return `${scheme}://${host}/`;
}
