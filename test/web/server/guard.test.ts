import { describe, expect, it } from 'vitest';
import { exposureWarning } from '../../../src/commands/serve.js';
import { clean } from '../../../src/web/server/clean.js';
import { allowedHosts, isLoopback } from '../../../src/web/server/guard.js';
import { isToken, publicOrigin, serveToken } from '../../../src/web/server/token.js';

describe('the token', () => {
  it('is 32 random bytes as base64url unless LOOPFLEET_SERVE_TOKEN sets it', () => {
    const a = serveToken({});
    expect(a).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(serveToken({})).not.toBe(a);
    expect(serveToken({ LOOPFLEET_SERVE_TOKEN: 'exactly-16-chars' })).toBe('exactly-16-chars');
  });

  it('refuses a set token that is too short or would be mangled in a URL or a cookie', () => {
    expect(() => serveToken({ LOOPFLEET_SERVE_TOKEN: 'fifteen-chars-x' })).toThrow(/holds 15 characters/);
    expect(() => serveToken({ LOOPFLEET_SERVE_TOKEN: 'has;semicolon-and-more' })).toThrow(/may hold only/);
    expect(() => serveToken({ LOOPFLEET_SERVE_TOKEN: 'has space in it, long' })).toThrow(/may hold only/);
  });

  it('matches only itself', () => {
    expect(isToken('abcdefghijklmnopq', 'abcdefghijklmnopq')).toBe(true);
    for (const given of [undefined, null, '', 'abcdefghijklmnop', 'abcdefghijklmnopqr', 'Abcdefghijklmnopq'])
      expect(isToken(given, 'abcdefghijklmnopq'), String(given)).toBe(false);
  });
});

describe('the Host names', () => {
  it('are the loopback names and the bound address, with the port', () => {
    const hosts = allowedHosts('127.0.0.1', 7420);
    expect([...hosts].sort()).toEqual(['127.0.0.1:7420', '[::1]:7420', 'localhost:7420']);
    expect(allowedHosts('192.168.1.5', 80).has('192.168.1.5')).toBe(true);
    expect(allowedHosts('::1', 7420).has('[::1]:7420')).toBe(true);
    expect(allowedHosts('0.0.0.0', 7420).has('127.0.0.1:7420')).toBe(true);
    expect(allowedHosts('0.0.0.0', 7420).has('evil.example:7420')).toBe(false);
  });

  it('know loopback from the rest', () => {
    for (const h of ['127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]']) expect(isLoopback(h), h).toBe(true);
    for (const h of ['0.0.0.0', '::', '192.168.1.5', 'example.com']) expect(isLoopback(h), h).toBe(false);
  });
});

describe('a bind beyond loopback', () => {
  it('says what it risks, and nothing on loopback', () => {
    expect(exposureWarning('127.0.0.1', false)).toBeNull();
    const open = exposureWarning('0.0.0.0', false)!;
    expect(open).toContain('anyone who gets the token can merge, discard');
    expect(open).toContain('clear text');
    expect(open).toContain('TLS reverse proxy');
    expect(exposureWarning('192.168.1.5', true)).toContain('can read the fleet');
  });
});

describe('clean', () => {
  it('sanitises every string of a value, keys included, and leaves other values as they are', () => {
    expect(
      clean({
        a: 'x\u001b[31my',
        n: 1,
        b: [true, null, 'z\u0007'],
        'k\u202e': { deep: '\u009d0;t\u009c' },
        u: undefined,
      }),
    ).toEqual({ a: 'xy', n: 1, b: [true, null, 'z␇'], 'k⟨U+202E⟩': { deep: '␛]0;t␛\\' } });
  });
});

describe('LOOPFLEET_SERVE_ORIGIN', () => {
  it('takes a bare http(s) origin and refuses anything else', () => {
    expect(publicOrigin({})).toBeNull();
    expect(publicOrigin({ LOOPFLEET_SERVE_ORIGIN: 'https://fleet.example.com' })?.host).toBe('fleet.example.com');
    expect(publicOrigin({ LOOPFLEET_SERVE_ORIGIN: 'https://fleet.example.com:8443/' })?.origin).toBe(
      'https://fleet.example.com:8443',
    );
    for (const bad of ['fleet.example.com', 'ftp://x.example', 'https://x.example/path', 'https://u:p@x.example'])
      expect(() => publicOrigin({ LOOPFLEET_SERVE_ORIGIN: bad }), bad).toThrow(/LOOPFLEET_SERVE_ORIGIN/);
  });
});
