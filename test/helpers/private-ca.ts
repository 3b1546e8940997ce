import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';

/** A private CA (as a company's TLS-inspecting proxy has) and a loopback HTTPS server whose certificate it signed. */
export interface PrivateCaServer {
  /** the CA certificate (PEM file): what NODE_EXTRA_CA_CERTS would name */
  caFile: string;
  url: string;
  port: number;
  /** request paths, in order */
  requests: string[];
  close(): Promise<void>;
}

function openssl(dir: string, ...args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
}

/** A private CA and a certificate it signed for 127.0.0.1 and localhost, in `dir`: ca.pem, server.key, server.pem. */
export async function privateCaFiles(dir: string): Promise<{ caFile: string; key: Buffer; cert: Buffer }> {
  openssl(
    dir,
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'ca.key',
    '-out',
    'ca.pem',
    '-days',
    '2',
    '-subj',
    '/CN=loopfleet test CA',
  );
  openssl(
    dir,
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'server.key',
    '-out',
    'server.csr',
    '-subj',
    '/CN=127.0.0.1',
  );
  await writeFile(path.join(dir, 'ext.cnf'), 'subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:registry.example.test\n');
  openssl(
    dir,
    'x509',
    '-req',
    '-in',
    'server.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'server.pem',
    '-days',
    '2',
    '-extfile',
    'ext.cnf',
  );
  return {
    caFile: path.join(dir, 'ca.pem'),
    key: await readFile(path.join(dir, 'server.key')),
    cert: await readFile(path.join(dir, 'server.pem')),
  };
}

/** Answers `/-/ping` (npm ping) and everything else with a small JSON body. */
export async function privateCaServer(): Promise<PrivateCaServer> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'lf-ca-'));
  const { key, cert } = await privateCaFiles(dir);
  const requests: string[] = [];
  const server = https.createServer({ key, cert }, (req, res) => {
    requests.push(req.url ?? '');
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as AddressInfo).port;
  return {
    caFile: path.join(dir, 'ca.pem'),
    url: `https://127.0.0.1:${port}/`,
    port,
    requests,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(dir, { recursive: true, force: true });
    },
  };
}
