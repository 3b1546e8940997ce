/**
 * 1. Orchestrator overhead vs plain git: 12 trivial tasks at concurrency 4, a zero-latency scripted
 * model, `check: "true"`, review off — through the real engine, against plain git doing the same steps
 * per task (worktree add -b, write the file, add -A, commit) at concurrency 4. Three runs each, medians.
 */
// First: a module runs after those imported before it, and spawn-count.js must replace
// `child_process.spawn` before the engine is loaded, so that every process it starts is counted.
import * as sc from './spawn-count.js';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as fr from './fleet-run.js';
import * as lib from './lib.js';
import { GitExec } from '../src/adapters/git/exec.js';

sc.traceSites(GitExec.prototype, ['run', 'api', 'commitApi']);

const TASKS = lib.quick ? 2 : 12;
const CONCURRENCY = lib.quick ? 2 : 4;
const RUNS = lib.quick ? 1 : 3;
const FRONT = `concurrency: ${CONCURRENCY}\ncheck: "true"\nreview: false`;

interface PlainRun {
  wallMs: number;
  /** event loop blocked in spawn calls, per task */
  spawnSyncPerTask: number;
  /** per task: the sum of its steps */
  perTask: number[];
  steps: Record<string, number[]>;
}

/** how often git 2.x lost the race between two concurrent `worktree add`s, over all plain runs */
let worktreeAddRetries = 0;

/**
 * `git worktree add -b`; retried when a concurrent add's half-written admin folder made it fail
 * ("failed to read .git/worktrees/<other>/commondir"), which plain git does now and then at concurrency 4.
 */
async function worktreeAdd(root: string, id: string, wt: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      // A lost race may have created the branch before failing: the retry checks it out instead.
      const branchArgs = attempt === 1 ? ['-b', `loop/${id}`, wt, 'main'] : [wt, `loop/${id}`];
      await lib.gitSpawn(root, 'worktree', 'add', '-q', ...branchArgs);
      return;
    } catch (error) {
      if (attempt >= 3 || !/failed to read .*commondir/.test(String(error))) throw error;
      worktreeAddRetries++;
      await rm(wt, { recursive: true, force: true });
      await lib.gitSpawn(root, 'worktree', 'prune');
    }
  }
}

