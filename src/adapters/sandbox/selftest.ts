/**
 * The sandbox attacked before a fleet uses it: a command run in it the way checks and agent shells are
 * tries to escape, against canaries, sockets and a TCP port planted on the host. Any success means the
 * sandbox is weaker than promised (an old or patched bubblewrap, a kernel without user namespaces, a
 * Seatbelt policy that lets something through, a runner misconfigured), and loopfleet refuses to start
 * rather than run agent-written code in it. The attacks are data per platform ({@link selfTestProbes});
 * the rule is the same everywhere.
 */
import { lstat, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { UsageError } from '../../domain/errors.js';
import type { ProcessRunner } from '../../ports/process.js';
import { exists } from '../fs/paths.js';
import { ESCAPED, attackScript, selfTestProbes, type ProbeTargets } from './selftest-probes.js';
import { isDir, passwdHome } from './system.js';

export { selfTestProbes, type SandboxPromise, type SelfTestProbe } from './selftest-probes.js';

const SELF_TEST_TIMEOUT_MS = 20_000;
/** At most this many of the system's sockets are attacked (macOS keeps a handful in /var/run). */
const SYSTEM_SOCKETS = 16;

export interface SelfTestOptions {
  /** whose probes run; default this process's platform */
  platform?: string;
  /** the homes canaries are planted in and attacked; default passwd's home and $HOME */
  homes?: string[];
  /** the folder whose sockets the macOS probes attack; default /var/run */
  socketFolder?: string;
}

/** A folder of the host outside every writable mount and outside the host /tmp, where one exists. */
async function hostFolder(): Promise<string> {
  const parent = (await isDir('/var/tmp')) ? '/var/tmp' : os.tmpdir();
  return mkdtemp(path.join(parent, 'loopfleet-selftest-'));
}

function listen(where: string | { host: string; port: number }, onConnect: () => void): Promise<net.Server> {
  return new Promise((resolve, reject) => {
    const server = net.createServer((socket) => {
      onConnect();
      socket.on('error', () => undefined);
      socket.destroy();
    });
    server.once('error', reject);
    if (typeof where === 'string') server.listen(where, () => resolve(server));
    else server.listen(where.port, where.host, () => resolve(server));
  });
}

/** Sockets directly in `folder` (links followed by the probes, not here), a bounded number. */
async function socketsIn(folder: string): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(folder);
  } catch (error) {
    if (['ENOENT', 'ENOTDIR', 'EACCES'].includes((error as NodeJS.ErrnoException).code ?? '')) return [];
    throw error;
  }
  const found: string[] = [];
  for (const name of names.sort()) {
    const p = path.join(folder, name);
    const info = await lstat(p).catch(() => null);
    if (info?.isSocket() === true) found.push(p);
    if (found.length === SYSTEM_SOCKETS) break;
  }
  return found;
}

