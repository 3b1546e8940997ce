/**
 * 8. Workers: 40 trivial tasks through a coordinator (`--overnight --queue`) and 1 vs 4 worker processes
 * over a real redis-server: wall time, the coordinator's CPU time (its own process, and with the processes
 * it started, read at its exit), the workers' and Redis's CPU, and Redis commands per task — the
 * coordinator's alone (counted by a proxy it connects through) and every client's (INFO commandstats).
 *
 * With `taskset` and two CPUs or more, each part runs on CPUs of its own (CPU affinity): the coordinator and
 * Redis on CPU 0, the workers on the others, so the shares can be reasoned about on a small machine; from
 * the CPU each part spends per task, the speed-up on N worker machines is modelled.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startModelServer } from '../src/demo/model-server.js';
import { demoScript } from '../src/demo/scripts.js';
import { startRedis } from '../test/helpers/redis-server.js';
import { countingProxy } from './resp-count.js';
import * as lib from './lib.js';

const run = promisify(execFile);
const TASKS = lib.quick ? 2 : 40;
const FLEETS = lib.quick ? [1, 2] : [1, 4];
const KEY = 'bench-workers-key';
/** cores of one worker machine in the model (this machine's) */
const CORES = availableParallelism();
/** clock ticks per second of /proc/<pid>/stat (Linux's USER_HZ) */
const TICKS = 100;
const TASKSET = '/usr/bin/taskset';
/** the coordinator and Redis on CPU 0, the workers on the rest; null: no affinity here */
const AFFINITY = existsSync(TASKSET) && CORES >= 2 ? { coordinator: '0', workers: `1-${CORES - 1}` } : null;

/** CPU ms of process `pid` and of the children it has waited for (/proc/<pid>/stat), or null once it is gone. */
async function procCpuMs(pid: number | undefined): Promise<number | null> {
  if (pid === undefined) return null;
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime, stime, cutime, cstime: fields 14-17 of the file, 12-15 after the command name
    const ticks = [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i]), 0);
    return (ticks * 1000) / TICKS;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

/** Redis's own CPU in ms (INFO cpu). */
function redisCpuMs(info: string): number {
  const user = Number(/^used_cpu_user:([\d.]+)/m.exec(info)?.[1] ?? 0);
  const sys = Number(/^used_cpu_sys:([\d.]+)/m.exec(info)?.[1] ?? 0);
  return (user + sys) * 1000;
}

/** `command args` pinned to `cpus` when affinity is on. */
function pinned(cpus: string | undefined, file: string, args: string[]): [string, string[]] {
  return cpus === undefined ? [file, args] : [TASKSET, ['-c', cpus, file, ...args]];
}

/** calls per command from INFO commandstats */
function commandCalls(info: string): number {
  let sum = 0;
  for (const m of info.matchAll(/^cmdstat_[^:]+:calls=(\d+)/gm)) sum += Number(m[1]);
  return sum;
}

interface Result {
  workers: number;
  wallMs: number;
  /** the coordinator's own process */
  cpuMs: number;
  /** the coordinator with the processes it started (git, its check of the workers' claims in bubblewrap) */
  cpuAllMs: number;
  /** every worker with the processes it started, from the coordinator's start to its exit */
  workersCpuMs: number;
  redisCpuMs: number;
  /** every client's commands (INFO commandstats) */
  commandsPerTask: number;
  /** the coordinator's commands alone */
  coordinatorCommandsPerTask: number;
  verified: number;
}

