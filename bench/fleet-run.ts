/**
 * One fleet run through the real engine (real git, processes, state file and lock) with the scripted
 * in-process model, the adapters wrapped in timing proxies through `openSession`'s `services` hook.
 */
import { findRepo } from '../src/commands/repo.js';
import { openSession, type Session } from '../src/commands/session.js';
import { taskOf } from '../src/core/roles/marker.js';
import * as lib from './lib.js';

export interface FleetRunOptions {
  root: string;
  /** ms per model call */
  latencyMs: number;
  concurrency?: number;
  /** called just before fleet.start() and just after the fleet is idle (before close) */
  mark?: (at: 'start' | 'idle') => void;
}

export interface FleetRun {
  /** findRepo + openSession + run to idle + close */
  wallMs: number;
  openMs: number;
  /** start() to idle */
  runMs: number;
  closeMs: number;
  timings: lib.Timings;
  model: lib.ScriptedModel;
  /** per task: when it first became running, and when it became verified (performance.now()) */
  spans: Map<string, { start: number; end: number | null }>;
  statuses: Record<string, string>;
  sandboxed: boolean;
}

export async function runFleetOnce(options: FleetRunOptions): Promise<FleetRun> {
  const timings = new lib.Timings();
  const model = new lib.ScriptedModel({ latencyMs: options.latencyMs, taskOf });
  const spans = new Map<string, { start: number; end: number | null }>();
  const t0 = performance.now();
  const repo = await findRepo(options.root);
  const session: Session = await openSession(repo, {
    overrides: options.concurrency === undefined ? {} : { concurrency: options.concurrency },
    autoMerge: false,
    watch: false,
    env: lib.sessionEnv(),
    services: (s) => ({
      ...s,
      model,
      cliModel: model,
      git: lib.timed('git', s.git, timings),
      runner: lib.timed('runner', s.runner, timings),
      store: lib.timed('store', s.store, timings, () => null),
      workspace: lib.timed('workspace', s.workspace, timings),
    }),
  });
  const fleet = session.fleet;
  fleet.events.on('task', ({ task }) => {
    const now = performance.now();
    if (task.status === 'running' && !spans.has(task.id)) spans.set(task.id, { start: now, end: null });
    const span = spans.get(task.id);
    if (span !== undefined && (task.status === 'verified' || task.status === 'failed')) span.end = now;
  });
  const t1 = performance.now();
  options.mark?.('start');
  fleet.start();
  await fleet.whenIdle();
  options.mark?.('idle');
  const t2 = performance.now();
  await session.close();
  const t3 = performance.now();
  // one record at a time: a copy of every task at once would be the run's largest allocation at 20,000 tasks
  const statuses = Object.fromEntries(session.backlog.tasks.map((t) => [t.id, fleet.task(t.id)?.status ?? 'none']));
  return {
    wallMs: t3 - t0,
    openMs: t1 - t0,
    runMs: t2 - t1,
    closeMs: t3 - t2,
    timings,
    model,
    spans,
    statuses,
    sandboxed: fleet.sandboxed,
  };
}
