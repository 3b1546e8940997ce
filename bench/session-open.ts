/**
 * 11. Opening a session: `openSession` (backlog parse, git config scan, base, services, the sandbox
 * self-test, the lock, state, prune) and its close, in process, on a backlog of 10, 2,000 and 20,000 trivial
 * tasks with no state yet (the first run of a night), and again with the state that first run left; the
 * sandbox self-test alone beside it. A warm-up open first: the figures leave out Node loading the engine.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { findRepo } from '../src/commands/repo.js';
import { openSession } from '../src/commands/session.js';
import * as lib from './lib.js';

const SIZES = lib.quick ? [10, 50] : [10, 2000, 20000];
const RUNS = lib.quick ? 1 : 3;
const FRONT = 'concurrency: 4\ncheck: "true"\nreview: false';

interface Opened {
  openMs: number;
  closeMs: number;
}

async function openClose(root: string): Promise<Opened> {
  const t0 = performance.now();
  const session = await openSession(await findRepo(root), {
    overrides: {},
    autoMerge: false,
    watch: false,
    env: lib.sessionEnv(),
  });
  const t1 = performance.now();
  await session.close();
  return { openMs: t1 - t0, closeMs: performance.now() - t1 };
}

const rows: string[][] = [['tasks', 'open (no state)', 'open (with state)', 'close (with state)']];
const opens = new Map<number, number>();
for (const n of SIZES) {
  const repo = await lib.makeRepo({ ...lib.sampleFiles(), 'BACKLOG.md': lib.backlogText(FRONT, n) });
  try {
    if (n === SIZES[0] && !lib.quick) await openClose(repo.root); // warm-up: modules loaded, page cache filled
    const fresh: Opened[] = [];
    const kept: Opened[] = [];
    for (let i = 0; i < RUNS; i++) {
      // Each fresh open starts from no state; the ones after it find the state it left.
      await rm(join(repo.root, '.loop-worktrees', 'state.json'), { force: true });
      fresh.push(await openClose(repo.root));
      kept.push(await openClose(repo.root));
    }
    const open = lib.median(kept.map((o) => o.openMs));
    opens.set(n, open);
    rows.push([
      String(n),
      lib.ms(lib.median(fresh.map((o) => o.openMs)), 0),
      lib.ms(open, 0),
      lib.ms(lib.median(kept.map((o) => o.closeMs)), 0),
    ]);
  } finally {
    await repo.cleanup();
  }
}

lib.section(`11. Session open and close, in process — median of ${RUNS}`);
lib.print(lib.table(rows));

const largest = SIZES[SIZES.length - 1]!;
const worst = Math.max(...opens.values());
await lib.report([
  {
    figure: `11 session open, ${SIZES.join(' / ')} tasks (with state)`,
    value: SIZES.map((n) => lib.ms(opens.get(n)!, 0)).join(' / '),
    target: '≤ 1 s',
    pass: worst <= 1000,
  },
  {
    figure: `11b session open ${largest} vs ${SIZES[0]} tasks`,
    value: lib.ratio(opens.get(largest)! / opens.get(SIZES[0]!)!),
    target: '(info)',
    pass: null,
  },
]);
