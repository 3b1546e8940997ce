import { networkInterfaces, hostname } from 'node:os';
import type { Context, MiddlewareHandler } from 'hono';
import { getCookie } from 'hono/cookie';
import { isToken } from './token.js';

/** The version of the API every response names in {@link API_VERSION_HEADER}; a breaking change raises it. */
export const API_VERSION = 1;
export const API_VERSION_HEADER = 'Loopfleet-Api';
/** The header a script or the page sends the token in on a POST (besides `Authorization: Bearer`). */
export const TOKEN_HEADER = 'X-Loopfleet-Token';

/**
 * The page loads its script and style from this server and talks only to it: no inline script, no
 * third-party request, no frame, no form target, no `<base>`.
 */
export const CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const SECURITY_HEADERS: ReadonlyArray<[string, string]> = [
  ['Content-Security-Policy', CONTENT_SECURITY_POLICY],
  ['X-Content-Type-Options', 'nosniff'],
  ['Referrer-Policy', 'no-referrer'],
  ['Cache-Control', 'no-store'],
  ['Cross-Origin-Opener-Policy', 'same-origin'],
  ['Cross-Origin-Resource-Policy', 'same-origin'],
  [API_VERSION_HEADER, String(API_VERSION)],
];

/** The cookie that carries the token once `/?token=` was opened; per port, as cookies are not scoped by port. */
export function cookieName(port: number): string {
  return `loopfleet-token-${port}`;
}

const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]'];

export function isLoopback(host: string): boolean {
  const h = host.toLowerCase();
  return h === 'localhost' || h === '::1' || h === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(h);
}

export function isWildcard(host: string): boolean {
  return host === '0.0.0.0' || host === '::' || host === '[::]';
}

function bracketed(host: string): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host.toLowerCase();
}

/**
 * The names a request may give in its Host header: the loopback names, the bound address, and — bound to
 * every interface — the machine's name and addresses. A page on another name that resolves here (DNS
 * rebinding) carries that other name and is refused before the token is even looked at.
 */
export function allowedHosts(boundHost: string, port: number, extra: readonly string[] = []): Set<string> {
  const names = new Set<string>(LOOPBACK_NAMES);
  if (isWildcard(boundHost)) {
    names.add(hostname().toLowerCase());
    for (const list of Object.values(networkInterfaces()))
      for (const address of list ?? []) names.add(bracketed(address.address));
  } else names.add(bracketed(boundHost));
  for (const name of extra) names.add(name.toLowerCase());
  const out = new Set<string>();
  for (const name of names) {
    out.add(`${name}:${port}`);
    if (port === 80) out.add(name);
  }
  return out;
}

export interface GuardOptions {
  token: string;
  /** the port the server listens on, known once it does (`--port 0`) */
  port: () => number;
  /** Host header values (`name:port`) this server answers to */
  hosts: () => ReadonlySet<string>;
  /** the origin the page has behind a reverse proxy (`LOOPFLEET_SERVE_ORIGIN`), besides `http://<Host>` */
  publicOrigin?: string | null;
}

const error = (c: Context, status: 400 | 401 | 403 | 405 | 415, message: string) => c.json({ error: message }, status);

/** The security headers, on every response (errors and the event stream included). */
export const securityHeaders: MiddlewareHandler = async (c, next) => {
  await next();
  for (const [name, value] of SECURITY_HEADERS) c.res.headers.set(name, value);
};

/** Refuses a request whose Host header is not one of this server's names (DNS rebinding). */
export function hostCheck(options: GuardOptions): MiddlewareHandler {
  return async (c, next) => {
    const host = (c.req.header('host') ?? '').toLowerCase();
    if (!options.hosts().has(host))
      return error(
        c,
        403,
        `Host '${host}' is not a name of this server; open it as http://127.0.0.1:${options.port()}/`,
      );
    await next();
  };
}

/** The token a request carries in a header (`Authorization: Bearer` or {@link TOKEN_HEADER}), if any. */
function headerToken(c: Context): string | undefined {
  const auth = c.req.header('authorization');
  if (auth !== undefined) {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    if (m !== null) return m[1];
  }
  return c.req.header(TOKEN_HEADER);
}

/**
 * Who may ask anything: a request with the token in a header, or (GET only) in the cookie. `GET /?token=`
 * with the right token sets the cookie and redirects to `/`, so the token leaves the address bar and the
 * history. Everything else gets 401 and nothing is read or changed.
 */
export function authCheck(options: GuardOptions): MiddlewareHandler {
  return async (c, next) => {
    const method = c.req.method;
    const fromHeader = headerToken(c);
    if (fromHeader !== undefined && !isToken(fromHeader, options.token)) return unauthorised(c);
    if (method === 'GET' && c.req.path === '/' && c.req.query('token') !== undefined) {
      if (!isToken(c.req.query('token'), options.token)) return unauthorised(c);
      // Secure when a proxy serves the page over TLS: the browser then never sends the cookie in clear text.
      const secure = options.publicOrigin?.startsWith('https:') ? '; Secure' : '';
      c.header(
        'Set-Cookie',
        `${cookieName(options.port())}=${options.token}; Path=/; HttpOnly; SameSite=Strict${secure}`,
      );
      return c.redirect('/', 303);
    }
    if (method !== 'GET' && method !== 'HEAD' && method !== 'POST') {
      return error(c, 405, `${method} is not a method of this server (GET reads, POST acts)`);
    }
    if (method === 'POST') {
      // A cookie is sent by the browser to any request for this origin, a cross-site form's too: it never
      // authorises an action. Only a header, which no other origin's page can set, does.
      if (fromHeader === undefined) {
        if (isToken(getCookie(c, cookieName(options.port())), options.token))
          return error(
            c,
            403,
            `an action needs the token in an Authorization: Bearer or ${TOKEN_HEADER} header; the cookie alone does not authorise it`,
          );
        return unauthorised(c);
      }
      const refusal = crossSiteRefusal(c, options.publicOrigin ?? null);
      if (refusal !== null) return error(c, 403, refusal);
      const type = (c.req.header('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
      if (type !== 'application/json') return error(c, 415, 'an action takes Content-Type: application/json');
      await next();
      return;
    }
    if (fromHeader === undefined && !isToken(getCookie(c, cookieName(options.port())), options.token))
      return unauthorised(c);
    await next();
  };
}

/** Why a POST looks cross-site: an Origin other than this server's, or the browser saying it is cross-site. */
function crossSiteRefusal(c: Context, publicOrigin: string | null): string | null {
  const origin = c.req.header('origin');
  const own = `http://${(c.req.header('host') ?? '').toLowerCase()}`;
  if (origin !== undefined && origin.toLowerCase() !== own && origin.toLowerCase() !== publicOrigin)
    return `an action from origin '${origin}' is refused: only this server's own page (${own}) may act`;
  const site = c.req.header('sec-fetch-site');
  if (site !== undefined && site !== 'same-origin' && site !== 'none')
    return `an action from a ${site} page is refused: only this server's own page may act`;
  return null;
}

function unauthorised(c: Context) {
  c.header('WWW-Authenticate', 'Bearer realm="loopfleet"');
  return error(
    c,
    401,
    'this loopfleet server needs its token: open the URL it printed (…/?token=…) or send Authorization: Bearer <token>',
  );
}
