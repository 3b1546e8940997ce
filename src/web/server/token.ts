import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { UsageError } from '../../domain/errors.js';

/** The shortest token `LOOPFLEET_SERVE_TOKEN` may hold: anything shorter is guessable over a night of requests. */
export const MIN_TOKEN_LENGTH = 16;

/** The variable a reverse proxy or a service manager sets to fix the token instead of a new one per start. */
export const TOKEN_ENV = 'LOOPFLEET_SERVE_TOKEN';

/**
 * The token every request must carry: `LOOPFLEET_SERVE_TOKEN` when set, else 32 random bytes as base64url
 * (256 bits, URL-safe, so it goes into `?token=` as it is). A set variable that is too short, or holds
 * characters a URL or a cookie would mangle, is bad input: exit 2 before anything starts.
 */
export function serveToken(env: NodeJS.ProcessEnv): string {
  const given = env[TOKEN_ENV];
  if (given === undefined || given === '') return randomBytes(32).toString('base64url');
  if (given.length < MIN_TOKEN_LENGTH)
    throw new UsageError(
      `${TOKEN_ENV} holds ${given.length} characters; a token needs at least ${MIN_TOKEN_LENGTH} (unset it to have one made)`,
    );
  if (!/^[A-Za-z0-9._~-]+$/.test(given))
    throw new UsageError(
      `${TOKEN_ENV} may hold only letters, digits and . _ ~ - (it travels in a URL and a cookie as it is)`,
    );
  return given;
}

/**
 * Whether `given` is the token, in time independent of where they differ: both are hashed first, so
 * {@link timingSafeEqual} compares two digests of one length and the token's length does not leak either.
 */
export function isToken(given: string | undefined | null, token: string): boolean {
  if (given == null || given === '') return false;
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(token).digest();
  return timingSafeEqual(a, b);
}

/** The variable that names the page's origin behind a TLS reverse proxy, e.g. `https://fleet.example.com`. */
export const ORIGIN_ENV = 'LOOPFLEET_SERVE_ORIGIN';

/**
 * `LOOPFLEET_SERVE_ORIGIN`, when set: the one origin (scheme, host, port; no path) a reverse proxy serves the
 * page at. Its host joins the Host names the server answers to, and the origin those its actions may come
 * from. Anything but a bare http(s) origin is bad usage.
 */
export function publicOrigin(env: NodeJS.ProcessEnv): URL | null {
  const given = env[ORIGIN_ENV];
  if (given === undefined || given === '') return null;
  let url: URL;
  try {
    url = new URL(given);
  } catch {
    throw new UsageError(`${ORIGIN_ENV} is not a URL: '${given}' (e.g. https://fleet.example.com)`);
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.origin !== given.replace(/\/$/, ''))
    throw new UsageError(
      `${ORIGIN_ENV} must be an origin alone, scheme and host (and port), e.g. https://fleet.example.com: got '${given}'`,
    );
  return url;
}
