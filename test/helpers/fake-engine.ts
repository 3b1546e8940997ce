import { Fleet, type FleetServices } from '../../src/core/fleet/fleet.js';
import { FleetState } from '../../src/core/task/state.js';
import { parseBacklog } from '../../src/core/backlog/parse.js';
import { ROLE_DEFAULTS, type RoleDefinition } from '../../src/core/roles/definitions.js';
import { ROLES, type Backlog, type Role } from '../../src/domain/types.js';
import type { Clock } from '../../src/ports/clock.js';
import type { FleetEvents } from '../../src/core/task/events.js';
import { FakeGit } from './fake-git.js';
import { FakeModel, type FakeScript } from './fake-model.js';
import { FakeRunner, type FakeRun } from './fake-runner.js';
import { FakeScratchTrees, FakeTrackedFiles, FakeBaselineStore } from './fake-verification.js';
import { FakeWorkspace } from './fake-workspace.js';
import { FakeStateStore } from './fake-state-store.js';
import { backlog as backlogText } from './fleet-harness.js';
import type { RunOptions } from '../../src/ports/process.js';
import type { Lessons } from '../../src/core/roles/lessons.js';
import { fakeLessons } from './fake-lessons.js';

export const ROOT = '/repo';

/** A clock the test moves by hand (gate timers still run on real time; keep time limits small). */
export class ManualClock implements Clock {
  constructor(public t = Date.parse('2026-01-01T00:00:00Z')) {}
  now(): number {
    return this.t;
  }
  advance(ms: number): void {
    this.t += ms;
  }
}

function roles(): Record<Role, RoleDefinition> {
  return Object.fromEntries(
    ROLES.map((role) => [
      role,
      { role, name: role, description: role, ...ROLE_DEFAULTS[role], prompt: `You are the ${role}.`, source: '(test)' },
    ]),
  ) as Record<Role, RoleDefinition>;
}

export interface FakeEngine {
  fleet: Fleet;
  git: FakeGit;
  workspace: FakeWorkspace;
  runner: FakeRunner;
  model: FakeModel;
  store: FakeStateStore;
  state: FleetState;
  backlog: Backlog;
  /** ids ticked `[x]` by merges */
  ticked: string[];
  notified: Array<Record<string, unknown>>;
  /** every event, in order, as `name` and payload */
  seen: Array<{ name: keyof FleetEvents; payload: unknown }>;
}

export interface FakeEngineOptions {
  script?: FakeScript;
  run?: (command: string, options: RunOptions) => FakeRun;
  autoMerge?: boolean;
  clock?: Clock;
  /** reuse the state (and git) of an earlier engine: a restart */
  store?: FakeStateStore;
  git?: FakeGit;
  notify?: boolean;
  /** --no-wait: a rate or usage limit fails the task */
  noWait?: boolean;
  lessons?: Lessons;
}

/**
 * A whole fleet on fake ports: an in-memory git and workspace, scripted commands and model, state in memory.
 * No process, no file: an engine test runs in milliseconds.
 */
export async function fakeEngine(front: string, items: string, options: FakeEngineOptions = {}): Promise<FakeEngine> {
  const git = options.git ?? new FakeGit(ROOT);
  const workspace = new FakeWorkspace(git);
  const runner = new FakeRunner(options.run);
  const model = new FakeModel(options.script ?? (() => ({})), async (workdir, path, content) => {
    git.files(workdir).set(path, content);
  });
  const store = options.store ?? new FakeStateStore();
  const clock = options.clock ?? { now: () => Date.now() };
  const ticked: string[] = [];
  const notified: Array<Record<string, unknown>> = [];
  const services: FleetServices = {
    git,
    runner,
    model,
    cliModel: model,
    workspace,
    roles: roles(),
    sandboxed: true,
    shellAllowed: false,
    baselines: new FakeBaselineStore(),
    scratch: new FakeScratchTrees(git),
    tracked: new FakeTrackedFiles(git),
    lessons: options.lessons ?? fakeLessons(),
    store,
    clock,
    tickDone: async (id) => {
      ticked.push(id);
      return true;
    },
    notify: async (_command, payload) => {
      notified.push(payload);
    },
  };
  const front2 = options.notify ? `${front}\nnotify: cat` : front;
  const backlog = parseBacklog(backlogText(front2, items), `${ROOT}/BACKLOG.md`).backlog;
  const fleet = new Fleet(services, {
    repoRoot: ROOT,
    backlog,
    base: 'main',
    autoMerge: options.autoMerge ?? false,
    parentEnv: { PATH: '/usr/bin' },
    noWait: options.noWait ?? false,
  });
  const seen: FakeEngine['seen'] = [];
  const names: Array<keyof FleetEvents> = [
    'task',
    'agent-text',
    'tool-call',
    'usage',
    'phase-output',
    'gate',
    'backlog',
    'fleet',
    'log',
  ];
  for (const name of names) fleet.events.on(name, ((payload: unknown) => void seen.push({ name, payload })) as never);
  const state = await FleetState.open(store, clock);
  await fleet.open(state);
  return { fleet, git, workspace, runner, model, store, state, backlog, ticked, notified, seen };
}

/** Start, wait for idle, stop: one run to the end. */
export async function runToIdle(engine: FakeEngine): Promise<FakeEngine> {
  engine.fleet.start();
  await engine.fleet.whenIdle();
  await engine.fleet.stop();
  return engine;
}

export { backlogText };