async function runSelfTest(runner: ProcessRunner, options: SelfTestOptions): Promise<string[]> {
  const platform = options.platform ?? process.platform;
  const probes = selfTestProbes(platform);
  const failures: string[] = [];
  const hostDir = await hostFolder();
  const worktree = await mkdtemp(path.join(os.tmpdir(), 'loopfleet-selftest-wt-'));
  const hostTmp = await mkdtemp(path.join(os.tmpdir(), 'loopfleet-selftest-tmp-'));
  const token = randomBytes(12).toString('hex');
  const planted: string[] = [];
  const servers: net.Server[] = [];
  const accepted = { unix: 0, tcp: 0 };
  try {
    const canaries: ProbeTargets['canaries'] = [
      { file: path.join(hostDir, 'canary'), token, in: 'tmp' },
      { file: path.join(hostTmp, 'canary'), token, in: 'tmp' },
    ];
    for (const c of canaries) await writeFile(c.file, `${c.token}\n`);
    const homes = [...new Set(options.homes ?? [passwdHome() ?? os.homedir(), os.homedir()])];
    for (const home of homes) {
      const file = path.join(home, `.loopfleet-selftest-${process.pid}-${token.slice(0, 6)}`);
      try {
        await writeFile(file, `${token}\n`, { flag: 'wx', mode: 0o600 });
        planted.push(file);
        canaries.push({ file, token, in: 'home' });
      } catch (error) {
        // A home that cannot be written to here holds no canary; the folder itself is still probed.
        if (!['EACCES', 'EROFS', 'ENOENT', 'EPERM'].includes((error as NodeJS.ErrnoException).code ?? '')) throw error;
      }
    }
    const socket = path.join(hostDir, 's.sock');
    servers.push(await listen(socket, () => accepted.unix++));
    // Abstract sockets exist on Linux only; there they are behind the network namespace.
    const abstract = platform === 'linux' && process.platform === 'linux' ? `\0loopfleet-selftest-${token}` : null;
    if (abstract !== null) servers.push(await listen(abstract, () => accepted.unix++));
    const tcpServer = await listen({ host: '127.0.0.1', port: 0 }, () => accepted.tcp++);
    servers.push(tcpServer);
    const tcp = { host: '127.0.0.1', port: (tcpServer.address() as net.AddressInfo).port };
    const systemSockets = platform === 'darwin' ? await socketsIn(options.socketFolder ?? '/var/run') : [];

    const written = `.loopfleet-selftest-write-${token}`;
    const targets: ProbeTargets = { hostDir, hostTmp, written, canaries, homes, socket, abstract, tcp, systemSockets };
    const script = attackScript(probes, targets);
    const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin', LANG: 'C' };
    const result = await runner.run(script, {
      cwd: worktree,
      env,
      timeoutMs: SELF_TEST_TIMEOUT_MS,
      sandbox: { writable: [worktree] },
    });
    if (result.exitCode !== 0)
      failures.push(
        `the self-test did not run to its end (${result.timedOut ? 'timed out' : `exit ${result.exitCode}`}): ${result.output.trim().slice(-300)}`,
      );
    for (const line of result.output.split('\n')) {
      if (line.startsWith(ESCAPED)) failures.push(line.slice(ESCAPED.length).trim());
    }
    // What the host sees, whatever the command printed.
    if (accepted.unix > 0) failures.push('a host Unix socket accepted a connection from inside');
    if (accepted.tcp > 0)
      failures.push(
        `a host TCP port no network: entry allows (${tcp.host}:${tcp.port}) accepted a connection from inside`,
      );
    for (const landed of probes.flatMap((p) => p.lands?.(targets) ?? [])) {
      if (!(await exists(landed))) continue;
      failures.push(`a file written inside appeared in ${path.dirname(landed)}`);
      await rm(landed, { force: true });
    }
  } finally {
    for (const s of servers) s.close();
    for (const file of planted) await rm(file, { force: true });
    for (const dir of [hostDir, worktree, hostTmp]) await rm(dir, { recursive: true, force: true });
  }
  return [...new Set(failures)];
}

const results = new WeakMap<ProcessRunner, Promise<string[]>>();

/**
 * What escaped the sandbox of `runner` (empty: it holds). With no options it runs once per runner, i.e.
 * once per process; with options (another platform's probes, other homes) it runs each time.
 */
export function sandboxSelfTest(runner: ProcessRunner, options?: SelfTestOptions): Promise<string[]> {
  if (options !== undefined) return runSelfTest(runner, options);
  let result = results.get(runner);
  if (result === undefined) {
    result = runSelfTest(runner, {});
    results.set(runner, result);
  }
  return result;
}

const REMEDY: Record<string, string> = {
  linux: 'Install a current bubblewrap on a kernel with user namespaces',
  darwin: "Update loopfleet and macOS (sandbox-exec's Seatbelt enforces the policy)",
};

/** Throws (exit 2) naming every escape when the sandbox is weaker than promised. */
export async function assertSandboxHolds(runner: ProcessRunner, options?: SelfTestOptions): Promise<void> {
  refuseEscapes(await sandboxSelfTest(runner, options), options?.platform);
}

/** Throws (exit 2) naming every one of `failures`, the self-test's escapes; nothing when there is none. */
export function refuseEscapes(failures: readonly string[], platform: string = process.platform): void {
  if (failures.length === 0) return;
  const remedy = REMEDY[platform] ?? REMEDY.linux;
  throw new UsageError(
    `the sandbox is weaker than promised, so loopfleet does not start: ${failures.join('; ')}. ` +
      `${remedy}, or write \`sandbox: off\` in BACKLOG.md to run unsandboxed knowingly.`,
  );
}
