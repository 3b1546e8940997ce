/**
 * The network of setup in the sandbox, at the runner (real bubblewrap, real egress proxy, real TLS): the
 * `network:` hosts are reached through the egress proxy and nothing else is; the person's CA bundle is
 * bound in and trusted; the person's own proxy carries what goes out.
 */
import { createServer, type Server } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import net, { type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ExecaRunner } from '../../../src/adapters/sandbox/execa-runner.js';
import { privateCaServer, type PrivateCaServer } from '../../helpers/private-ca.js';

const available = await new ExecaRunner().sandboxAvailable();

let cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.reverse()) await c();
  cleanups = [];
});

async function listen(server: Server | net.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return (server.address() as AddressInfo).port;
}

async function ca(): Promise<PrivateCaServer> {
  const s = await privateCaServer();
  cleanups.push(() => s.close());
  return s;
}

/** Node's fetch of each URL, one line each: the status, or the error's cause code. */
function fetchAll(urls: string[]): string {
  const script = `(async () => { for (const u of ${JSON.stringify(urls)}) { try { const r = await fetch(u); console.log(u, r.status); } catch (e) { console.log(u, 'error', e.cause?.code ?? e.message); } } })()`;
  return `${process.execPath} -e '${script.replace(/'/g, `'\\''`)}'`;
}

async function workdir(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'lf-setupnet-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

describe.runIf(available)('setup in the sandbox: the network', () => {
  it('reaches an allow-listed loopback host through the egress proxy, trusting the CA file the person names, and no other host', async () => {
    const allowed = await ca();
    const other: string[] = [];
    const otherPort = await listen(createServer((req, res) => (other.push(req.url ?? ''), res.end('stolen\n'))));
    const dir = await workdir();
    const run = await new ExecaRunner({ hostEnv: {} }).run(
      fetchAll([`${allowed.url}pkg`, `http://127.0.0.1:${otherPort}/leak`]),
      {
        cwd: dir,
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', NODE_EXTRA_CA_CERTS: allowed.caFile },
        timeoutMs: 20_000,
        sandbox: { writable: [dir], network: [`127.0.0.1:${allowed.port}`] },
      },
    );
    expect(run.output).toContain(`${allowed.url}pkg 200`);
    // Refused by the egress proxy: 403 to a plain request, a failed tunnel to Node's (it tunnels http too).
    expect(run.output).toMatch(new RegExp(`http://127.0.0.1:${otherPort}/leak (403|error)`));
    expect(allowed.requests).toEqual(['/pkg']);
    expect(other).toEqual([]);
  });

  it("goes out through the person's own HTTPS_PROXY, the only one that can resolve the registry's name", async () => {
    const target = await ca();
    const tunnels: string[] = [];
    // A company proxy: it alone reaches the outside; here every name it is asked for is this loopback server.
    const proxy = createServer();
    proxy.on('connect', (req, client: net.Socket, head: Buffer) => {
      tunnels.push(req.url ?? '');
      const up = net.connect(target.port, '127.0.0.1', () => {
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        up.write(head);
        up.pipe(client);
        client.pipe(up);
      });
      up.on('error', () => client.destroy());
      client.on('error', () => up.destroy());
    });
    const proxyPort = await listen(proxy);
    const dir = await workdir();
    const registry = `registry.example.test:${target.port}`;
    const run = await new ExecaRunner({ hostEnv: { HTTPS_PROXY: `http://127.0.0.1:${proxyPort}` } }).run(
      fetchAll([`https://${registry}/via-proxy`]),
      {
        cwd: dir,
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', NODE_EXTRA_CA_CERTS: target.caFile },
        timeoutMs: 20_000,
        sandbox: { writable: [dir], network: [registry] },
      },
    );
    expect(run.output).toContain(`https://${registry}/via-proxy 200`);
    expect(tunnels).toEqual([registry]);
    expect(target.requests).toEqual(['/via-proxy']);
  });
});
