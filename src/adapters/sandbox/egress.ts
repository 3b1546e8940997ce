/**
 * The network of a sandboxed command that may reach a few hosts (setup in the sandbox, given the `network:`
 * hosts): the host's egress proxy with that allow-list (going out through the person's own proxy, see
 * {@link upstreamFrom}), its Unix socket bound in, and the forwarder inside listening on 127.0.0.1:3128, which
 * HTTPS_PROXY/HTTP_PROXY point at (NODE_USE_ENV_PROXY makes Node's own fetch and https use it). The
 * command then runs under the forwarder. Anything not on the list is answered 403.
 */
import { realpath } from 'node:fs/promises';
import type { SandboxMount } from '../../ports/process.js';
import { forwarderArgv } from '../egress/forwarder.js';
import { parseHost, startEgressProxy, type EgressProxy } from '../egress/proxy.js';
import { upstreamFrom } from '../egress/upstream.js';

const SOCKET = '/tmp/.loopfleet/egress.sock';
const PROXY_PORT = 3128;

export interface SandboxEgress {
  /** the command line to run instead of the command: the forwarder, which runs `/bin/sh -c command` */
  command: string;
  env: Record<string, string>;
  mounts: SandboxMount[];
  proxy: EgressProxy;
}

function quote(arg: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

/** `hostEnv`: the person's environment, for their upstream proxy; `node`: the Node that runs the forwarder inside. */
export async function sandboxEgress(
  hosts: readonly string[],
  command: string,
  hostEnv: Record<string, string | undefined>,
  node: string,
): Promise<SandboxEgress> {
  const allowed = hosts.map(parseHost);
  const proxy = await startEgressProxy(allowed, { upstream: upstreamFrom(hostEnv) });
  try {
    const nodeReal = await realpath(node);
    const url = `http://127.0.0.1:${PROXY_PORT}`;
    const argv = forwarderArgv(nodeReal, {
      socket: SOCKET,
      tunnels: [],
      proxyPort: PROXY_PORT,
      argv: ['/bin/sh', '-c', command],
    });
    return {
      command: `exec ${argv.map(quote).join(' ')}`,
      // No NO_PROXY: every connection, a loopback one included, goes through the allow-list.
      env: { HTTPS_PROXY: url, HTTP_PROXY: url, https_proxy: url, http_proxy: url, NODE_USE_ENV_PROXY: '1' },
      mounts: [
        { src: proxy.socketPath, dest: SOCKET, readOnly: true },
        { src: nodeReal, dest: nodeReal, readOnly: true },
      ],
      proxy,
    };
  } catch (error) {
    await proxy.close();
    throw error;
  }
}
