import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { isExecutable } from '../../fs/paths.js';
import os from 'node:os';
import path from 'node:path';
import { AgentSetupError } from '../../../domain/errors.js';
import type { AgentRequest } from '../../../ports/model.js';
import type { SandboxMount } from '../../../ports/process.js';
import { forwarderArgv } from '../../egress/forwarder.js';
import { parseHost, startEgressProxy, type AllowedHost, type EgressProxy } from '../../egress/proxy.js';
import { upstreamFrom } from '../../egress/upstream.js';
import type { AgentPreset } from './types.js';
import { prepareConfigView } from './config-view.js';
import { writeNew } from '../../fs/nofollow.js';

/**
 * Everything needed to start a preset's CLI: the command line, its environment (the task's, plus its own
 * credentials and nothing else), and — when sandboxed — the mounts (a private copy of its config folders, its
 * executable and Node read-only, the egress socket) and the egress proxy that lets it reach its model only.
 */

/** Where the egress proxy's socket appears inside the sandbox. */
export const SANDBOX_EGRESS_SOCKET = '/tmp/.loopfleet/egress.sock';
const PROXY_PORT = 3128;
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1']);

export interface Launch {
  command: string;
  input: string;
  env: Record<string, string>;
  mounts: SandboxMount[];
  /** the executable that runs (absolute, symlinks resolved) */
  bin: string;
  /** the hosts the agent may reach (sandboxed runs) */
  allowed: AllowedHost[];
  egress: EgressProxy | null;
  close(): Promise<void>;
}

export interface LaunchOptions {
  hostEnv: Record<string, string | undefined>;
  sandboxed: boolean;
  /** the Node that runs the forwarder inside the sandbox */
  node: string;
  /**
   * whose enforcer confines a sandboxed run; default process.platform. On darwin there is no forwarder:
   * sandbox-runtime points the proxy variables at a loopback port of the egress proxy itself ({@link srtCommand}),
   * which the runner finds by its socket among the mounts.
   */
  platform?: NodeJS.Platform;
}

function quote(arg: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

/** The preset's executable, absolute and real; an AgentSetupError naming the fix when there is none. */
export async function resolveBin(
  preset: AgentPreset,
  bin: string | undefined,
  hostEnv: Record<string, string | undefined>,
  role: string,
): Promise<string> {
  const name = bin ?? preset.defaultBin;
  const fix = `install ${preset.packageName} (npm install -g ${preset.packageName}) or set bin: in agents/${role}.md`;
  if (name.includes('/')) {
    const abs = path.resolve(name.replace(/^~(?=\/)/, hostEnv.HOME ?? '~'));
    if (!(await isExecutable(abs)))
      throw new AgentSetupError(`${preset.name}: bin: ${name} is not an executable file; ${fix}`, 'missing-binary');
    return realpath(abs);
  }
  for (const dir of (hostEnv.PATH ?? '').split(':')) {
    if (!path.isAbsolute(dir)) continue;
    const candidate = path.join(dir, name);
    if (await isExecutable(candidate)) return realpath(candidate);
  }
  throw new AgentSetupError(`${preset.name}: \`${name}\` is not on PATH; ${fix}`, 'missing-binary');
}

/** The folder to make visible for an executable: its whole package (node_modules root) or its own folder. */
function packageRootOf(bin: string): string {
  const parts = bin.split(path.sep);
  const i = parts.indexOf('node_modules');
  return i > 0 ? parts.slice(0, i + 1).join(path.sep) : path.dirname(bin);
}

/** The preset's own credentials from loopfleet's environment: its variables, nothing else. */
export function credentialsOf(
  preset: AgentPreset,
  hostEnv: Record<string, string | undefined>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(hostEnv))
    if (value !== undefined && preset.credentialEnv.test(name)) out[name] = value;
  return out;
}

/** The model endpoint the preset will call, from its base-URL variable or its default. */
export function endpointOf(preset: AgentPreset, env: Record<string, string | undefined>): AllowedHost {
  const url = preset.baseUrlEnv.map((n) => env[n]).find((v) => v !== undefined && v !== '') ?? preset.defaultEndpoint;
  return parseHost(url);
}

