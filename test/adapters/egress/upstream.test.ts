import { describe, expect, it } from 'vitest';
import { bypasses, proxyAuthorization, upstreamFrom } from '../../../src/adapters/egress/upstream.js';

describe("the person's proxy behind the egress proxy", () => {
  it('reads HTTPS_PROXY, HTTP_PROXY and NO_PROXY as curl does: lower case first, ALL_PROXY as the fallback', () => {
    const u = upstreamFrom({
      https_proxy: 'http://low:1',
      HTTPS_PROXY: 'http://up:2',
      ALL_PROXY: 'proxy.corp:3128',
      NO_PROXY: 'internal.corp, .svc,10.0.0.1:8080',
    });
    expect(u.https?.host).toBe('low:1');
    expect(u.http?.href).toBe('http://proxy.corp:3128/');
    expect(u.noProxy).toEqual(['internal.corp', '.svc', '10.0.0.1:8080']);
  });

  it('NO_PROXY: a name covers its subdomains, a port narrows it, * covers all', () => {
    const list = ['internal.corp', '.svc', '10.0.0.1:8080'];
    expect(bypasses(list, 'internal.corp', 443)).toBe(true);
    expect(bypasses(list, 'npm.internal.corp', 443)).toBe(true);
    expect(bypasses(list, 'notinternal.corp', 443)).toBe(false);
    expect(bypasses(list, 'a.svc', 443)).toBe(true);
    expect(bypasses(list, '10.0.0.1', 8080)).toBe(true);
    expect(bypasses(list, '10.0.0.1', 443)).toBe(false);
    expect(bypasses(['*'], 'registry.npmjs.org', 443)).toBe(true);
  });

  it('a proxy URL with credentials becomes Basic Proxy-Authorization; a bad one is refused, naming the variable', () => {
    const u = upstreamFrom({ HTTPS_PROXY: 'http://me:p%40ss@proxy:8080' });
    expect(proxyAuthorization(u.https!)).toBe(`Basic ${Buffer.from('me:p@ss').toString('base64')}`);
    expect(() => upstreamFrom({ HTTPS_PROXY: 'socks5://proxy:1080' })).toThrow(
      /HTTPS_PROXY=socks5:\/\/proxy:1080 is not a proxy URL/,
    );
  });
});
