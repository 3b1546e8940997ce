/**
 * ProcessRunner on execa: `/bin/sh -c command`, optionally inside bubblewrap.
 *
 * Invariants:
 * - the child's environment is exactly `options.env`; nothing is inherited;
 * - the command runs in its own process group; when it ends, times out or is aborted the whole group is
 *   killed, so no background process it started outlives it (inside the sandbox its pid namespace ends
 *   with it as well);
 * - memory stays bounded: only the last `maxOutputBytes` of the combined output are kept;
 * - a nonzero exit, a timeout or an abort is a result; only a failure to start the command throws;
 * - a sandboxed command has a process limit where a pids cgroup can be made: reaching it kills the command,
 *   which then fails (no exit code) with a line saying so;
 * - the enforcer follows the platform: bubblewrap on Linux ({@link sandboxArgs}), Seatbelt through
 *   sandbox-runtime on macOS ({@link confineWithSrt}), both rendered from the command's one policy
 *   ({@link sandboxPolicy}); on macOS every sandboxed command has an egress proxy of its own (with no host
 *   allowed unless the command was given some), since the proxy port is its only network.
 */
import { access, constants } from 'node:fs/promises';
import path from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { execa } from 'execa';
import type { ProcessRunner, RunOptions, RunResult } from '../../ports/process.js';
import { isolationArgs, probeArgs, sandboxArgs } from './bwrap-args.js';
import { bwrapFacts } from './selftest-cache.js';
import { formatBytes } from '../../core/text/format-units.js';
import { PidsCgroup, SANDBOX_MAX_PROCESSES } from './pids.js';
import { sandboxEgress, type SandboxEgress } from './egress.js';
import { machineFacts, type MachineFacts } from './policy.js';
import { confineWithSrt, seatbeltWorks, type Confined } from './srt.js';

export const DEFAULT_MAX_OUTPUT_BYTES = 64 * 1024;
/** Between SIGTERM to the process group and SIGKILL. */
const KILL_GRACE_MS = 2000;
/** How long output is still read after the command has exited. */
const OUTPUT_DRAIN_MS = 250;
/** How often a sandboxed command's cgroup is checked for a refused fork. */
const LIMIT_POLL_MS = 100;

/**
 * The last `max` bytes of a stream, holding at most `max` bytes plus one chunk at any time. With `head`,
 * the first `head` of those bytes are the stream's first bytes instead, and the text says how much was cut
 * between head and tail (`… 512 MB cut …`).
 */
export class OutputTail {
  readonly #max: number;
  readonly #headMax: number;
  #head: Buffer[] = [];
  #headSize = 0;
  #chunks: Buffer[] = [];
  #size = 0;
  #total = 0;
  #truncated = false;

  constructor(max: number, head = 0) {
    this.#headMax = Math.max(0, Math.min(Math.floor(head), Math.floor(max / 2)));
    this.#max = Math.max(0, Math.floor(max) - this.#headMax);
  }

