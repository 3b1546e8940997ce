/**
 * 14. The real interactive view in a real terminal while a real fleet works: the built CLI started in tmux
 * (120×40) on a repository of 40 and of 20,000 trivial tasks, the scripted demo model over HTTP answering
 * every call (so attempts run, check and land while keys are pressed). Measured from outside, as a person
 * sees it: the first frame (the task list on the pane) from the moment tmux is asked to start the process,
 * and j/k → the selection marker on another task in `capture-pane`, median and p90.
 *
 * The screen is read by polling `tmux capture-pane` back to back; one read takes a few milliseconds on a
 * quiet machine (more under load), which is the resolution of every figure here.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startModelServer } from '../src/demo/model-server.js';
import { demoScript } from '../src/demo/scripts.js';
import { Terminal } from '../test/helpers/tmux-terminal.js';
import * as lib from './lib.js';

const SIZES = lib.quick ? [40] : [40, 20_000];
const PRESSES = lib.quick ? 4 : 30;
/** tasks the model has a script for: enough to keep the fleet busy through every press */
const SCRIPTED = lib.quick ? 40 : 400;
const KEY = 'bench-tui-live-key';
/** how long one wait may take before the benchmark gives up on it */
const WAIT_MS = 120_000;

/** The id on the selected row (`› T-7 …`), or null when no row is selected on the screen. */
function selected(screen: string): string | null {
  return /^› (\S+) /m.exec(screen)?.[1] ?? null;
}

/** Reads the pane until `test` holds; resolves with the time it first held. */
async function until(term: Terminal, test: (screen: string) => boolean, what: string): Promise<number> {
  const deadline = performance.now() + WAIT_MS;
  for (;;) {
    const screen = await term.screen();
    const at = performance.now();
    if (test(screen)) return at;
    if (at > deadline) throw new Error(`tui-live: no ${what} within ${WAIT_MS} ms; the screen was:\n${screen}`);
  }
}

interface LiveResult {
  tasks: number;
  firstFrameMs: number;
  keyMs: number[];
  /** one `capture-pane` round trip, median: the resolution of the other figures */
  readMs: number;
  /** the model was called again during the presses: the fleet was working */
  working: boolean;
}

async function once(n: number): Promise<LiveResult> {
  const ids = Array.from({ length: SCRIPTED }, (_, i) => `T-${i + 1}`);
  const model = await startModelServer({
    apiKeys: [KEY],
    script: demoScript(
      ids.map((id) => ({ taskId: id, kind: 'pass' as const, edits: [{ path: `${id}.txt`, content: `${id}\n` }] })),
      { chunkDelayMs: 5, delayMs: 20 },
    ),
  });
  const repo = await lib.makeRepo({
    ...lib.sampleFiles(),
    'BACKLOG.md': lib.backlogText('concurrency: 2\ncheck: "true"\nreview: false', n),
  });
  const scratch = await mkdtemp(join(tmpdir(), 'loopfleet-bench-tui-live-'));
  const term = new Terminal({ columns: 120, rows: 40 });
  try {
    const t0 = performance.now();
    await term.start(repo.root, { ANTHROPIC_BASE_URL: model.url, ANTHROPIC_API_KEY: KEY }, join(scratch, 'exit-code'));
    const first = await until(term, (s) => selected(s) !== null, 'task list');
    // The fleet is at work once the model has had its first call.
    await until(term, () => model.requests.length > 0, 'model call');
    const reads: number[] = [];
    for (let i = 0; i < 10; i++) {
      const t = performance.now();
      await term.screen();
      reads.push(performance.now() - t);
    }
    const calls = model.requests.length;
    const keyMs: number[] = [];
    for (let i = 0; i < PRESSES; i++) {
      const before = selected(await term.screen());
      const key = i % 2 === 0 ? 'j' : 'k';
      const t = performance.now();
      await term.keys(key);
      const moved = await until(term, (s) => selected(s) !== null && selected(s) !== before, `cursor after ${key}`);
      keyMs.push(moved - t);
    }
    const working = model.requests.length > calls;
    await term.keys('q');
    await term.waitForExit(60_000).catch((error: unknown) => {
      // A run still stopping its attempts may take longer than the wait; the session is killed below.
      lib.print(`tui-live: ${(error as Error).message.split('\n')[0]}`);
    });
    return { tasks: n, firstFrameMs: first - t0, keyMs, readMs: lib.median(reads), working };
  } finally {
    await term.kill();
    await model.close();
    await repo.cleanup();
    await rm(scratch, { recursive: true, force: true });
  }
}

const results: LiveResult[] = [];
for (const n of SIZES) results.push(await once(n));

lib.section('14. The interactive view in tmux (120×40) while a real fleet works (concurrency 2, scripted model)');
lib.print(
  lib.table([
    ['tasks', 'first frame', 'j/k → cursor moved, median', 'p90', 'max', 'one screen read', 'fleet working'],
    ...results.map((r) => [
      String(r.tasks),
      lib.ms(r.firstFrameMs, 0),
      lib.ms(lib.median(r.keyMs)),
      lib.ms(lib.percentile(r.keyMs, 90)),
      lib.ms(Math.max(...r.keyMs)),
      lib.ms(r.readMs),
      r.working ? 'yes' : 'no',
    ]),
  ]),
);
await lib.report(
  results.flatMap((r) => [
    {
      figure: `14 TUI in tmux, fleet running, ${r.tasks} tasks: first frame`,
      value: lib.ms(r.firstFrameMs, 0),
      target: '≤ 500 ms',
      pass: lib.quick ? null : r.firstFrameMs <= 500,
    },
    {
      figure: `14 TUI in tmux, fleet running, ${r.tasks} tasks: j/k median (p90)`,
      value: `${lib.ms(lib.median(r.keyMs))} (${lib.ms(lib.percentile(r.keyMs, 90))})`,
      target: '≤ 50 ms',
      pass: lib.quick ? null : lib.median(r.keyMs) <= 50 && r.working,
    },
  ]),
);
