/**
 * 11. Opening a session: `openSession` (backlog parse, git config scan, base, services, the sandbox
 * self-test, the lock, state, prune) and its close, on a backlog of 10, 2,000 and 20,000 trivial tasks,
 * each open in a Node process of its own as a run starts (the engine's modules loaded before the clock
 * starts): with no state yet (the first run of a night), and with the state an earlier run left, once with
 * the sandbox self-test run (no pass kept: a new machine, an upgraded bubblewrap) and once with its pass
 * kept in the cache (`$XDG_CACHE_HOME/loopfleet`, a scratch folder here).
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findRepo } from '../src/commands/repo.js';
import { openSession } from '../src/commands/session.js';
import { SELF_TEST_CACHE_FILE } from '../src/adapters/sandbox/selftest-cache.js';
import * as lib from './lib.js';

const SIZES = lib.quick ? [10, 50] : [10, 2000, 20000];
const RUNS = lib.quick ? 1 : 3;
const FRONT = 'concurrency: 4\ncheck: "true"\nreview: false';

interface Opened {
  openMs: number;
  closeMs: number;
}

/** In the child: one open and close of the session of `root`. */
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

/** One open in a process of its own, with `cacheHome` as its cache. */
function inProcess(root: string, cacheHome: string): Promise<Opened> {
  return new Promise((resolve, reject) => {
    const c = spawn(process.execPath, lib.benchArgs(fileURLToPath(import.meta.url), '--child', root), {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, XDG_CACHE_HOME: cacheHome },
    });
    let text = '';
    c.stdout.on('data', (d: Buffer) => (text += d.toString()));
    c.on('exit', (code) =>
      code === 0
        ? resolve(JSON.parse(text.trim().split('\n').at(-1)!) as Opened)
        : reject(new Error(`session-open child: exit ${code}`)),
    );
  });
}

if (process.argv[2] === '--child') {
  process.stdout.write(`${JSON.stringify(await openClose(process.argv[3]!))}\n`);
} else {
  const cacheHome = await mkdtemp(join(tmpdir(), 'loopfleet-bench-cache-'));
  const forget = () => rm(join(cacheHome, 'loopfleet', SELF_TEST_CACHE_FILE), { force: true });
  const rows: string[][] = [
    ['tasks', 'open (no state)', 'open, self-test run', 'open, self-test kept', 'close (with state)'],
  ];
  const kept = new Map<number, number>();
  const tested = new Map<number, number>();
  try {
    for (const n of SIZES) {
      const repo = await lib.makeRepo({ ...lib.sampleFiles(), 'BACKLOG.md': lib.backlogText(FRONT, n) });
      try {
        const fresh: Opened[] = [];
        const withTest: Opened[] = [];
        const withPass: Opened[] = [];
        for (let i = 0; i < RUNS; i++) {
          // Each fresh open starts from no state (its self-test pass kept); the ones after it find its state.
          await rm(join(repo.root, '.loop-worktrees', 'state.json'), { force: true });
          fresh.push(await inProcess(repo.root, cacheHome));
          await forget();
          withTest.push(await inProcess(repo.root, cacheHome));
          withPass.push(await inProcess(repo.root, cacheHome));
        }
        const median = (list: Opened[], key: keyof Opened) => lib.median(list.map((o) => o[key]));
        kept.set(n, median(withPass, 'openMs'));
        tested.set(n, median(withTest, 'openMs'));
        rows.push([
          String(n),
          lib.ms(median(fresh, 'openMs'), 0),
          lib.ms(tested.get(n)!, 0),
          lib.ms(kept.get(n)!, 0),
          lib.ms(median(withPass, 'closeMs'), 0),
        ]);
      } finally {
        await repo.cleanup();
      }
    }
  } finally {
    await rm(cacheHome, { recursive: true, force: true });
  }

  lib.section(`11. Session open and close, each open in a process of its own — median of ${RUNS}`);
  lib.print(lib.table(rows));

  const largest = SIZES[SIZES.length - 1]!;
  const worst = Math.max(...kept.values());
  const list = (m: Map<number, number>) => SIZES.map((n) => lib.ms(m.get(n)!, 0)).join(' / ');
  await lib.report([
    {
      figure: `11 session open, ${SIZES.join(' / ')} tasks (with state, self-test kept)`,
      value: list(kept),
      target: '≤ 1 s',
      pass: worst <= 1000,
    },
    {
      figure: `11a the same with the self-test run`,
      value: list(tested),
      target: '(info)',
      pass: null,
    },
    {
      figure: `11b session open ${largest} vs ${SIZES[0]} tasks`,
      value: lib.ratio(kept.get(largest)! / kept.get(SIZES[0]!)!),
      target: '(info)',
      pass: null,
    },
  ]);
}
