/**
 * `doctor`'s look at setup's network: for a setup that names a package manager, the registry it would use
 * (as the person's own configuration says: `npm config get registry` with their HOME, PIP_INDEX_URL, GOPROXY),
 * whether it is reachable — through the person's HTTPS_PROXY when they have one — and whether its TLS
 * certificate is trusted with the CA settings that package manager reads (NODE_EXTRA_CA_CERTS for npm,
 * REQUESTS_CA_BUNDLE/PIP_CERT for pip, CARGO_HTTP_CAINFO for cargo, SSL_CERT_FILE for all of them).
 */
import { readFile } from 'node:fs/promises';
import net from 'node:net';
import tls from 'node:tls';
import type { ProcessRunner } from '../../ports/process.js';
import { bypasses, tunnelThrough, upstreamFrom } from './upstream.js';

export type PackageManager = 'npm' | 'pip' | 'cargo' | 'go';

const PROBE_TIMEOUT_MS = 10_000;

interface Manager {
  pattern: RegExp;
  /** CA variables it reads, in the order it reads them; `replace`: a named bundle replaces the defaults */
  ca: string[];
  replace: boolean;
  /** what to set when TLS is not trusted */
  fix: string;
}

const MANAGERS: Record<PackageManager, Manager> = {
  npm: {
    pattern: /(^|[\s;&|(])(npm|npx|pnpm|yarn|bun)(\s|$)/,
    ca: ['NODE_EXTRA_CA_CERTS'],
    replace: false,
    fix: 'set NODE_EXTRA_CA_CERTS to the CA bundle (PEM) of your network',
  },
  pip: {
    pattern: /(^|[\s;&|(])(pip3?|poetry|uv|pipenv)(\s|$)/,
    ca: ['PIP_CERT', 'REQUESTS_CA_BUNDLE', 'SSL_CERT_FILE'],
    replace: true,
    fix: 'set REQUESTS_CA_BUNDLE (or PIP_CERT) to the CA bundle (PEM) of your network',
  },
  cargo: {
    pattern: /(^|[\s;&|(])cargo(\s|$)/,
    ca: ['CARGO_HTTP_CAINFO', 'SSL_CERT_FILE'],
    replace: true,
    fix: 'set CARGO_HTTP_CAINFO (or SSL_CERT_FILE) to the CA bundle (PEM) of your network',
  },
  go: {
    pattern: /(^|[\s;&|(])go\s+(mod|get|build|install|test)(\s|$)/,
    ca: ['SSL_CERT_FILE'],
    replace: true,
    fix: 'set SSL_CERT_FILE to the CA bundle (PEM) of your network',
  },
};

export function packageManagerOf(setup: string): PackageManager | null {
  for (const [name, m] of Object.entries(MANAGERS) as Array<[PackageManager, Manager]>)
    if (m.pattern.test(setup)) return name;
  return null;
}

/** The registry `manager` would use for the person, in `cwd` (the repository, for a project .npmrc). */
export async function registryOf(
  manager: PackageManager,
  env: Record<string, string>,
  cwd: string,
  runner: ProcessRunner,
): Promise<string> {
  switch (manager) {
    case 'npm': {
      const r = await runner.run('npm config get registry', { cwd, env, timeoutMs: PROBE_TIMEOUT_MS });
      const url = r.output.trim().split('\n').at(-1)?.trim() ?? '';
      return r.exitCode === 0 && /^https?:\/\//.test(url) ? url : 'https://registry.npmjs.org/';
    }
    case 'pip':
      return env.PIP_INDEX_URL ?? 'https://pypi.org/simple/';
    case 'cargo':
      return 'https://index.crates.io/';
    case 'go':
      return (env.GOPROXY ?? '').split(/[,|]/).find((p) => /^https?:\/\//.test(p)) ?? 'https://proxy.golang.org/';
  }
}

export type ProbeResult =
  | { kind: 'ok'; via: string | null }
  | { kind: 'unreachable'; detail: string }
  | { kind: 'untrusted'; detail: string; fix: string };

const TLS_TRUST = /CERT|SELF_SIGNED|UNABLE_TO_(GET|VERIFY)|ALTNAME|ISSUER|DEPTH_ZERO/;

async function caFor(manager: Manager, env: Record<string, string>): Promise<string[] | undefined> {
  const named = manager.ca.map((n) => env[n]).find((v) => v !== undefined && v !== '');
  if (named === undefined) return undefined;
  const pem = await readFile(named, 'utf8');
  return manager.replace ? [pem] : [...tls.rootCertificates, pem];
}

/** Connects to the registry as its package manager would and reports reachability and TLS trust. */
export async function probeRegistry(
  manager: PackageManager,
  registry: string,
  env: Record<string, string>,
): Promise<ProbeResult> {
  const m = MANAGERS[manager];
  const url = new URL(registry);
  const port = url.port !== '' ? Number(url.port) : url.protocol === 'http:' ? 80 : 443;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const upstream = upstreamFrom(env);
  const proxy = bypasses(upstream.noProxy, host, port)
    ? null
    : url.protocol === 'http:'
      ? upstream.http
      : upstream.https;
  let ca: string[] | undefined;
  try {
    ca = await caFor(m, env);
  } catch (error) {
    return {
      kind: 'untrusted',
      detail: `the CA bundle it names cannot be read (${(error as Error).message})`,
      fix: m.fix,
    };
  }
  const timeout = <T>(p: Promise<T>) =>
    Promise.race([
      p,
      new Promise<never>((_, reject) =>
        setTimeout(
          () => reject(Object.assign(new Error('timed out'), { code: 'ETIMEDOUT' })),
          PROBE_TIMEOUT_MS,
        ).unref(),
      ),
    ]);
  try {
    const raw =
      proxy !== null && url.protocol === 'https:' ? await timeout(tunnelThrough(proxy, `${host}:${port}`)) : null;
    if (url.protocol === 'http:') {
      const target = proxy === null ? { host, port } : { host: proxy.hostname, port: Number(proxy.port || 80) };
      await timeout(
        new Promise<void>((resolve, reject) =>
          net
            .connect(target.port, target.host, function (this: net.Socket) {
              this.destroy();
              resolve();
            })
            .once('error', reject),
        ),
      );
    } else {
      await timeout(
        new Promise<void>((resolve, reject) => {
          const s = tls.connect(
            {
              ...(raw === null ? { host, port } : { socket: raw }),
              servername: net.isIP(host) ? undefined : host,
              ...(ca === undefined ? {} : { ca }),
            },
            () => {
              s.destroy();
              resolve();
            },
          );
          s.once('error', reject);
        }),
      );
    }
    return { kind: 'ok', via: proxy === null ? null : proxy.host };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? '';
    if (TLS_TRUST.test(code)) return { kind: 'untrusted', detail: `${code}: ${(error as Error).message}`, fix: m.fix };
    return {
      kind: 'unreachable',
      detail: code === '' ? (error as Error).message : `${code}${proxy === null ? '' : ` through ${proxy.host}`}`,
    };
  }
}
