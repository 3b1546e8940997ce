/**
 * The person's own proxy, behind loopfleet's egress proxy: HTTPS_PROXY for tunnels (CONNECT), HTTP_PROXY for
 * plain requests, NO_PROXY for the hosts reached directly — as curl, npm and pip read them (lower case wins
 * over upper case, `*` in NO_PROXY means every host). A proxy URL may carry `user:password@`, sent as Basic
 * Proxy-Authorization. Only the egress proxy on the host reads these; the sandbox never sees them.
 */
import net from 'node:net';
import tls from 'node:tls';

export interface UpstreamProxies {
  https: URL | null;
  http: URL | null;
  noProxy: string[];
}

function pick(env: Record<string, string | undefined>, name: string): string | undefined {
  const v = env[name.toLowerCase()] ?? env[name.toUpperCase()];
  return v === undefined || v.trim() === '' ? undefined : v.trim();
}

function proxyUrl(value: string | undefined, name: string): URL | null {
  if (value === undefined) return null;
  try {
    const url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? value : `http://${value}`);
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new Error(`${url.protocol} proxies are not supported`);
    return url;
  } catch (error) {
    throw new Error(`${name}=${value} is not a proxy URL (${error instanceof Error ? error.message : String(error)})`);
  }
}

export function upstreamFrom(env: Record<string, string | undefined>): UpstreamProxies {
  const all = pick(env, 'all_proxy');
  return {
    https: proxyUrl(pick(env, 'https_proxy') ?? all, 'HTTPS_PROXY'),
    http: proxyUrl(pick(env, 'http_proxy') ?? all, 'HTTP_PROXY'),
    noProxy: (pick(env, 'no_proxy') ?? '')
      .split(/[,\s]+/)
      .map((e) => e.trim().toLowerCase())
      .filter(Boolean),
  };
}

/** Whether NO_PROXY sends `host:port` past the person's proxy. */
export function bypasses(noProxy: readonly string[], host: string, port: number): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '');
  return noProxy.some((entry) => {
    if (entry === '*') return true;
    const m = /^(.*?)(?::(\d+))?$/.exec(entry.replace(/^\[|\]$/g, ''))!;
    const name = m[1]!.replace(/^\*?\./, '');
    if (m[2] !== undefined && Number(m[2]) !== port) return false;
    return h === name || h.endsWith(`.${name}`);
  });
}

export function proxyAuthorization(proxy: URL): string | null {
  if (proxy.username === '') return null;
  const creds = `${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`;
  return `Basic ${Buffer.from(creds).toString('base64')}`;
}

function portOf(proxy: URL): number {
  return proxy.port !== '' ? Number(proxy.port) : proxy.protocol === 'https:' ? 443 : 80;
}

/** A socket to the proxy itself (TLS for an https:// proxy). */
export function connectToProxy(proxy: URL, onConnect: () => void): net.Socket {
  const host = proxy.hostname.replace(/^\[|\]$/g, '');
  return proxy.protocol === 'https:'
    ? tls.connect({ host, port: portOf(proxy), servername: net.isIP(host) ? undefined : host }, onConnect)
    : net.connect(portOf(proxy), host, onConnect);
}

export function proxyEndpoint(proxy: URL): { host: string; port: number } {
  return { host: proxy.hostname.replace(/^\[|\]$/g, ''), port: portOf(proxy) };
}

/**
 * A tunnel to `target` (`host:port`) through the person's proxy: resolves with the socket once the proxy said
 * 200, after which the bytes are the target's; rejects with the proxy's status line otherwise.
 */
export function tunnelThrough(proxy: URL, target: string): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = connectToProxy(proxy, () => {
      const auth = proxyAuthorization(proxy);
      socket.write(
        `CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n${auth === null ? '' : `Proxy-Authorization: ${auth}\r\n`}\r\n`,
      );
    });
    let buf = Buffer.alloc(0);
    const onData = (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      socket.off('data', onData);
      socket.off('error', reject);
      const status = buf.subarray(0, end).toString('latin1').split('\r\n')[0] ?? '';
      if (!/^HTTP\/1\.[01] 200/.test(status)) {
        socket.destroy();
        reject(new Error(`the proxy ${proxy.host} answered ${status || 'nothing'} for ${target}`));
        return;
      }
      const rest = buf.subarray(end + 4);
      if (rest.length > 0) socket.unshift(rest);
      resolve(socket);
    };
    socket.on('data', onData);
    socket.once('error', reject);
  });
}
