import { createServer, type Server } from 'node:http';
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { parseHost, startEgressProxy, type EgressProxy } from '../../../src/adapters/egress/proxy.js';
import { rateLimitOf, resetTimeOf, retryAfterOf } from '../../../src/adapters/model/agent-presets/errors.js';

let proxy: EgressProxy | null = null;
let servers: Server[] = [];
afterEach(async () => {
  await proxy?.close();
  proxy = null;
  for (const s of servers) await new Promise<void>((r) => s.close(() => r()));
  servers = [];
});

async function origin(body: string): Promise<number> {
  const server = createServer((_req, res) => res.end(body));
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return (server.address() as net.AddressInfo).port;
}

/** Sends `request` over the proxy's Unix socket and returns the first bytes of the answer. */
function raw(socketPath: string, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = net.connect(socketPath, () => s.write(request));
    let got = '';
    s.on('data', (d) => {
      got += d.toString();
      if (got.includes('\r\n\r\n') && !got.startsWith('HTTP/1.1 200 Connection')) s.end();
      if (got.startsWith('HTTP/1.1 200 Connection') && got.includes('allowed-body')) s.end();
    });
    s.on('end', () => resolve(got));
    s.on('close', () => resolve(got));
    s.on('error', reject);
  });
}

describe('egress proxy', () => {
  it('tunnels to an allowed host:port and refuses every other, also on loopback', async () => {
    const allowedPort = await origin('allowed-body');
    const otherPort = await origin('other-body');
    proxy = await startEgressProxy([{ host: '127.0.0.1', port: allowedPort }]);
    const ok = await raw(
      proxy.socketPath,
      `CONNECT 127.0.0.1:${allowedPort} HTTP/1.1\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
    );
    expect(ok).toMatch(/^HTTP\/1.1 200 Connection Established/);
    expect(ok).toContain('allowed-body');
    const refused = await raw(proxy.socketPath, `CONNECT 127.0.0.1:${otherPort} HTTP/1.1\r\n\r\n`);
    expect(refused).toMatch(/^HTTP\/1.1 403/);
    expect(refused).not.toContain('other-body');
    // same port, another name: no DNS games
    expect(await raw(proxy.socketPath, `CONNECT localhost:${allowedPort} HTTP/1.1\r\n\r\n`)).toMatch(/^HTTP\/1.1 403/);
    // plain forwarding is checked per request
    const fwd = await raw(
      proxy.socketPath,
      `GET http://127.0.0.1:${otherPort}/ HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`,
    );
    expect(fwd).toMatch(/^HTTP\/1.1 403/);
    expect(proxy.refused).toEqual([`127.0.0.1:${otherPort}`, `localhost:${allowedPort}`, `127.0.0.1:${otherPort}`]);
  });

  it('reads hosts, host:port and URLs', () => {
    expect(parseHost('api.anthropic.com')).toEqual({ host: 'api.anthropic.com', port: 443 });
    expect(parseHost('registry.npmjs.org:8443')).toEqual({ host: 'registry.npmjs.org', port: 8443 });
    expect(parseHost('http://127.0.0.1:4001')).toEqual({ host: '127.0.0.1', port: 4001 });
    expect(parseHost('http://localhost')).toEqual({ host: 'localhost', port: 80 });
    expect(() => parseHost('a b')).toThrow(/not a host name/);
  });
});

describe('rate and usage limits', () => {
  const now = new Date(2026, 11, 1, 1, 30).getTime();
  it('takes the reset time from a CLI message, the next such time after now', () => {
    expect(new Date(resetTimeOf('Claude AI usage limit reached · resets 5am', now)!)).toEqual(
      new Date(2026, 11, 1, 5, 0),
    );
    expect(new Date(resetTimeOf('limit reached, resets 1am', now)!)).toEqual(new Date(2026, 11, 2, 1, 0));
    expect(new Date(resetTimeOf('resets at 17:45', now)!)).toEqual(new Date(2026, 11, 1, 17, 45));
    expect(new Date(resetTimeOf('resets Dec 3, 5pm', now)!)).toEqual(new Date(2026, 11, 3, 17, 0));
    expect(resetTimeOf('try again in 90 seconds', now)).toBe(now + 90_000);
    expect(resetTimeOf('resets soon', now)).toBeNull();
  });
  it('takes it from retry-after, retry-after-ms and reset headers', () => {
    expect(retryAfterOf({ 'retry-after': '30' }, now)).toBe(now + 30_000);
    expect(retryAfterOf({ 'retry-after-ms': '1500' }, now)).toBe(now + 1500);
    expect(retryAfterOf({ 'anthropic-ratelimit-unified-reset': '1796000000' }, now)).toBe(1796000000_000);
    expect(retryAfterOf({}, now)).toBeNull();
  });
  it('classifies 429, 529 and usage-limit text; other errors are not limits', () => {
    expect(rateLimitOf('API Error: 429 {"type":"rate_limit_error"}', now)).toMatchObject({
      kind: 'rate',
      resetAt: null,
    });
    expect(rateLimitOf('API Error: 529 Overloaded', now)).toMatchObject({ kind: 'overloaded' });
    expect(rateLimitOf('5-hour limit reached ∙ resets 5am', now)).toMatchObject({
      kind: 'usage',
      resetAt: new Date(2026, 11, 1, 5).getTime(),
    });
    expect(rateLimitOf('API Error: 500 internal', now)).toBeNull();
  });
});