  push(chunk: Buffer): void {
    this.#total += chunk.length;
    if (this.#headSize < this.#headMax) {
      const take = chunk.subarray(0, this.#headMax - this.#headSize);
      this.#head.push(take);
      this.#headSize += take.length;
      chunk = chunk.subarray(take.length);
      if (chunk.length === 0) return;
    }
    this.#chunks.push(chunk);
    this.#size += chunk.length;
    while (this.#chunks.length > 0 && this.#size - (this.#chunks[0]?.length ?? 0) >= this.#max) {
      this.#size -= this.#chunks.shift()?.length ?? 0;
      this.#truncated = true;
    }
  }

  get truncated(): boolean {
    return this.#truncated || this.#size > this.#max;
  }

  /** The tail as text; a character cut in half at the start is dropped rather than garbled. */
  text(): string {
    let bytes = Buffer.concat(this.#chunks);
    if (bytes.length > this.#max) bytes = bytes.subarray(bytes.length - this.#max);
    if (this.truncated) {
      let start = 0;
      while (start < bytes.length && start < 4 && ((bytes[start] ?? 0) & 0xc0) === 0x80) start++;
      bytes = bytes.subarray(start);
    }
    if (this.#headMax === 0) return bytes.toString('utf8');
    const head = new StringDecoder('utf8').write(Buffer.concat(this.#head));
    if (!this.truncated) return head + bytes.toString('utf8');
    const cut = this.#total - Buffer.byteLength(head) - bytes.length;
    return `${head}\n… ${formatBytes(cut)} cut …\n${bytes.toString('utf8')}`;
  }
}

async function findExecutable(name: string): Promise<string | null> {
  for (const dir of (process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin').split(':')) {
    if (!path.isAbsolute(dir)) continue;
    const candidate = path.join(dir, name);
    try {
      await access(candidate, constants.X_OK);
      return candidate;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT' && (error as NodeJS.ErrnoException).code !== 'EACCES')
        throw error;
    }
  }
  return null;
}

/** Kill what is left of a process group. A group that is already gone is the expected case: null. */
function killGroup(pid: number | undefined, signal: NodeJS.Signals): Error | null {
  if (pid === undefined) return null;
  try {
    process.kill(-pid, signal);
    return null;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH' ? null : (error as Error);
  }
}

export interface ExecaRunnerOptions {
  /**
   * Rewrites the bubblewrap arguments of every sandboxed command. For tests only: a test weakens the
   * sandbox with it and sees the self-test refuse to start.
   */
  alterSandboxArgs?: (args: string[]) => string[];
  /** processes one sandboxed command may have at once; default SANDBOX_MAX_PROCESSES */
  maxProcesses?: number;
  /** the person's environment, whose proxy settings the egress proxy uses upstream; default process.env */
  hostEnv?: Record<string, string | undefined>;
  /** the Node that runs the egress forwarder inside the sandbox (and srt on macOS); default this process's */
  node?: string;
  /** which enforcer sandboxes: darwin → Seatbelt through sandbox-runtime, else bubblewrap; default process.platform */
  platform?: NodeJS.Platform;
  /**
   * For tests only, with `platform: 'darwin'` on Linux (where srt runs under bubblewrap): the machine facts
   * of the policy (default those of `platform`) and whether the enforcer works (default: Seatbelt applies a
   * profile). Together they run the macOS path end to end on this machine.
   */
  facts?: MachineFacts;
  enforcerWorks?: () => Promise<boolean>;
}

export class ExecaRunner implements ProcessRunner {
  #bwrap: Promise<string | null> | undefined;
  readonly #alter: (args: string[]) => string[];
  /** the sandbox's arguments are rewritten (a test's weakened sandbox): never described, never kept */
  readonly #altered: boolean;
  readonly #maxProcesses: number;
  readonly #hostEnv: Record<string, string | undefined>;
  readonly #node: string;
  readonly #platform: NodeJS.Platform;
  readonly #facts: MachineFacts;
  readonly #enforcerWorks: (() => Promise<boolean>) | undefined;
  #seatbelt: Promise<boolean> | undefined;

  constructor(options: ExecaRunnerOptions = {}) {
    this.#alter = options.alterSandboxArgs ?? ((args) => args);
    this.#altered = options.alterSandboxArgs !== undefined;
    this.#maxProcesses = options.maxProcesses ?? SANDBOX_MAX_PROCESSES;
    this.#hostEnv = options.hostEnv ?? process.env;
    this.#node = options.node ?? process.execPath;
    this.#platform = options.platform ?? process.platform;
    this.#facts = options.facts ?? machineFacts(this.#platform);
    this.#enforcerWorks = options.enforcerWorks;
  }

  /** whether Seatbelt and sandbox-runtime work here; found once per runner */
  #seatbeltWorks(): Promise<boolean> {
    this.#seatbelt ??= this.#enforcerWorks?.() ?? seatbeltWorks();
    return this.#seatbelt;
  }

  /** absolute path of a bwrap that runs a trivial sandbox here, or null; found once per runner */
  #sandboxBinary(): Promise<string | null> {
    this.#bwrap ??= (async () => {
      const bwrap = await findExecutable('bwrap');
      if (bwrap === null) return null;
      const probe = await execa(bwrap, [...(await probeArgs()), '--', '/bin/sh', '-c', 'exit 0'], {
        reject: false,
        timeout: 10_000,
        stdin: 'ignore',
        extendEnv: false,
        env: { PATH: '/usr/bin:/bin' },
      });
      return probe.exitCode === 0 ? bwrap : null;
    })();
    return this.#bwrap;
  }

  async sandboxAvailable(): Promise<boolean> {
    if (this.#platform === 'darwin') return this.#seatbeltWorks();
    return (await this.#sandboxBinary()) !== null;
  }

  /**
   * bubblewrap's file, the machine's facts and this runner's arguments ({@link bwrapFacts}); null on macOS
   * (its self-test runs every time), without bubblewrap, or with rewritten arguments.
   */
  async sandboxIdentity(): Promise<string | null> {
    if (this.#altered || this.#platform === 'darwin' || this.#platform !== process.platform) return null;
    const bwrap = await this.#sandboxBinary();
    if (bwrap === null) return null;
    return JSON.stringify({ ...(await bwrapFacts(bwrap)), probe: await probeArgs(), isolation: isolationArgs() });
  }

  async run(command: string, options: RunOptions): Promise<RunResult> {
    const hosts = options.sandbox?.network;
    if (hosts === undefined || this.#platform === 'darwin') return this.#run(command, options);
    const bwrap = await this.#sandboxBinary();
    if (bwrap === null)
      throw new Error(
        'a sandboxed run was requested but bubblewrap (bwrap) cannot run here: install bubblewrap, or set `sandbox: off`',
      );
    const egress: SandboxEgress = await sandboxEgress(hosts, command, this.#hostEnv, this.#node);
    try {
      const sandbox = { ...options.sandbox!, mounts: [...(options.sandbox!.mounts ?? []), ...egress.mounts] };
      return await this.#run(egress.command, { ...options, env: { ...options.env, ...egress.env }, sandbox });
    } finally {
      await egress.proxy.close();
    }
  }

  async #run(command: string, options: RunOptions): Promise<RunResult> {
    // One pipe for both streams, so that the output keeps the order in which it was written.
    const script = `exec 2>&1\n${command}`;
    let file = '/bin/sh';
    let args = ['-c', script];
    let cgroup: PidsCgroup | null = null;
    let env = options.env;
    let confined: Confined | null = null;
    if (options.sandbox && this.#platform === 'darwin') {
      if (!(await this.#seatbeltWorks())) {
        throw new Error(
          "a sandboxed run was requested but Seatbelt (sandbox-exec) with @anthropic-ai/sandbox-runtime cannot run here: reinstall loopfleet's dependencies, or set `sandbox: off`",
        );
      }
      confined = await confineWithSrt(script, options, {
        facts: this.#facts,
        node: this.#node,
        hostEnv: this.#hostEnv,
      });
      ({ file, args, env } = confined);
    } else if (options.sandbox) {
      const bwrap = await this.#sandboxBinary();
      if (bwrap === null) {
        throw new Error(
          'a sandboxed run was requested but bubblewrap (bwrap) cannot run here: install bubblewrap, or set `sandbox: off`',
        );
      }
      file = bwrap;
      const confined = await sandboxArgs({
        cwd: options.cwd,
        writable: options.sandbox.writable,
        env: options.env,
        mounts: options.sandbox.mounts ?? [],
        ...(options.sandbox.home === undefined ? {} : { home: options.sandbox.home }),
      });
      args = [...this.#alter(confined), '--', '/bin/sh', '-c', script];
      // A process limit where one can be made (see `PidsCgroup`); doctor says when there is none.
      cgroup = await PidsCgroup.create(this.#maxProcesses);
      if (cgroup !== null) ({ file, args } = cgroup.wrap(file, args));
    }
    try {
      return await this.#execute(command, file, args, env, cgroup, options);
    } finally {
      await confined?.close();
    }
  }

  async #execute(
    command: string,
    file: string,
    args: string[],
    env: Record<string, string>,
    cgroup: PidsCgroup | null,
    options: RunOptions,
  ): Promise<RunResult> {
    const tail = new OutputTail(options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES, options.keepHeadBytes ?? 0);
    const onOutput = options.onOutput;
    const decoder = onOutput ? new StringDecoder('utf8') : null;
    let callbackError: unknown = null;
    const emit = (text: string): void => {
      if (!onOutput || text.length === 0 || callbackError !== null) return;
      try {
        onOutput(text);
      } catch (error) {
        callbackError = error; // rethrown once the command has ended
      }
    };

    const timeout = Number.isFinite(options.timeoutMs) && options.timeoutMs > 0 ? Math.ceil(options.timeoutMs) : 0;
    const started = performance.now();
    let abortedAt: number | null = options.signal?.aborted ? started : null;
    const onAbort = (): void => {
      abortedAt ??= performance.now();
    };
    options.signal?.addEventListener('abort', onAbort, { once: true });
    const subprocess = execa(file, args, {
      cwd: options.cwd,
      env,
      extendEnv: false,
      ...(options.input === undefined ? { stdin: 'ignore' as const } : { input: options.input }),
      all: true,
      buffer: false,
      encoding: 'buffer',
      reject: false,
      timeout,
      ...(options.signal ? { cancelSignal: options.signal } : {}),
      killDescendants: true,
      forceKillAfterDelay: KILL_GRACE_MS,
      cleanup: true,
    });
    subprocess.all?.on('data', (chunk: Uint8Array) => {
      const buffer = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
      tail.push(buffer);
      if (decoder) emit(decoder.write(buffer));
    });
    // The shell is done: whatever it left running in its group (`server &`) goes too, which also
    // closes the output pipe those processes held open.
    let killError: Error | null = null;
    let exitedAt: number | null = null;
    let drain: NodeJS.Timeout | undefined;
    subprocess.nodeChildProcess.once('exit', () => {
      exitedAt = performance.now();
      killError = killGroup(subprocess.pid, 'SIGKILL');
      // A process that left the group (setsid) may still hold the pipe: stop reading shortly after.
      drain = setTimeout(() => {
        subprocess.stdout?.destroy();
        subprocess.stderr?.destroy();
      }, OUTPUT_DRAIN_MS);
    });

    // A fork bomb ends the command: once a fork was refused, the whole sandbox goes.
    let limitReached = false;
    const watchLimit =
      cgroup === null
        ? undefined
        : setInterval(() => {
            void cgroup?.reached().then((reached) => {
              if (reached && !limitReached) {
                limitReached = true;
                killGroup(subprocess.pid, 'SIGKILL');
              }
            });
          }, LIMIT_POLL_MS);
    let result: Awaited<typeof subprocess>;
    try {
      result = await subprocess;
    } finally {
      clearInterval(watchLimit);
      if (cgroup !== null) {
        limitReached ||= await cgroup.reached();
        await cgroup.remove();
      }
    }
    if (limitReached)
      tail.push(
        Buffer.from(
          `\nloopfleet: the sandbox reached its process limit (${cgroup?.max} processes); the command was stopped\n`,
        ),
      );
    clearTimeout(drain);
    options.signal?.removeEventListener('abort', onAbort);
    if (decoder) emit(decoder.end());
    const durationMs = Math.round(performance.now() - started);

    const spawnFailed =
      result.failed &&
      result.exitCode === undefined &&
      result.signal === undefined &&
      !result.timedOut &&
      !result.isCanceled;
    if (spawnFailed) {
      const what = !options.sandbox ? '/bin/sh' : this.#platform === 'darwin' ? 'srt (sandbox-runtime)' : 'bwrap';
      throw new Error(`cannot run ${what} in ${options.cwd}: ${result.originalMessage ?? result.shortMessage}`, {
        cause: result,
      });
    }
    if (callbackError !== null) throw callbackError;
    if (killError !== null) throw new Error(`cannot stop the processes left by \`${command}\``, { cause: killError });
    // Once the command has exited on its own, a later timeout or abort only cut the draining short.
    const deadline = timeout > 0 ? started + timeout : Number.POSITIVE_INFINITY;
    const endedBefore = (at: number): boolean => exitedAt !== null && exitedAt < at;
    return {
      // A command stopped at its process limit failed, whatever its first process's exit said.
      exitCode: limitReached ? null : (result.exitCode ?? null),
      signal: limitReached ? 'SIGKILL' : (result.signal ?? null),
      timedOut: result.timedOut && !endedBefore(deadline),
      aborted: result.isCanceled && !endedBefore(abortedAt ?? Number.POSITIVE_INFINITY),
      output: tail.text(),
      truncated: tail.truncated,
      durationMs,
    };
  }
}
