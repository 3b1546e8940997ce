/**
 * A git remote over https on 127.0.0.1, as a forge serves one: `git http-backend` behind a loopback HTTPS
 * server whose certificate a private CA signed (trusted through GIT_SSL_CAINFO). It answers only requests
 * whose `Authorization` header is the one it was given, and records every header it received, so a test
 * sees which credentials reached the forge's host and which did not.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { privateCaFiles } from './private-ca.js';
import { git } from './git-repo.js';

export interface HttpsGitServer {
  /** the CA file a client must trust (GIT_SSL_CAINFO) */
  caFile: string;
  /** `https://127.0.0.1:PORT/` */
  url: string;
  /** the folder holding the bare repositories it serves */
  root: string;
  /** every `Authorization` header received, in order (`null`: none) */
  authorizations: Array<string | null>;
  /** a bare repository `name` (`acme/widgets.git`) holding `main` from `from` */
  addRepo(name: string, from: string): Promise<string>;
  close(): Promise<void>;
}

/**
 * Serves bare repositories under its root; `accept` is the one `Authorization` header let through. `hold`,
 * when given, is awaited before each accepted request is answered: the client's processes are alive and
 * waiting meanwhile, for a test to look at them.
 */
export async function httpsGitServer(accept: string, hold?: () => Promise<void>): Promise<HttpsGitServer> {
  const dir = await mkdtemp(join(tmpdir(), 'lf-httpsgit-'));
  const root = join(dir, 'repos');
  const { caFile, key, cert } = await privateCaFiles(dir);
  const authorizations: Array<string | null> = [];
  const server = https.createServer({ key, cert }, (req, res) => {
    const auth = req.headers.authorization ?? null;
    authorizations.push(auth);
    if (auth !== accept) {
      res.writeHead(401, { 'www-authenticate': 'Basic realm="forge"' }).end('unauthorised\n');
      return;
    }
    void (hold ?? (() => Promise.resolve()))().then(() => serve(req, res));
  });
  const serve = (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse): void => {
    const url = new URL(req.url ?? '/', 'https://127.0.0.1');
    const backend = spawn('git', ['http-backend'], {
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        GIT_PROJECT_ROOT: root,
        GIT_HTTP_EXPORT_ALL: '1',
        REMOTE_USER: 'forge-user',
        REMOTE_ADDR: '127.0.0.1',
        REQUEST_METHOD: req.method ?? 'GET',
        PATH_INFO: decodeURIComponent(url.pathname),
        QUERY_STRING: url.search.replace(/^\?/, ''),
        CONTENT_TYPE: req.headers['content-type'] ?? '',
        ...(req.headers['content-encoding'] ? { HTTP_CONTENT_ENCODING: req.headers['content-encoding'] } : {}),
        ...(req.headers['git-protocol'] ? { GIT_PROTOCOL: String(req.headers['git-protocol']) } : {}),
      },
    });
    req.pipe(backend.stdin);
    // CGI: headers up to the first empty line, `Status:` among them, then the body.
    let head = Buffer.alloc(0);
    let inBody = false;
    backend.stdout.on('data', (chunk: Buffer) => {
      if (inBody) {
        res.write(chunk);
        return;
      }
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      inBody = true;
      let status = 200;
      const headers: Record<string, string> = {};
      for (const line of head.subarray(0, end).toString('latin1').split('\r\n')) {
        const colon = line.indexOf(':');
        const name = line.slice(0, colon).trim();
        const value = line.slice(colon + 1).trim();
        if (name.toLowerCase() === 'status') status = Number.parseInt(value, 10);
        else headers[name] = value;
      }
      res.writeHead(status, headers);
      res.write(head.subarray(end + 4));
    });
    backend.stdout.on('end', () => res.end());
    backend.on('error', () => res.destroy());
  };
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as AddressInfo).port;
  return {
    caFile,
    url: `https://127.0.0.1:${port}/`,
    root,
    authorizations,
    async addRepo(name, from) {
      const bare = join(root, name);
      await git(dir, 'init', '--quiet', '--bare', '--initial-branch=main', bare);
      await git(bare, 'config', 'http.receivepack', 'true');
      await git(from, 'push', '--quiet', bare, 'main:main');
      return bare;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(dir, { recursive: true, force: true });
    },
  };
}
