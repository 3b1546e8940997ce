/**
 * One sandboxed command under `@anthropic-ai/sandbox-runtime`: its own `srt` process with its own settings
 * file (rendered from the command's policy by {@link srtSettings}), so that srt's one-per-process
 * manager never serves two commands. On macOS srt confines the command with Seatbelt (`sandbox-exec`); on
 * Linux with bubblewrap and a seccomp filter — loopfleet uses that path only to test this wiring
 * ({@link sandboxArgs}, bubblewrap, stays its Linux enforcer: srt keeps uid 0 and its capabilities under root).
 *
 * Invariants:
 * - the command's folder (settings, private tmp) is loopfleet's, mode 0700, removed by `close`; the
 *   settings file itself is not readable inside (only `tmp/` is shown);
 * - the network is loopfleet's egress proxy and nothing else: srt gets a loopback port (`127.0.0.1`, and
 *   `::1` where there is one: srt dials `localhost`) whose every connection is carried to the proxy's
 *   Unix socket, byte for byte — the proxy decides;
 * - the environment is the policy's (the allow-list), srt's proxy variables, and the few it cannot set
 *   right (srtEnvironment), set in the command's own shell before the command runs.
 */
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import type { RunOptions } from '../../ports/process.js';
import { parseHost, startEgressProxy, type EgressProxy } from '../egress/proxy.js';
import { upstreamFrom } from '../egress/upstream.js';
import { sandboxPolicy, type MachineFacts, type SandboxPolicy } from './policy.js';
import { srtEnvironment, srtSettings, type SrtSettings } from './srt-settings.js';

/** Seatbelt's command-line front end, present on every macOS. */
const SANDBOX_EXEC = '/usr/bin/sandbox-exec';

/** The installed srt package's root and its CLI. */
export function srtPackage(): { root: string; cli: string } {
  const require = createRequire(import.meta.url);
  const root = path.dirname(require.resolve('@anthropic-ai/sandbox-runtime/package.json'));
  return { root, cli: path.join(root, 'dist', 'cli.js') };
}

/** Whether sandbox-runtime is installed and Seatbelt applies a profile here. */
export async function seatbeltWorks(): Promise<boolean> {
  try {
    srtPackage();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND') return false;
    throw error;
  }
  const probe = await execa(SANDBOX_EXEC, ['-p', '(version 1)(allow default)', '/usr/bin/true'], {
    reject: false,
    timeout: 10_000,
    stdin: 'ignore',
    extendEnv: false,
    env: { PATH: '/usr/bin:/bin' },
  });
  return probe.exitCode === 0;
}

function quote(arg: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

/** `export`/`unset` lines for srtEnvironment, in a fixed order. */
export function preamble(env: Record<string, string | null>): string {
  const unset = Object.keys(env)
    .filter((k) => env[k] === null)
    .sort();
  const set = Object.entries(env)
    .filter((e): e is [string, string] => e[1] !== null)
    .sort(([a], [b]) => a.localeCompare(b));
  const lines: string[] = [];
  if (unset.length > 0) lines.push(`unset ${unset.join(' ')}`);
  if (set.length > 0) lines.push(`export ${set.map(([k, v]) => `${k}=${quote(v)}`).join(' ')}`);
  return lines.join('\n');
}

function listen(server: net.Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve((server.address() as net.AddressInfo).port);
    });
  });
}

function close(server: net.Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

/** A loopback port whose connections are carried to the Unix socket `socket`. */
export async function loopbackBridge(socket: string): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const carry = (client: net.Socket) => {
    const up = net.connect(socket);
    sockets.add(client).add(up);
    up.pipe(client);
    client.pipe(up);
    const end = () => {
      client.destroy();
      up.destroy();
      sockets.delete(client);
      sockets.delete(up);
    };
    up.on('error', end).on('close', end);
    client.on('error', end).on('close', end);
  };
  const v4 = net.createServer(carry);
  const port = await listen(v4, 0, '127.0.0.1');
  const servers = [v4];
  const v6 = net.createServer(carry);
  try {
    await listen(v6, port, '::1');
    servers.push(v6);
  } catch (error) {
    // No IPv6 loopback here (or the port is taken there): srt's `localhost` then resolves to 127.0.0.1 only.
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EADDRNOTAVAIL' && code !== 'EADDRINUSE' && code !== 'EAFNOSUPPORT') {
      await close(v4);
      throw error;
    }
  }
  return {
    port,
    close: async () => {
      for (const s of sockets) s.destroy();
      await Promise.all(servers.map(close));
    },
  };
}

