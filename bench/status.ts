/**
 * 2. `loopfleet status --json` on a 10-task and a 1,000-task backlog, each with a state.json holding
 * every task (written through the real StateStore): the command as a process, and `statusRows` in process.
 */
import { execFile } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { promisify } from 'node:util';
import { LowdbStateStore } from '../src/adapters/store/lowdb-state.js';
import { findRepo } from '../src/commands/repo.js';
import { statusRows } from '../src/commands/status.js';
import type { TaskState } from '../src/domain/types.js';
import { STATE_VERSION, type StateData } from '../src/ports/state-store.js';
import { fakeAttempt, fakeTasks } from '../test/helpers/fake-fleet.js';
import * as lib from './lib.js';

const run = promisify(execFile);
const PROCESS_RUNS = lib.quick ? 1 : 5;
const IN_PROCESS_RUNS = lib.quick ? 1 : 25;
const SIZES = [10, 1000] as const;

/** A task record as a real run leaves it: attempts with a plan, check output, a verdict. */
function withHistory(task: TaskState): TaskState {
  if (task.attempt === 0) return task;
  const attempts = Array.from({ length: task.attempt }, (_, i) =>
    fakeAttempt(i + 1, {
      endedAt: '2026-01-01T00:10:00.000Z',
      plan: `1. Read the module.\n2. Change it.\n3. Run the check.\n${'Details of the plan. '.repeat(40)}`,
      usageByRole: {
        explorer: { input: 20_000, output: 2_000, cacheWrite: 4_000, cacheRead: 30_000 },
        implementer: { input: 40_000, output: 6_000, cacheWrite: 8_000, cacheRead: 90_000 },
      },
      costByRole: { explorer: 0.05, implementer: 0.2 },
      costUsd: 0.25,
      check: {
        command: 'npm test',
        exitCode: i + 1 === task.attempt && task.status !== 'failed' ? 0 : 1,
        timedOut: false,
        outputTail: `${'test output line\n'.repeat(100)}`,
        durationMs: 4200,
      },
      outcome:
        i + 1 === task.attempt && task.status !== 'failed'
          ? task.status === 'running'
            ? 'running'
            : 'verified'
          : 'check-failed',
      reason: i + 1 === task.attempt ? null : 'check `npm test` exited 1',
      commit: '0123456789abcdef0123456789abcdef01234567',
      diffStat: ' src/index.ts | 4 ++--\n 1 file changed, 2 insertions(+), 2 deletions(-)\n',
      evidence: i + 1 === task.attempt ? null : `Outcome: check failed\n\n${'assertion failed\n'.repeat(20)}`,
      fingerprint: i + 1 === task.attempt ? null : 'check-failed:abc',
    }),
  );
  return { ...task, attempts };
}

async function makeStatusRepo(n: number) {
  const repo = await lib.makeRepo({ 'README.md': '# Sample\n', 'BACKLOG.md': lib.backlogText('check: npm test', n) });
  const tasks = fakeTasks(n).map(withHistory);
  const data: StateData = {
    version: STATE_VERSION,
    base: 'main',
    fleet: {
      usage: { input: 1, output: 1, cacheWrite: 0, cacheRead: 0 },
      costUsd: 1,
      elapsedMs: 1000,
      startedAt: '2026-01-01T00:00:00.000Z',
    },
    tasks: Object.fromEntries(tasks.map((t) => [t.id, { ...t, title: `Write file ${t.id.slice(2)}` }])),
  };
  const r = await findRepo(repo.root);
  await new LowdbStateStore(r.statePath).save(data);
  return {
    ...repo,
    repo: r,
    stateBytes: (await stat(r.statePath)).size,
    backlogBytes: (await stat(r.backlogPath)).size,
  };
}

const repos = await Promise.all(SIZES.map(makeStatusRepo));
try {
  const cliTimes: number[][] = SIZES.map(() => []);
  const outBytes: number[] = SIZES.map(() => 0);
  const rowsSeen: number[] = SIZES.map(() => 0);
  // Interleaved so that drift of the machine affects both sizes alike; the first round warms the page cache.
  for (let i = 0; i < PROCESS_RUNS + 1; i++) {
    for (const [k, r] of repos.entries()) {
      const s = performance.now();
      const { stdout } = await run(process.execPath, [lib.CLI, 'status', '--json'], {
        cwd: r.root,
        maxBuffer: 64 * 1024 * 1024,
      });
      const d = performance.now() - s;
      if (i > 0) cliTimes[k]!.push(d);
      outBytes[k] = stdout.length;
      rowsSeen[k] = (JSON.parse(stdout) as unknown[]).length;
    }
  }
  const inTimes: number[][] = SIZES.map(() => []);
  for (let i = 0; i < IN_PROCESS_RUNS + 3; i++) {
    for (const [k, r] of repos.entries()) {
      const s = performance.now();
      const rows = await statusRows(r.repo);
      JSON.stringify(rows, null, 2);
      const d = performance.now() - s;
      if (i >= 3) inTimes[k]!.push(d);
    }
  }
  // Process start alone, for scale: node running an empty script.
  const bare: number[] = [];
  for (let i = 0; i < PROCESS_RUNS; i++) {
    const s = performance.now();
    await run(process.execPath, ['-e', '0']);
    bare.push(performance.now() - s);
  }

  const cli = cliTimes.map((t) => lib.median(t));
  const inp = inTimes.map((t) => lib.median(t));
  const cliRatio = cli[1]! / cli[0]!;
  lib.section(`2. status --json — median of ${PROCESS_RUNS} process runs, ${IN_PROCESS_RUNS} in-process runs`);
  lib.print(
    lib.table([
      [
        'tasks',
        'BACKLOG.md',
        'state.json',
        'rows',
        'output',
        'node dist/cli.js status --json',
        'p90',
        'statusRows() in process',
      ],
      ...SIZES.map((n, k) => [
        String(n),
        `${(repos[k]!.backlogBytes / 1024).toFixed(0)} KB`,
        `${(repos[k]!.stateBytes / 1024).toFixed(0)} KB`,
        String(rowsSeen[k]),
        `${(outBytes[k]! / 1024).toFixed(0)} KB`,
        lib.ms(cli[k]!),
        lib.ms(lib.percentile(cliTimes[k]!, 90)),
        lib.ms(inp[k]!, 2),
      ]),
    ]),
  );
  lib.print(`(node -e 0 on this machine: ${lib.ms(lib.median(bare))})`);
  lib.print('');
  lib.print(
    lib.table([
      ['figure', 'value', 'target', ''],
      ['status --json 1,000 / 10 tasks', lib.ratio(cliRatio), '≤ 1.20×', lib.verdict(cliRatio <= 1.2)],
      ['statusRows 1,000 / 10 tasks (in process)', lib.ratio(inp[1]! / inp[0]!), '(info)', ''],
    ]),
  );
  await lib.report([
    {
      figure: '2 status --json 1,000 vs 10 tasks',
      value: `${lib.ms(cli[1]!, 0)} vs ${lib.ms(cli[0]!, 0)} = ${lib.ratio(cliRatio)}`,
      target: '≤ 1.20×',
      pass: cliRatio <= 1.2,
    },
  ]);
} finally {
  await Promise.all(repos.map((r) => r.cleanup()));
}