/** Plain git, the same steps per task, `concurrency` tasks at a time. */
async function plainGit(root: string): Promise<PlainRun> {
  const steps: Record<string, number[]> = { 'worktree add': [], 'write file': [], 'add -A': [], commit: [] };
  const perTask: number[] = [];
  const ids = Array.from({ length: TASKS }, (_, i) => `T-${i + 1}`);
  const step = async (name: string, fn: () => Promise<unknown>): Promise<number> => {
    const s = performance.now();
    await fn();
    const d = performance.now() - s;
    steps[name]!.push(d);
    return d;
  };
  const firstSpawn = sc.spawns.length;
  const start = performance.now();
  const worker = async () => {
    for (let id = ids.shift(); id !== undefined; id = ids.shift()) {
      const wt = join(root, '.loop-worktrees', id);
      let sum = 0;
      sum += await step('worktree add', () => worktreeAdd(root, id, wt));
      sum += await step('write file', () => writeFile(join(wt, `${id}.txt`), `${id} done\n`));
      sum += await step('add -A', () => lib.gitSpawn(wt, 'add', '-A'));
      sum += await step('commit', () => lib.gitSpawn(wt, 'commit', '-q', '--no-verify', '-m', `${id}: write file`));
      perTask.push(sum);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const wallMs = performance.now() - start;
  return {
    wallMs,
    perTask,
    steps,
    spawnSyncPerTask: sc.spawns.slice(firstSpawn).reduce((a, s) => a + s.syncMs, 0) / TASKS,
  };
}

/** What a wrapped call counts as in the breakdown. */
function category(service: string, op: string): string {
  if (service === 'git' && op === 'addWorktree') return 'worktree add (git)';
  if (service === 'workspace' && (op === 'prepare' || op === 'exists')) return 'worktree prepare';
  if (service === 'git' && op === 'commitAll') return 'commit';
  if (service === 'git' && ['diff', 'diffNumstat', 'diffStat', 'revParse'].includes(op)) return 'diff/guard';
  if (service === 'runner' && op === 'run') return 'check spawn';
  if (service === 'store' && op === 'save') return 'state write';
  if (service === 'workspace' && op === 'transcript') return 'transcripts';
  return `${service}.${op}`;
}

const CATEGORIES = [
  'worktree add (git)',
  'worktree prepare',
  'commit',
  'diff/guard',
  'check spawn',
  'state write',
  'transcripts',
];
/** the steps the per-task target covers */
const TARGET_STEPS = ['worktree add (git)', 'worktree prepare', 'commit', 'check spawn', 'state write'];

interface FleetFigures {
  wallMs: number;
  openMs: number;
  runMs: number;
  closeMs: number;
  /** category → mean ms per task (state write: total / tasks) */
  perTask: Record<string, number>;
  /** mean per task of the target steps */
  targetPerTask: number;
  /** mean per task of all of the orchestrator's wrapped calls */
  ownPerTask: number;
  /** mean running → verified per task */
  spanPerTask: number;
  callsPerTask: Record<string, number>;
  sessionCalls: Array<[string, number, number]>;
  saves: number;
  /** processes started: per task by command (mean), and those of the session */
  spawnsPerTask: Record<string, number>;
  /** the same by `command ← engine call site` (see spawn-count.ts) */
  sitesPerTask: Record<string, number>;
  sessionSpawns: Record<string, number>;
  /** every process started between start() and idle, divided by the tasks */
  runTotal: number;
  /** event loop blocked inside spawn calls, per task (mean, all processes of the run / tasks) */
  spawnSyncPerTask: number;
  verified: number;
  sandboxed: boolean;
}

async function fleetOnce(): Promise<FleetFigures> {
  const repo = await lib.makeRepo({ ...lib.sampleFiles(), 'BACKLOG.md': lib.backlogText(FRONT, TASKS) });
  try {
    const firstSpawn = sc.spawns.length;
    const marks: Record<string, number> = {};
    const r = await fr.runFleetOnce({ root: repo.root, latencyMs: 0, mark: (at) => (marks[at] = sc.spawns.length) });
    // Every process the run starts from start() to idle, whichever task it is for: a look-up by stdin
    // (cat-file) or by commit id names no task, and still runs once per task.
    const runTotal = (marks['idle']! - marks['start']!) / TASKS;
    const runSpawns = sc.spawns.slice(firstSpawn);
    const spawnsPerTask: Record<string, number> = {};
    const sitesPerTask: Record<string, number> = {};
    const sessionSpawns: Record<string, number> = {};
    for (const s of runSpawns) {
      const task = lib.taskOfArgs([s.args.join(' '), s.cwd ?? '']);
      if (task === null) sessionSpawns[s.command] = (sessionSpawns[s.command] ?? 0) + 1;
      else {
        spawnsPerTask[s.command] = (spawnsPerTask[s.command] ?? 0) + 1 / TASKS;
        const site = `${s.command} ← ${s.site ?? '?'}`;
        sitesPerTask[site] = (sitesPerTask[site] ?? 0) + 1 / TASKS;
      }
    }
    const sums: Record<string, number> = {};
    const counts: Record<string, number> = {};
    const session = new Map<string, { n: number; ms: number }>();
    let saves = 0;
    for (const c of r.timings.calls) {
      const cat = category(c.service, c.op);
      if (cat === 'state write') saves++;
      if (c.task === null && cat !== 'state write') {
        const key = `${c.service}.${c.op}`;
        const s = session.get(key) ?? { n: 0, ms: 0 };
        s.n++;
        s.ms += c.ms;
        session.set(key, s);
        continue;
      }
      sums[cat] = (sums[cat] ?? 0) + c.ms;
      counts[cat] = (counts[cat] ?? 0) + 1;
    }
    const perTask = Object.fromEntries(Object.entries(sums).map(([k, v]) => [k, v / TASKS]));
    const callsPerTask = Object.fromEntries(Object.entries(counts).map(([k, v]) => [k, v / TASKS]));
    const spans = [...r.spans.values()].filter((s) => s.end !== null).map((s) => s.end! - s.start);
    return {
      wallMs: r.wallMs,
      openMs: r.openMs,
      runMs: r.runMs,
      closeMs: r.closeMs,
      perTask,
      targetPerTask: TARGET_STEPS.reduce((a, k) => a + (perTask[k] ?? 0), 0),
      ownPerTask: Object.values(perTask).reduce((a, b) => a + b, 0),
      spanPerTask: lib.mean(spans),
      callsPerTask,
      sessionCalls: [...session.entries()].map(([k, v]) => [k, v.n, v.ms]),
      saves,
      spawnsPerTask,
      sitesPerTask,
      sessionSpawns,
      runTotal,
      spawnSyncPerTask: runSpawns.reduce((a, s) => a + s.syncMs, 0) / TASKS,
      verified: Object.values(r.statuses).filter((s) => s === 'verified').length,
      sandboxed: r.sandboxed,
    };
  } finally {
    await repo.cleanup();
  }
}

async function plainOnce(): Promise<PlainRun> {
  const repo = await lib.makeRepo({ ...lib.sampleFiles(), 'BACKLOG.md': lib.backlogText(FRONT, TASKS) });
  try {
    return await plainGit(repo.root);
  } finally {
    await repo.cleanup();
  }
}

// A warm-up of plain git (page cache), not counted; the engine's first run is one of the three.
if (!lib.quick) await plainOnce();

const plains: PlainRun[] = [];
const fleets: FleetFigures[] = [];
for (let i = 0; i < RUNS; i++) {
  plains.push(await plainOnce());
  fleets.push(await fleetOnce());
}

const med = (xs: number[]) => lib.median(xs);
const plainWall = med(plains.map((p) => p.wallMs));
const fleetWall = med(fleets.map((f) => f.wallMs));
const fleetRun = med(fleets.map((f) => f.runMs));
const plainPerTask = med(plains.map((p) => lib.mean(p.perTask)));
const fleetTargetPerTask = med(fleets.map((f) => f.targetPerTask));
const wallRatio = fleetWall / plainWall;
const taskRatio = fleetTargetPerTask / plainPerTask;
const last = fleets[fleets.length - 1]!;

lib.section(
  `1. Orchestrator overhead vs plain git — ${TASKS} trivial tasks, concurrency ${CONCURRENCY}, zero-latency model, check "true"${last.sandboxed ? ' (sandboxed)' : ''}, review off; median of ${RUNS}`,
);
lib.print(
  lib.table([
    ['', ...plains.map((_, i) => `run ${i + 1}`), 'median'],
    ['plain git wall', ...plains.map((p) => lib.ms(p.wallMs)), lib.ms(plainWall)],
    ['fleet wall (open + run + close)', ...fleets.map((f) => lib.ms(f.wallMs)), lib.ms(fleetWall)],
    ['  of which openSession', ...fleets.map((f) => lib.ms(f.openMs)), lib.ms(med(fleets.map((f) => f.openMs)))],
    ['  of which start → idle', ...fleets.map((f) => lib.ms(f.runMs)), lib.ms(fleetRun)],
    ['  of which close', ...fleets.map((f) => lib.ms(f.closeMs)), lib.ms(med(fleets.map((f) => f.closeMs)))],
    ['tasks verified', ...fleets.map((f) => `${f.verified}/${TASKS}`), ''],
  ]),
);
lib.print('');
lib.print(
  lib.table([
    ['figure', 'value', 'target', ''],
    ['fleet wall / plain git wall', lib.ratio(wallRatio), '≤ 1.30×', lib.verdict(wallRatio <= 1.3)],
    ['fleet start→idle / plain git wall', lib.ratio(fleetRun / plainWall), '(info)', ''],
    ['per task: worktree add + commit + check + state write', lib.ms(fleetTargetPerTask), '', ''],
    ['per task: plain git worktree add + write + add + commit', lib.ms(plainPerTask), '', ''],
    ['per-task ratio', lib.ratio(taskRatio), '≤ 1.50×', lib.verdict(taskRatio <= 1.5)],
  ]),
);
lib.print('');
lib.print(
  "Per-task breakdown of the orchestrator's own time (mean per task, median of runs; calls per task from the last run):",
);
const breakdown: string[][] = [['step', 'ms / task', 'calls / task']];
for (const cat of CATEGORIES) {
  breakdown.push([
    cat,
    lib.ms(med(fleets.map((f) => f.perTask[cat] ?? 0)), 2),
    cat === 'state write'
      ? `${(last.saves / TASKS).toFixed(2)} (${last.saves} saves, fleet-wide)`
      : (last.callsPerTask[cat] ?? 0).toFixed(2),
  ]);
}
for (const cat of Object.keys(last.perTask).filter((c) => !CATEGORIES.includes(c))) {
  breakdown.push([
    cat,
    lib.ms(med(fleets.map((f) => f.perTask[cat] ?? 0)), 2),
    (last.callsPerTask[cat] ?? 0).toFixed(2),
  ]);
}
breakdown.push(['all wrapped calls', lib.ms(med(fleets.map((f) => f.ownPerTask)), 2), '']);
breakdown.push(['task span (running → verified)', lib.ms(med(fleets.map((f) => f.spanPerTask)), 2), '']);
lib.print(lib.table(breakdown));
lib.print('');
lib.print(
  `Plain git per step (mean per task, median of runs); concurrent \`worktree add\` races retried: ${worktreeAddRetries}`,
);
lib.print(
  lib.table([
    ['step', 'ms / task'],
    ...Object.keys(plains[0]!.steps).map((k) => [k, lib.ms(med(plains.map((p) => lib.mean(p.steps[k]!))), 2)]),
  ]),
);
lib.print('');
const perTaskSpawns = Object.values(last.spawnsPerTask).reduce((a, b) => a + b, 0);
lib.print(
  `Processes started per task (last run): ${last.runTotal.toFixed(1)} from start() to idle over ${TASKS} tasks, ${perTaskSpawns.toFixed(1)} of them naming the task, vs 3 by plain git; event loop blocked inside spawn(): ${lib.ms(med(fleets.map((f) => f.spawnSyncPerTask)))} per task vs ${lib.ms(med(plains.map((p) => p.spawnSyncPerTask)))} for plain git`,
);
lib.print(
  lib.table([
    ['process', 'per task'],
    ...Object.entries(last.spawnsPerTask)
      .sort((a, b) => b[1] - a[1])
      .map(([k, v]) => [k, v.toFixed(2)]),
  ]),
);
lib.print('Where they start (the engine frames on the stack, innermost first):');
lib.print(
  lib.table([
    ['process ← call site', 'per task'],
    ...Object.entries(last.sitesPerTask)
      .sort((a, b) => b[1] - a[1])
      .map(([k, v]) => [k, v.toFixed(2)]),
  ]),
);
lib.print(
  `Processes naming no task (the session's, and look-ups by commit id or on stdin): ${Object.entries(last.sessionSpawns)
    .map(([k, v]) => `${k} ×${v}`)
    .join(', ')}`,
);
lib.print('');
lib.print('Session-level calls (not tied to a task), last run:');
lib.print(
  lib.table([['call', 'count', 'total'], ...last.sessionCalls.map(([k, n, t]) => [k, String(n), lib.ms(t, 2)])]),
);

await lib.report([
  {
    figure: `1a fleet wall vs plain git (${TASKS} tasks, c=${CONCURRENCY})`,
    value: `${lib.ms(fleetWall, 0)} vs ${lib.ms(plainWall, 0)} = ${lib.ratio(wallRatio)}`,
    target: '≤ 1.30×',
    pass: wallRatio <= 1.3,
  },
  {
    figure: '1b per task: wt add+commit+check+state vs git',
    value: `${lib.ms(fleetTargetPerTask)} vs ${lib.ms(plainPerTask)} = ${lib.ratio(taskRatio)}`,
    target: '≤ 1.50×',
    pass: taskRatio <= 1.5,
  },
  {
    figure: '1c processes per task (start → idle, all / tasks)',
    value: `${last.runTotal.toFixed(1)} (plain git: 3)`,
    target: '≤ 10',
    pass: last.runTotal <= 10,
  },
]);