export async function prepareLaunch(
  preset: AgentPreset,
  request: AgentRequest,
  options: LaunchOptions,
): Promise<Launch> {
  const bin = await resolveBin(preset, request.agent?.bin, options.hostEnv, request.role);
  // The run's own folder for files its command line names (a schema file): outside the worktree, so a
  // read-only role's worktree stays untouched, and bound read-only into the sandbox.
  const scratch = await realpath(await mkdtemp(path.join(os.tmpdir(), 'loopfleet-agent-')));
  const removeScratch = () => rm(scratch, { recursive: true, force: true });
  try {
    return await launchIn(preset, request, options, bin, scratch, removeScratch);
  } catch (error) {
    await removeScratch();
    throw error;
  }
}

async function launchIn(
  preset: AgentPreset,
  request: AgentRequest,
  options: LaunchOptions,
  bin: string,
  scratch: string,
  removeScratch: () => Promise<void>,
): Promise<Launch> {
  const env: Record<string, string> = { ...request.env, ...credentialsOf(preset, options.hostEnv) };
  const platform = options.platform ?? process.platform;
  const invocation = preset.build(request, bin, env, options.sandboxed, scratch, platform);
  for (const [name, content] of Object.entries(invocation.files ?? {})) {
    if (name.includes('/') || name === '..' || name === '.')
      throw new Error(`${preset.name}: scratch file name ${name} must be a plain name`);
    await writeNew(path.join(scratch, name), content, 0o444);
  }
  Object.assign(env, invocation.env);
  const home = options.hostEnv.HOME;
  if (home !== undefined) env.HOME = home;
  const base = { input: invocation.stdin, env, bin };
  if (!options.sandboxed) {
    return {
      ...base,
      command: `exec ${invocation.argv.map(quote).join(' ')}`,
      mounts: [],
      allowed: [],
      egress: null,
      close: removeScratch,
    };
  }

  // The config folders are a private copy: a role's writes to them (memory, settings, hooks) die with the run.
  const view = home !== undefined && path.isAbsolute(home) ? await prepareConfigView(preset, home) : null;
  const mounts: SandboxMount[] = [...(view?.mounts ?? [])];
  const closeView = async () => {
    await view?.close();
  };
  const root = packageRootOf(bin);
  mounts.push({ src: root, dest: root, readOnly: true });
  mounts.push({ src: scratch, dest: scratch, readOnly: true });
  const node = await realpath(options.node);
  mounts.push({ src: node, dest: node, readOnly: true });

  const endpoint = endpointOf(preset, env);
  const allowed = [endpoint, ...(request.agent?.network ?? []).map(parseHost)];
  let egress: EgressProxy;
  try {
    egress = await startEgressProxy(allowed, { upstream: upstreamFrom(options.hostEnv) });
  } catch (error) {
    await closeView();
    throw error;
  }
  try {
    mounts.push({ src: egress.socketPath, dest: SANDBOX_EGRESS_SOCKET, readOnly: true });
    const closeAll = async () => {
      try {
        await egress.close();
        await closeView();
      } finally {
        await removeScratch();
      }
    };
    if (platform === 'darwin') {
      // A loopback model endpoint is reached through the proxy too: srt's NO_PROXY is unset inside.
      return {
        ...base,
        command: `exec ${invocation.argv.map(quote).join(' ')}`,
        mounts,
        allowed,
        egress,
        close: closeAll,
      };
    }
    const tunnels = LOOPBACK.has(endpoint.host)
      ? [{ port: endpoint.port, target: `${endpoint.host}:${endpoint.port}` }]
      : [];
    const proxyPort = tunnels.some((t) => t.port === PROXY_PORT) ? PROXY_PORT + 1 : PROXY_PORT;
    const proxy = `http://127.0.0.1:${proxyPort}`;
    Object.assign(env, { HTTPS_PROXY: proxy, HTTP_PROXY: proxy, https_proxy: proxy, http_proxy: proxy });
    // A loopback model endpoint is reached through its own tunnel port, not through the proxy.
    if (tunnels.length > 0)
      Object.assign(env, { NO_PROXY: '127.0.0.1,localhost,::1', no_proxy: '127.0.0.1,localhost,::1' });
    const argv = forwarderArgv(node, { socket: SANDBOX_EGRESS_SOCKET, tunnels, proxyPort, argv: invocation.argv });
    return {
      ...base,
      command: `exec ${argv.map(quote).join(' ')}`,
      mounts,
      allowed,
      egress,
      close: closeAll,
    };
  } catch (error) {
    await egress.close();
    await closeView();
    throw error;
  }
}
