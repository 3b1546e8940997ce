/**
 * 9. The coordinator's check of a worker's claim: trivial tasks through one worker (the in-memory queue in
 * this process, the real pipeline on both sides, a real bare remote, bubblewrap), once with the coordinator
 * checking every `verified` it is sent — the guard and the checks with their baseline, in its own sandbox,
 * on the commit it fetched — and once trusting the claim as it did before that check existed. Per task:
 * the wall time of the run, the time of the coordinator's check itself, and the processes the coordinator
 * starts (those run in its repository or its worktrees), by command.
 */
// First: a module runs after those imported before it, and spawn-count.js must replace
// child_process.spawn before the engine (simple-git, execa) is loaded.
import * as sc from './spawn-count.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { emptyResult } from '../src/core/attempt/commit-check.js';
import { Pipeline } from '../src/core/attempt/pipeline.js';
import { RemoteExecutor } from '../src/core/executor/remote-executor.js';
import type { CommitChecker } from '../src/core/executor/claim-check.js';
import type { FleetServices } from '../src/core/fleet/fleet.js';
import { FakeAttemptQueue } from '../test/helpers/fake-attempt-queue.js';
import { openFleet } from '../test/helpers/fleet-harness.js';
import { bareRemote, workerMachine } from '../test/helpers/remote-harness.js';
import type { FakeScript } from '../test/helpers/fake-model.js';
import * as lib from './lib.js';

const TASKS = lib.quick ? 2 : 12;
const CHECK = 'sh check.sh';
const CHECK_SH = `ls T-*.txt >/dev/null && printf '# tests 1\\n# pass 1\\n# fail 0\\n'\n`;
const write: FakeScript = ({ role, task }) =>
  role === 'implementer' ? { edits: { [`${task}.txt`]: `${task}\n` } } : {};

interface Result {
  checked: boolean;
  verified: number;
  wallMs: number;
  /** the coordinator's checks, summed */
  checkMs: number;
  /** processes started in the coordinator's repository and worktrees, by command */
  spawned: Map<string, number>;
  /** of those, commands run in the sandbox (bubblewrap, under the pids cgroup's `sh` when there is one) */
  sandboxed: number;
}

/** The claim as it was taken before the coordinator checked it: verified, on the branch's tip. */
function trusting(services: FleetServices): CommitChecker {
  return async (input) => ({
    ...emptyResult(),
    outcome: 'verified',
    commit: await services.git.revParse(`refs/heads/${input.branch}`),
  });
}

async function once(checked: boolean): Promise<Result> {
  const cleanups: Array<() => Promise<void>> = [];
  const scratch = await mkdtemp(join(tmpdir(), 'loopfleet-bench-claims-'));
  cleanups.push(() => rm(scratch, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 }));
  const repo = await lib.makeRepo({
    ...lib.sampleFiles(),
    'check.sh': CHECK_SH,
    'BACKLOG.md': lib.backlogText(`check: ${CHECK}\nreview: false\nconcurrency: 2`, TASKS),
  });
  cleanups.push(repo.cleanup);
  let checkMs = 0;
  try {
    const remote = await bareRemote(cleanups, repo.root);
    const queue = new FakeAttemptQueue();
    const worker = await workerMachine(cleanups, queue, remote, write, 'w1', 2);
    worker.start();
    const services = (s: FleetServices): FleetServices => {
      const own = new Pipeline(s);
      const check: CommitChecker = checked
        ? async (input, made) => {
            const t0 = performance.now();
            const result = await own.checkCommit(input, made);
            checkMs += performance.now() - t0;
            return result;
          }
        : trusting(s);
      const executor = new RemoteExecutor({
        queue,
        check,
        git: s.git,
        workspace: s.workspace,
        remote: 'origin',
        remoteUrl: remote,
        roles: s.roles,
        warn: () => undefined,
      });
      return { ...s, executor };
    };
    const h = await openFleet(repo.root, write, { services });
    const from = sc.spawns.length;
    const t0 = performance.now();
    h.fleet.start();
    await h.fleet.whenIdle();
    const wallMs = performance.now() - t0;
    await h.session.close();
    const spawned = new Map<string, number>();
    let sandboxed = 0;
    for (const s of sc.spawns.slice(from)) {
      if (s.cwd === null || !s.cwd.startsWith(repo.root)) continue;
      spawned.set(s.command, (spawned.get(s.command) ?? 0) + 1);
      if (s.command === 'bwrap' || s.args.some((a) => a.endsWith('/bwrap'))) sandboxed++;
    }
    const verified = h.fleet.tasks().filter((t) => t.status === 'verified').length;
    return { checked, verified, wallMs, checkMs, spawned, sandboxed };
  } finally {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
  }
}

function total(m: Map<string, number>): number {
  return [...m.values()].reduce((a, b) => a + b, 0);
}

lib.section(`9. the coordinator's check of workers' claims: ${TASKS} trivial tasks on one worker, with and without it`);
const without = await once(false);
const withCheck = await once(true);
const commands = [...new Set([...without.spawned.keys(), ...withCheck.spawned.keys()])].sort();
lib.print(
  lib.table([
    ['coordinator', 'verified', 'wall / task', 'its check / task', 'processes / task', 'sandboxed', ...commands],
    ...[without, withCheck].map((r) => [
      r.checked ? 'checks each claim' : 'trusts claims',
      `${r.verified}/${TASKS}`,
      lib.ms(r.wallMs / TASKS, 0),
      r.checked ? lib.ms(r.checkMs / TASKS, 0) : '—',
      (total(r.spawned) / TASKS).toFixed(1),
      (r.sandboxed / TASKS).toFixed(1),
      ...commands.map((c) => ((r.spawned.get(c) ?? 0) / TASKS).toFixed(1)),
    ]),
  ]),
);
const extra = (total(withCheck.spawned) - total(without.spawned)) / TASKS;
const extraSandboxed = (withCheck.sandboxed - without.sandboxed) / TASKS;
await lib.report([
  {
    figure: `9 coordinator check of a claim, per task (${TASKS} tasks)`,
    value: `${lib.ms(withCheck.checkMs / TASKS, 0)}; wall per task ${lib.ms(without.wallMs / TASKS, 0)} → ${lib.ms(withCheck.wallMs / TASKS, 0)}`,
    target: '—',
    pass: null,
  },
  {
    figure: '9 coordinator processes per task, trusting → checking',
    value: `${(total(without.spawned) / TASKS).toFixed(1)} → ${(total(withCheck.spawned) / TASKS).toFixed(1)} (+${extra.toFixed(1)}, ${extraSandboxed.toFixed(1)} sandboxed)`,
    target: '—',
    pass: null,
  },
  {
    figure: '9 every task verified, both ways',
    value: `${without.verified}/${TASKS}, ${withCheck.verified}/${TASKS}`,
    target: `${TASKS}/${TASKS}`,
    pass: without.verified === TASKS && withCheck.verified === TASKS,
  },
]);