async function once(workers: number): Promise<Result> {
  const ids = Array.from({ length: TASKS }, (_, i) => `T-${i + 1}`);
  const redis = await startRedis();
  if (AFFINITY !== null) {
    const pid = /^process_id:(\d+)/m.exec(await redis.command('INFO', 'server'))?.[1];
    if (pid === undefined) throw new Error('redis INFO server names no process_id');
    await run(TASKSET, ['-cp', AFFINITY.coordinator, pid]);
  }
  const proxy = await countingProxy(redis.port);
  const model = await startModelServer({
    apiKeys: [KEY],
    script: demoScript(
      ids.map((id) => ({ taskId: id, kind: 'pass' as const, edits: [{ path: `${id}.txt`, content: `${id}\n` }] })),
      { chunkDelayMs: 0, delayMs: 0 },
    ),
  });
  const dir = await mkdtemp(join(tmpdir(), 'loopfleet-bench-workers-'));
  const repo = await lib.makeRepo({
    ...lib.sampleFiles(),
    'BACKLOG.md': lib.backlogText(`check: test -n "$(ls T-*.txt)"\nconcurrency: ${workers * 2}`, TASKS),
  });
  const children: Array<ReturnType<typeof execFile>> = [];
  try {
    const remote = join(dir, 'remote.git');
    await lib.git(dir, 'init', '--bare', '--quiet', '--initial-branch=main', remote);
    await lib.git(repo.root, 'remote', 'add', 'origin', remote);
    await lib.git(repo.root, 'push', '--quiet', 'origin', 'main');
    // The fleet secret seals jobs and events: coordinator and workers share it out of band.
    const env = {
      ...process.env,
      ANTHROPIC_BASE_URL: model.url,
      ANTHROPIC_API_KEY: KEY,
      LOOPFLEET_QUEUE_SECRET: randomBytes(32).toString('hex'),
    };
    for (let i = 0; i < workers; i++) {
      const home = join(dir, `w${i}`);
      await mkdir(home, { recursive: true });
      const child = execFile(
        ...pinned(AFFINITY?.workers, process.execPath, [
          lib.CLI,
          'worker',
          '--queue',
          redis.url,
          '--remote',
          remote,
          '--concurrency',
          '2',
          '--cache',
          join(home, 'cache'),
        ]),
        { cwd: home, env: { ...env, HOME: home } },
      );
      children.push(child);
      // Ready once it says so on stdout.
      await new Promise<void>((resolve, reject) => {
        let out = '';
        child.stdout!.on('data', (d: Buffer) => {
          out += d.toString();
          if (/taking jobs/.test(out)) resolve();
        });
        child.stderr!.on('data', (d: Buffer) => {
          out += d.toString();
        });
        child.once('exit', (code) => reject(new Error(`worker exited ${code} before taking jobs: ${out}`)));
      });
    }
    // The coordinator's CPU, measured by itself as it exits (a preload module), not by sampling.
    const cpuFile = join(dir, 'cpu.json');
    const preload = join(dir, 'cpu-at-exit.mjs');
    await writeFile(
      preload,
      `import { readFileSync, writeFileSync } from 'node:fs';\nprocess.on('exit', () => { const u = process.cpuUsage(); const f = readFileSync('/proc/self/stat', 'utf8'); const c = f.slice(f.lastIndexOf(')') + 2).split(' '); writeFileSync(${JSON.stringify(cpuFile)}, JSON.stringify({ ...u, childrenTicks: Number(c[13]) + Number(c[14]) })); });\n`,
    );
    const before = commandCalls(await redis.command('INFO', 'commandstats'));
    const redisBefore = redisCpuMs(await redis.command('INFO', 'cpu'));
    const workersBefore = await Promise.all(children.map((c) => procCpuMs(c.pid)));
    const t0 = performance.now();
    const coordinator = await run(
      ...pinned(AFFINITY?.coordinator, process.execPath, [
        '--import',
        preload,
        lib.CLI,
        '--overnight',
        '--queue',
        proxy.url,
      ]),
      {
        cwd: repo.root,
        env,
        maxBuffer: 64 * 1024 * 1024,
      },
    ).catch((error: { stdout?: string; stderr?: string }) => {
      throw new Error(`the coordinator failed: ${error.stderr ?? ''}${(error.stdout ?? '').slice(-2000)}`);
    });
    const wallMs = performance.now() - t0;
    const after = commandCalls(await redis.command('INFO', 'commandstats'));
    const redisAfter = redisCpuMs(await redis.command('INFO', 'cpu'));
    const workersAfter = await Promise.all(children.map((c) => procCpuMs(c.pid)));
    const cpu = JSON.parse(await readFile(cpuFile, 'utf8')) as { user: number; system: number; childrenTicks: number };
    const verified = Number(/done: (\d+) verified/.exec(coordinator.stdout)?.[1] ?? 0);
    const own = (cpu.user + cpu.system) / 1000;
    let workersCpuMs = 0;
    for (const [i, a] of workersAfter.entries()) {
      const b = workersBefore[i];
      if (a === null || b === null || b === undefined) throw new Error(`worker ${i} exited during the run`);
      workersCpuMs += a - b;
    }
    return {
      workers,
      wallMs,
      cpuMs: own,
      cpuAllMs: own + (cpu.childrenTicks * 1000) / TICKS,
      workersCpuMs,
      redisCpuMs: redisAfter - redisBefore,
      commandsPerTask: (after - before) / TASKS,
      coordinatorCommandsPerTask: proxy.commands() / TASKS,
      verified,
    };
  } finally {
    for (const c of children) c.kill('SIGKILL');
    await proxy.close();
    await model.close();
    await redis.close();
    await repo.cleanup();
    await rm(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
  }
}

lib.section(
  `8. ${TASKS} trivial tasks on workers over Redis (each worker: concurrency 2; fleet concurrency 2 per worker)` +
    (AFFINITY === null
      ? ' — no CPU affinity here (taskset or a second CPU missing)'
      : ` — coordinator and Redis on CPU ${AFFINITY.coordinator}, workers on CPU ${AFFINITY.workers}`),
);
const results: Result[] = [];
for (const n of FLEETS) results.push(await once(n));
const per = (ms: number) => lib.ms(ms / TASKS);
lib.print(
  lib.table([
    [
      'workers',
      'verified',
      'wall',
      'coordinator CPU / task (own; with its processes)',
      'workers CPU / task',
      'Redis CPU / task',
      'Redis commands / task (coordinator; all)',
    ],
    ...results.map((r) => [
      String(r.workers),
      `${r.verified}/${TASKS}`,
      lib.ms(r.wallMs, 0),
      `${per(r.cpuMs)}; ${per(r.cpuAllMs)}`,
      per(r.workersCpuMs),
      per(r.redisCpuMs),
      `${r.coordinatorCommandsPerTask.toFixed(0)}; ${r.commandsPerTask.toFixed(0)}`,
    ]),
  ]),
);

/**
 * The model: a worker machine of CORES cores finishes CORES / w tasks a second (w: the workers' CPU per
 * task, this zero-latency model's — a real model's waiting costs no CPU and only raises concurrency); the
 * coordinator at most 1 / c_own (its one event loop) and CORES / c_all (with the processes it starts);
 * Redis at most 1 / r (one thread). N machines: the least of N · CORES / w and those limits.
 */
const base = results[0]!;
const w = base.workersCpuMs / TASKS;
const limits = {
  coordinator: Math.min(1000 / (base.cpuMs / TASKS), (CORES * 1000) / (base.cpuAllMs / TASKS)),
  redis: 1000 / Math.max(base.redisCpuMs / TASKS, 0.001),
};
const oneMachine = (CORES * 1000) / w;
const rate = (n: number) => Math.min(n * oneMachine, limits.coordinator, limits.redis);
const speedUp = (n: number) => rate(n) / rate(1);
const MACHINES = [1, 2, 4, 8, 16, 32, 64];
lib.print(
  `\nModelled from the ${base.workers}-worker run: a worker machine of ${CORES} cores does ${oneMachine.toFixed(1)} tasks/s; ` +
    `the coordinator caps the fleet at ${limits.coordinator.toFixed(1)} tasks/s, Redis at ${limits.redis.toFixed(0)} tasks/s.`,
);
lib.print(
  lib.table([
    ['worker machines', ...MACHINES.map(String)],
    ['speed-up (model)', ...MACHINES.map((n) => lib.ratio(speedUp(n)))],
  ]),
);
const [one, many] = [results[0]!, results[results.length - 1]!];
await lib.report([
  {
    figure: `8 wall, ${TASKS} tasks: 1 worker vs ${many.workers}${AFFINITY === null ? '' : ' (workers on one CPU)'}`,
    value: `${lib.ms(one.wallMs, 0)} vs ${lib.ms(many.wallMs, 0)} (${lib.ratio(one.wallMs / many.wallMs)})`,
    target: '(info)',
    pass: null,
  },
  {
    figure: `8 coordinator CPU per task, own process (${many.workers} workers)`,
    value: `${lib.ms(many.cpuMs / TASKS)} (${lib.ms(many.cpuAllMs / TASKS)} with its processes)`,
    target: '≤ 50 ms',
    pass: lib.quick ? null : many.cpuMs / TASKS <= 50,
  },
  {
    figure: `8 coordinator's Redis commands per task (${many.workers} workers)`,
    value: `${many.coordinatorCommandsPerTask.toFixed(0)} (every client: ${many.commandsPerTask.toFixed(0)})`,
    target: '≤ 60',
    pass: lib.quick ? null : many.coordinatorCommandsPerTask <= 60,
  },
  {
    figure: '8 modelled speed-up on 4 / 16 worker machines',
    value: `${lib.ratio(speedUp(4))} / ${lib.ratio(speedUp(16))}`,
    target: '(info)',
    pass: null,
  },
  {
    figure: '8 every task verified',
    value: results.map((r) => `${r.verified}/${TASKS}`).join(', '),
    target: `${TASKS}/${TASKS}`,
    pass: results.every((r) => r.verified === TASKS),
  },
]);
