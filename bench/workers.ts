/**
 * 8. Workers: 40 trivial tasks through a coordinator (`--overnight --queue`) and 1 vs 4 worker processes
 * over a real redis-server: wall time, the coordinator's CPU time (its own process, read at its exit), and
 * Redis commands per task (INFO commandstats, every client: coordinator and workers).
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startModelServer } from '../src/demo/model-server.js';
import { demoScript } from '../src/demo/scripts.js';
import { startRedis } from '../test/helpers/redis-server.js';
import * as lib from './lib.js';

const run = promisify(execFile);
const TASKS = lib.quick ? 2 : 40;
const FLEETS = lib.quick ? [1, 2] : [1, 4];
const KEY = 'bench-workers-key';

/** calls per command from INFO commandstats */
function commandCalls(info: string): number {
  let sum = 0;
  for (const m of info.matchAll(/^cmdstat_[^:]+:calls=(\d+)/gm)) sum += Number(m[1]);
  return sum;
}

interface Result {
  workers: number;
  wallMs: number;
  cpuMs: number;
  commandsPerTask: number;
  verified: number;
}

async function once(workers: number): Promise<Result> {
  const ids = Array.from({ length: TASKS }, (_, i) => `T-${i + 1}`);
  const redis = await startRedis();
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
        process.execPath,
        [
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
        ],
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
      `import { writeFileSync } from 'node:fs';\nprocess.on('exit', () => { const u = process.cpuUsage(); writeFileSync(${JSON.stringify(cpuFile)}, JSON.stringify(u)); });\n`,
    );
    const before = commandCalls(await redis.command('INFO', 'commandstats'));
    const t0 = performance.now();
    const coordinator = await run(
      process.execPath,
      ['--import', preload, lib.CLI, '--overnight', '--queue', redis.url],
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
    const cpu = JSON.parse(await readFile(cpuFile, 'utf8')) as { user: number; system: number };
    const verified = Number(/done: (\d+) verified/.exec(coordinator.stdout)?.[1] ?? 0);
    return {
      workers,
      wallMs,
      cpuMs: (cpu.user + cpu.system) / 1000,
      commandsPerTask: (after - before) / TASKS,
      verified,
    };
  } finally {
    for (const c of children) c.kill('SIGKILL');
    await model.close();
    await redis.close();
    await repo.cleanup();
    await rm(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
  }
}

lib.section(
  `8. ${TASKS} trivial tasks on workers over Redis (each worker: concurrency 2; fleet concurrency 2 per worker)`,
);
const results: Result[] = [];
for (const n of FLEETS) results.push(await once(n));
lib.print(
  lib.table([
    ['workers', 'verified', 'wall', 'coordinator CPU', 'CPU / task', 'Redis commands / task'],
    ...results.map((r) => [
      String(r.workers),
      `${r.verified}/${TASKS}`,
      lib.ms(r.wallMs, 0),
      lib.ms(r.cpuMs, 0),
      lib.ms(r.cpuMs / TASKS),
      r.commandsPerTask.toFixed(0),
    ]),
  ]),
);
const [one, many] = [results[0]!, results[results.length - 1]!];
await lib.report([
  {
    figure: `8 wall, ${TASKS} tasks: 1 worker vs ${many.workers}`,
    value: `${lib.ms(one.wallMs, 0)} vs ${lib.ms(many.wallMs, 0)} (${lib.ratio(one.wallMs / many.wallMs)})`,
    target: 'faster with more workers',
    pass: lib.quick ? null : many.wallMs < one.wallMs,
  },
  {
    figure: `8 coordinator CPU per task (${many.workers} workers)`,
    value: lib.ms(many.cpuMs / TASKS),
    target: '—',
    pass: null,
  },
  {
    figure: `8 Redis commands per task (${many.workers} workers)`,
    value: many.commandsPerTask.toFixed(0),
    target: '—',
    pass: null,
  },
  {
    figure: '8 every task verified',
    value: results.map((r) => `${r.verified}/${TASKS}`).join(', '),
    target: `${TASKS}/${TASKS}`,
    pass: results.every((r) => r.verified === TASKS),
  },
]);