export interface SrtCommand {
  /** the program and its arguments: Node running srt's CLI */
  file: string;
  args: string[];
  /** srt's own environment, which the command inherits */
  env: Record<string, string>;
  settings: SrtSettings;
  close(): Promise<void>;
}

export interface SrtOptions {
  /** the Node that runs srt */
  node: string;
  /** the egress proxy's socket; the policy's, or one the runner started for this command */
  proxySocket: string;
}

/** srt for `script` (run by /bin/sh) under `policy`. */
export async function srtCommand(policy: SandboxPolicy, script: string, options: SrtOptions): Promise<SrtCommand> {
  const own = await realpath(await mkdtemp(path.join(os.tmpdir(), 'loopfleet-srt-')));
  const remove = () => rm(own, { recursive: true, force: true });
  let bridge: Awaited<ReturnType<typeof loopbackBridge>> | null = null;
  try {
    const privateTmp = path.join(own, 'tmp');
    await mkdir(path.join(privateTmp, 'home'), { recursive: true, mode: 0o700 });
    // srt's own temp folder: on Linux its bridge sockets, which the command must reach, are made there.
    const srtTmp = path.join(own, 'srt');
    await mkdir(srtTmp, { mode: 0o700 });
    bridge = await loopbackBridge(options.proxySocket);
    const srt = srtPackage();
    const extras = { proxyPort: bridge.port, privateTmp, enforcerPaths: [path.join(srt.root, 'vendor'), srtTmp] };
    const settings = srtSettings(policy, extras);
    const file = path.join(own, 'settings.json');
    await writeFile(file, JSON.stringify(settings, null, 2), { mode: 0o400, flag: 'wx' });
    const inner = `${preamble(srtEnvironment(policy, extras))}\ncd ${quote(policy.cwd)} || exit 125\nexec /bin/sh -c ${quote(script)}`;
    const opened = bridge;
    return {
      file: options.node,
      args: [srt.cli, '--settings', file, '-c', inner],
      env: { ...policy.env, TMPDIR: srtTmp },
      settings,
      close: async () => {
        try {
          await opened.close();
        } finally {
          await remove();
        }
      },
    };
  } catch (error) {
    await bridge?.close();
    await remove();
    throw error;
  }
}

/** A sandboxed command ready to start: what to execute, and what to release once it has ended. */
export interface Confined {
  file: string;
  args: string[];
  env: Record<string, string>;
  close(): Promise<void>;
}

export interface ConfineOptions {
  facts: MachineFacts;
  /** the Node that runs srt */
  node: string;
  /** the person's environment, whose proxy settings the egress proxy uses upstream */
  hostEnv: Record<string, string | undefined>;
}

/**
 * `script` under sandbox-runtime, as the runner asks for it (`options.sandbox`): its policy, its own srt
 * process and settings file, and an egress proxy — the CLI agent's (its socket is among the mounts), or one
 * started here for the `network` hosts, or with none allowed.
 */
export async function confineWithSrt(script: string, options: RunOptions, how: ConfineOptions): Promise<Confined> {
  const sandbox = options.sandbox!;
  const hosts = sandbox.network;
  const policy = await sandboxPolicy(
    {
      cwd: options.cwd,
      writable: sandbox.writable,
      env: options.env,
      mounts: sandbox.mounts ?? [],
      ...(sandbox.home === undefined ? {} : { home: sandbox.home }),
      ...(hosts === undefined ? {} : { allowedHosts: hosts }),
    },
    how.facts,
  );
  let proxy: EgressProxy | null = null;
  if (hosts !== undefined || policy.network.proxySocket === null) {
    proxy = await startEgressProxy((hosts ?? []).map(parseHost), { upstream: upstreamFrom(how.hostEnv) });
  }
  try {
    const srt = await srtCommand(policy, script, {
      node: how.node,
      proxySocket: proxy?.socketPath ?? policy.network.proxySocket!,
    });
    return {
      file: srt.file,
      args: srt.args,
      // As on Linux for setup with `network:`: Node's own fetch and https use the proxy variables.
      env: hosts === undefined ? srt.env : { ...srt.env, NODE_USE_ENV_PROXY: '1' },
      close: async () => {
        try {
          await srt.close();
        } finally {
          await proxy?.close();
        }
      },
    };
  } catch (error) {
    await proxy?.close();
    throw error;
  }
}
