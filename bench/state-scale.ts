/**
 * 7. State at scale: `--overnight` bookkeeping with 50 and with 20,000 tasks in the backlog. All but RUN
 * of them are ticked `[x]` and have their record in the state (seeded first, as a long history leaves it); RUN run through
 * the real engine (real git, processes, state file and lock) with an instant scripted model. Each size
 * runs in a process of its own; rss is sampled every 50 ms. Per task: the run's wall time and the time
 * spent in the state store, divided by RUN.
 *
 *   node bench/state-scale.ts            both sizes
 *   node bench/state-scale.ts 20000 DIR  one size on a seeded repository, printing its figures as JSON (the child)
 */
import { spawn } from 'node:child_process';
import { readFile, stat } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { LowdbStateStore } from '../src/adapters/store/lowdb-state.js';
import { parseBacklog } from '../src/core/backlog/parse.js';
import { taskGates } from '../src/core/budget/gates.js';
import { TaskLifecycle } from '../src/core/task/lifecycle.js';
import * as fr from './fleet-run.js';
import * as lib from './lib.js';

const SIZES = lib.quick ? [5, 50] : [50, 20_000];
const RUN = lib.quick ? 2 : 10;
const RSS_LIMIT_MB = 300;
/** per-task cost at 20,000 tasks may be at most this many times the cost at 50 */
const GROWTH_LIMIT = 1.5;
const MB = 1024 * 1024;

interface Figures {
  tasks: number;
  verified: number;
  openMs: number;
  runPerTaskMs: number;
  storePerTaskMs: number;
  storeCalls: number;
  closeMs: number;
  peakRssMb: number;
  stateBytes: number;
}

function backlog(n: number): string {
  const items = Array.from({ length: n }, (_, i) => {
    const done = i >= RUN;
    return `- [${done ? 'x' : ' '}] T-${i + 1} Write file ${i + 1}\n  Put one line into T-${i + 1}.txt.`;
  });
  return `---\nconcurrency: 4\ncheck: "true"\nreview: false\n---\n\n# Backlog\n\n${items.join('\n')}\n`;
}

/** The state a long history leaves: a record for every task, written before the measured process starts. */
async function seed(root: string): Promise<void> {
  const parsed = parseBacklog(await readFile(`${root}/BACKLOG.md`, 'utf8'), `${root}/BACKLOG.md`, { takenIds: [] });
  const tasks = {};
  const life = new TaskLifecycle(tasks, { now: () => Date.now() }, () => {});
  for (const spec of parsed.backlog.tasks) life.ensure(spec, taskGates(spec, parsed.backlog.config));
  const fleet = {
    usage: { input: 0, output: 0, cacheWrite: 0, cacheRead: 0 },
    costUsd: 0,
    elapsedMs: 0,
    startedAt: null,
  };
  await new LowdbStateStore(`${root}/.loop-worktrees/state.json`).save({ version: 1, base: 'main', fleet, tasks });
}

async function child(root: string, n: number): Promise<Figures> {
  let peak = process.memoryUsage().rss;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 50);
  const r = await fr.runFleetOnce({ root, latencyMs: 0 });
  peak = Math.max(peak, process.memoryUsage().rss);
  clearInterval(timer);
  const store = r.timings.calls.filter((t) => t.service === 'store' && t.op !== 'load');
  const state = await stat(`${root}/.loop-worktrees/state.json`);
  return {
    tasks: n,
    verified: Object.values(r.statuses).filter((s) => s === 'verified').length,
    openMs: r.openMs,
    runPerTaskMs: r.runMs / RUN,
    storePerTaskMs: store.reduce((a, t) => a + t.ms, 0) / RUN,
    storeCalls: store.length,
    closeMs: r.closeMs,
    peakRssMb: peak / MB,
    stateBytes: state.size,
  };
}

const arg = process.argv[2];
if (arg !== undefined) {
  process.stdout.write(`${JSON.stringify(await child(process.argv[3]!, Number(arg)))}\n`);
} else {
  const results: Figures[] = [];
  for (const n of SIZES) {
    const repo = await lib.makeRepo({ ...lib.sampleFiles(), 'BACKLOG.md': backlog(n) });
    await seed(repo.root);
    const out = await new Promise<string>((resolve, reject) => {
      const c = spawn(process.execPath, lib.benchArgs(fileURLToPath(import.meta.url), String(n), repo.root), {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let text = '';
      c.stdout.on('data', (d: Buffer) => (text += d.toString()));
      c.on('exit', (code) => (code === 0 ? resolve(text) : reject(new Error(`state-scale ${n}: exit ${code}`))));
    }).finally(() => repo.cleanup());
    results.push(JSON.parse(out.trim().split('\n').at(-1)!) as Figures);
  }
  const [small, large] = [results[0]!, results.at(-1)!];
  lib.section(
    `7. state at scale — ${RUN} tasks run through the real engine (instant model), the rest ticked [x] with their records in the state`,
  );
  lib.print(
    lib.table([
      ['tasks in the backlog', ...results.map((r) => String(r.tasks))],
      ['state.json after the run', ...results.map((r) => `${(r.stateBytes / MB).toFixed(1)} MB`)],
      ['open (backlog, lock, state)', ...results.map((r) => lib.ms(r.openMs, 0))],
      ['run: wall per task', ...results.map((r) => lib.ms(r.runPerTaskMs, 0))],
      ['state store per task', ...results.map((r) => `${lib.ms(r.storePerTaskMs, 1)} (${r.storeCalls} calls)`)],
      ['close (whole save)', ...results.map((r) => lib.ms(r.closeMs, 0))],
      ['rss peak', ...results.map((r) => `${r.peakRssMb.toFixed(0)} MB`)],
      ['verified', ...results.map((r) => `${r.verified}/${RUN}`)],
    ]),
  );
  const growth = large.runPerTaskMs / small.runPerTaskMs;
  const rows: lib.SummaryRow[] = [
    {
      figure: `7 per-task bookkeeping, ${large.tasks} vs ${small.tasks} tasks`,
      value: `${lib.ms(large.runPerTaskMs, 0)} vs ${lib.ms(small.runPerTaskMs, 0)} (×${growth.toFixed(2)})`,
      target: `≤ ×${GROWTH_LIMIT}`,
      pass: growth <= GROWTH_LIMIT,
    },
    {
      figure: `7 RSS peak, ${large.tasks} tasks`,
      value: `${large.peakRssMb.toFixed(0)} MB`,
      target: `≤ ${RSS_LIMIT_MB} MB`,
      pass: large.peakRssMb <= RSS_LIMIT_MB,
    },
  ];
  lib.print('');
  lib.print(
    lib.table([
      ['figure', 'value', 'target', ''],
      ...rows.map((r) => [r.figure, r.value, r.target, lib.verdict(r.pass)]),
    ]),
  );
  await lib.report(rows);
}
