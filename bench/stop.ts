/**
 * 10. A stop that stops: `loopfleet --overnight` as a process on a 2,000-task backlog with the scripted demo
 * model (a loopback fake of the Messages API), `setup:` and a sandboxed check, SIGTERM once attempts are
 * running — seen in the run's own output (a task in `implement`), never after a fixed sleep. Measured: the
 * time from the signal to the process's exit, and what the state then says of every attempt that ran
 * (each running one recorded `interrupted`, no task left `running`).
 */
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startModelServer } from '../src/demo/model-server.js';
import { demoScript } from '../src/demo/scripts.js';
import * as lib from './lib.js';

const TASKS = lib.quick ? 4 : 2000;
const RUNS = lib.quick ? 1 : 3;
const CONCURRENCY = lib.quick ? 2 : 8;
const KEY = 'sk-ant-bench-0123456789abcdefghijklmnopqrstuvwxyz';
/** how long after SIGTERM the run is left before it is killed (the figure is then "more than" this) */
const GIVE_UP_MS = 90_000;

/**
 * `setup:` takes a few seconds, so that at the signal some attempts are in setup and others are further on;
 * the model answers after a short delay, so that attempts are also waiting for it.
 */
const SETUP_S = lib.quick ? 0 : 3;
const FRONT = `concurrency: ${CONCURRENCY}\nsetup: sleep ${SETUP_S}\ncheck: "true"\nreview: false`;

interface StopRun {
  /** SIGTERM → exit */
  stopMs: number;
  exitCode: number | null;
  /** tasks in each phase when the signal was sent, from the run's output */
  phases: Record<string, number>;
  /** attempts recorded, by outcome, and tasks by status, from state.json after the exit */
  outcomes: Record<string, number>;
  running: number;
  killed: boolean;
}

async function stopOnce(url: string): Promise<StopRun> {
  const repo = await lib.makeRepo({ ...lib.sampleFiles(), 'BACKLOG.md': lib.backlogText(FRONT, TASKS) });
  try {
    const child = spawn(process.execPath, [lib.CLI, '--overnight', '--auto-merge'], {
      cwd: repo.root,
      env: { ...process.env, ANTHROPIC_BASE_URL: url, ANTHROPIC_API_KEY: KEY, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    /** each running task's phase, from the run's output; a task leaves it once it is merged */
    const phase = new Map<string, string>();
    let merged = 0;
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    // The signal goes once a task has been verified and merged while most of the others are in flight, in
    // setup and further on: every kind of work is under way (or, should that moment not come, once as many
    // tasks as run at once have been merged).
    const ready = new Promise<void>((resolve) => {
      let buffered = '';
      child.stdout.on('data', (d: Buffer) => {
        buffered += d.toString();
        const lines = buffered.split('\n');
        buffered = lines.pop() ?? '';
        for (const line of lines) {
          const m = / (T-\d+) (setup|explore|implement|verify) \(attempt \d+\)$/.exec(line);
          const ended = / (T-\d+) (verified|merged|failed|queued|conflict) /.exec(line);
          if (m !== null) phase.set(m[1]!, m[2]!);
          else if (ended !== null) {
            phase.delete(ended[1]!);
            if (ended[2] === 'merged') merged++;
          }
          const now = [...phase.values()];
          const busy = now.length >= CONCURRENCY - 2 && now.includes('setup') && now.some((p) => p !== 'setup');
          // Quick mode (does it run to the end?) signals at the first attempt past setup.
          if ((merged > 0 && busy) || merged >= CONCURRENCY || (lib.quick && m !== null && m[2] !== 'setup')) resolve();
        }
      });
    });
    const first = await Promise.race([ready.then(() => true), exited.then(() => false)]);
    if (!first) throw new Error(`the run ended before any attempt was running: ${stderr.slice(-2000)}`);
    const phases: Record<string, number> = {};
    for (const p of phase.values()) phases[p] = (phases[p] ?? 0) + 1;
    const t0 = performance.now();
    child.kill('SIGTERM');
    let killed = false;
    const timer = setTimeout(() => {
      killed = true;
      child.kill('SIGKILL');
    }, GIVE_UP_MS);
    const exitCode = await exited;
    const stopMs = performance.now() - t0;
    clearTimeout(timer);
    const state = JSON.parse(await readFile(join(repo.root, '.loop-worktrees', 'state.json'), 'utf8')) as {
      tasks: Record<string, { status: string; attempts: Array<{ outcome: string }> }>;
    };
    const outcomes: Record<string, number> = {};
    let running = 0;
    for (const task of Object.values(state.tasks)) {
      if (task.status === 'running') running++;
      for (const a of task.attempts) outcomes[a.outcome] = (outcomes[a.outcome] ?? 0) + 1;
    }
    return { stopMs, exitCode, phases, outcomes, running, killed };
  } finally {
    await repo.cleanup();
  }
}

const server = await startModelServer({
  apiKeys: [KEY],
  script: demoScript(
    Array.from({ length: TASKS }, (_, i) => ({
      taskId: `T-${i + 1}`,
      kind: 'pass' as const,
      edits: [{ path: `T-${i + 1}.txt`, content: `T-${i + 1} done\n` }],
    })),
    { delayMs: 300, chunkDelayMs: 0 },
  ),
});
const runs: StopRun[] = [];
try {
  for (let i = 0; i < RUNS; i++) runs.push(await stopOnce(server.url));
} finally {
  await server.close();
}

const stopMs = lib.median(runs.map((r) => r.stopMs));
const allInterrupted = runs.every((r) => r.running === 0 && r.exitCode === 130 && !r.killed);
lib.section(
  `10. SIGTERM → exit — --overnight, ${TASKS} tasks, concurrency ${CONCURRENCY}, setup "sleep ${SETUP_S}", sandboxed check, scripted model; median of ${RUNS}`,
);
lib.print(
  lib.table([
    ['run', 'SIGTERM → exit', 'exit', 'phases at the signal', 'attempts by outcome', 'tasks left running'],
    ...runs.map((r, i) => [
      `run ${i + 1}`,
      r.killed ? `> ${lib.ms(GIVE_UP_MS, 0)} (killed)` : lib.ms(r.stopMs, 0),
      String(r.exitCode),
      Object.entries(r.phases)
        .map(([k, v]) => `${k} ${v}`)
        .join(', '),
      Object.entries(r.outcomes)
        .map(([k, v]) => `${k} ${v}`)
        .join(', '),
      String(r.running),
    ]),
  ]),
);

await lib.report([
  {
    figure: `10 SIGTERM → exit at ${TASKS} tasks (attempts running)`,
    value: `${lib.ms(stopMs, 0)}${allInterrupted ? '' : ' — a run was killed, exited otherwise than 130 or left a task running'}`,
    target: '≤ 10 s, every attempt recorded',
    pass: stopMs <= 10_000 && allInterrupted,
  },
]);
