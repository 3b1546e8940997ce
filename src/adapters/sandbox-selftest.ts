/**
 * The sandbox attacked before a fleet uses it: a command run in it the way checks and agent shells are
 * tries to escape, against canaries planted on the host. Any success means the sandbox is weaker than
 * promised (an old or patched bubblewrap, a kernel without user namespaces, a runner misconfigured), and
 * loopfleet refuses to start rather than run agent-written code in it.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { UsageError } from '../domain/errors.js';
import type { ProcessRunner } from '../ports/process.js';
import { exists } from './fs-paths.js';
import { isDir, passwdHome } from './sandbox-system.js';

const SELF_TEST_TIMEOUT_MS = 20_000;
const ESCAPED = 'ESCAPED:';
/** Folders a write is attempted in (besides a planted host folder), and the file name it writes. */
const WRITE_TARGETS = ['/', '/usr', '/etc'];
const WRITTEN = '.loopfleet-selftest-write';

/** A folder of the host outside every writable mount and outside the host /tmp, where one exists. */
async function hostFolder(): Promise<string> {
  const parent = (await isDir('/var/tmp')) ? '/var/tmp' : os.tmpdir();
  return mkdtemp(path.join(parent, 'loopfleet-selftest-'));
}

function listen(where: string, onConnect: () => void): Promise<net.Server> {
  return new Promise((resolve, reject) => {
    const server = net.createServer((socket) => {
      onConnect();
      socket.on('error', () => undefined);
      socket.destroy();
    });
    server.once('error', reject);
    server.listen(where, () => resolve(server));
  });
}

const sh = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** The attacks, as a shell script printing `ESCAPED: <what>` for each that succeeds. */
function attackScript(p: { hostDir: string; socket: string; abstract: string; canaries: Array<{ file: string; token: string }> }): string {
  const lines = [
    `[ "$(id -u)" = 0 ] && echo ${sh(`${ESCAPED} the command runs as uid 0`)}`,
    `grep -Eq '^CapEff:[[:space:]]*0+$' /proc/self/status || echo "${ESCAPED} the command holds capabilities ($(grep CapEff /proc/self/status | tr -s '\\t ' ' '))"`,
    `mount -o remount,rw / 2>/dev/null && echo ${sh(`${ESCAPED} mount -o remount,rw / succeeded`)}`,
    `for d in ${WRITE_TARGETS.join(' ')} ${sh(p.hostDir)}; do ( : > "$d/${WRITTEN}" ) 2>/dev/null && echo "${ESCAPED} wrote to $d"; done`,
    `[ -e ${sh(p.socket)} ] && echo ${sh(`${ESCAPED} the host socket ${p.socket} is visible`)}`,
    ...p.canaries.map((c) => `grep -qs ${sh(c.token)} ${sh(c.file)} && echo ${sh(`${ESCAPED} read ${c.file}`)}`),
    // Connecting needs a client: node (the toolchain on PATH) or python3, whichever the sandbox shows.
    `if command -v node >/dev/null 2>&1; then node -e ${sh(
      `for (const p of ${JSON.stringify([p.socket, p.abstract])}) require('net').connect(p).on('connect', function () { this.destroy(); }).on('error', () => {});`,
    )}; elif command -v python3 >/dev/null 2>&1; then python3 -c ${sh(
      `import socket\nfor p in ${JSON.stringify([p.socket, p.abstract])}:\n  s = socket.socket(socket.AF_UNIX)\n  try: s.connect(p)\n  except OSError: pass\n  s.close()`,
    )}; fi`,
    'exit 0',
  ];
  return lines.join('\n');
}

async function runSelfTest(runner: ProcessRunner): Promise<string[]> {
  const failures: string[] = [];
  const hostDir = await hostFolder();
  const worktree = await mkdtemp(path.join(os.tmpdir(), 'loopfleet-selftest-wt-'));
  const hostTmp = await mkdtemp(path.join(os.tmpdir(), 'loopfleet-selftest-tmp-'));
  const token = randomBytes(12).toString('hex');
  const planted: string[] = [];
  const servers: net.Server[] = [];
  let connections = 0;
  try {
    const canaries = [{ file: path.join(hostDir, 'canary'), token }, { file: path.join(hostTmp, 'canary'), token }];
    for (const c of canaries) await writeFile(c.file, `${c.token}\n`);
    for (const home of new Set([passwdHome() ?? os.homedir(), os.homedir()])) {
      const file = path.join(home, `.loopfleet-selftest-${process.pid}-${token.slice(0, 6)}`);
      try {
        await writeFile(file, `${token}\n`, { flag: 'wx', mode: 0o600 });
        planted.push(file);
        canaries.push({ file, token });
      } catch (error) {
        // A home that cannot be written to here holds no canary; the folder itself is still probed below.
        if (!['EACCES', 'EROFS', 'ENOENT', 'EPERM'].includes((error as NodeJS.ErrnoException).code ?? '')) throw error;
      }
    }
    const socket = path.join(hostDir, 's.sock');
    const abstract = `\0loopfleet-selftest-${token}`;
    for (const where of [socket, abstract]) servers.push(await listen(where, () => connections++));

    const script = attackScript({ hostDir, socket, abstract, canaries });
    const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin', LANG: 'C' };
    const result = await runner.run(script, { cwd: worktree, env, timeoutMs: SELF_TEST_TIMEOUT_MS, sandbox: { writable: [worktree] } });
    if (result.exitCode !== 0) failures.push(`the self-test did not run to its end (${result.timedOut ? 'timed out' : `exit ${result.exitCode}`}): ${result.output.trim().slice(-300)}`);
    for (const line of result.output.split('\n')) {
      if (line.startsWith(ESCAPED)) failures.push(line.slice(ESCAPED.length).trim());
    }
    // What the host sees, whatever the command printed.
    if (connections > 0) failures.push('a host Unix socket accepted a connection from inside');
    for (const dir of WRITE_TARGETS.concat(hostDir)) {
      const landed = path.join(dir, WRITTEN);
      if (!(await exists(landed))) continue;
      failures.push(`a file written inside appeared in ${dir}`);
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

/** What escaped the sandbox of `runner` (empty: it holds). Runs once per runner, i.e. once per process. */
export function sandboxSelfTest(runner: ProcessRunner): Promise<string[]> {
  let result = results.get(runner);
  if (result === undefined) {
    result = runSelfTest(runner);
    results.set(runner, result);
  }
  return result;
}

/** Throws (exit 2) naming every escape when the sandbox is weaker than promised. */
export async function assertSandboxHolds(runner: ProcessRunner): Promise<void> {
  const failures = await sandboxSelfTest(runner);
  if (failures.length === 0) return;
  throw new UsageError(
    `the sandbox is weaker than promised, so loopfleet does not start: ${failures.join('; ')}. ` +
      'Install a current bubblewrap on a kernel with user namespaces, or write `sandbox: off` in BACKLOG.md to run unsandboxed knowingly.',
  );
}
