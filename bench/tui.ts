/**
 * 3. TUI first frame and keypress-to-frame latency: `renderTui` over a FakeFleet of 10 and of 1,000 tasks,
 * into a fake terminal. Each size runs in its own process (`node bench/tui.ts <n>`), so both first frames
 * are equally cold; without an argument this file runs both and prints the table.
 */
import { EventEmitter } from 'node:events';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { renderTui } from '../src/ui/render-tui.js';
import { FakeFleet, fakeTasks } from '../test/helpers/fake-fleet.js';
import { FakeStdin } from '../test/helpers/fake-terminal.js';
import * as lib from './lib.js';

/** 40 tasks fill the list of a 40-row terminal, as 1,000 do: it separates frame size from backlog size */
const SIZES = [10, 40, 1000] as const;
const PRESSES = lib.quick ? 2 : 20;
/** the backlog size of the scale case, measured while a fleet runs */
const BUSY_TASKS = lib.quick ? 200 : 20_000;
const WARMUP_PRESSES = 2;
/** fresh processes for 10 and 1,000 tasks; the 40-task reference gets one */
const PROCESSES = lib.quick ? 1 : 2;
/** further mounts in each process, for a warm first frame */
const WARM_MOUNTS = lib.quick ? 1 : 2;
const COLUMNS = 120;
const ROWS = 40;
/** between keypresses: longer than Ink's 33 ms render throttle, so every press renders on the leading edge */
const GAP_MS = 80;

interface SizeResult {
  tasks: number;
  /** the first mount in a fresh process */
  coldFirstFrameMs: number;
  coldRenderMs: number;
  /** later mounts in the same process */
  warmFirstFrameMs: number[];
  keyToFrameMs: number[];
  renderMs: number[];
  frameBytes: number;
  missed: number;
}

/** A frame holds task rows; escape sequences alone (alternate screen, cursor) are not one. */
const FRAME = /T-\d/;

/** A terminal for Ink: a TTY-like stdout that notes when something is written, a stdin to type into. */
class FakeStdout extends EventEmitter {
  columns = COLUMNS;
  rows = ROWS;
  isTTY = true;
  writes = 0;
  lastWriteAt = 0;
  bytes = 0;
  #waiters: Array<(t: number) => void> = [];
  write = (data: string, ...rest: unknown[]): boolean => {
    const now = performance.now();
    this.writes++;
    this.lastWriteAt = now;
    if (FRAME.test(data)) {
      this.bytes = data.length;
      const waiters = this.#waiters;
      this.#waiters = [];
      for (const w of waiters) w(now);
    }
    const callback = rest.find((r) => typeof r === 'function') as (() => void) | undefined;
    callback?.();
    return true;
  };
  /** resolves with the time the next frame is written, or NaN after `timeoutMs` */
  nextFrame(timeoutMs: number): Promise<number> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(NaN), timeoutMs);
      this.#waiters.push((t) => {
        clearTimeout(timer);
        resolve(t);
      });
    });
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Mounted {
  firstFrameMs: number;
  firstRenderMs: number;
  frameBytes: number;
  stdout: FakeStdout;
  stdin: FakeStdin;
  renders: Array<{ at: number; renderTime: number }>;
  done: Promise<void>;
}

/**
 * A fleet at work: every 5 ms one running task's record changes, it reports usage and streams a line of
 * text — about the event rate of a dozen agents streaming at once.
 */
function busy(fleet: FakeFleet): () => void {
  const running = fleet
    .tasks()
    .filter((t) => t.status === 'running')
    .map((t) => t.id)
    .slice(0, 12);
  let i = 0;
  const timer = setInterval(() => {
    const id = running[i++ % running.length]!;
    fleet.update(id, { elapsedMs: i * 5 });
    fleet.usage(id, { input: 120, output: 30, cacheWrite: 0, cacheRead: 0 }, 0.001);
    fleet.agentText(id, `step ${i}\n`);
  }, 5);
  return () => clearInterval(timer);
}

/** renderTui over a fresh FakeFleet of `n` tasks; resolves once the first frame is written. */
async function mount(n: number, working = false): Promise<Mounted> {
  const fleet = new FakeFleet({ tasks: fakeTasks(n) });
  const stop = working ? busy(fleet) : () => undefined;
  const stdout = new FakeStdout();
  const stdin = new FakeStdin();
  const renders: Array<{ at: number; renderTime: number }> = [];
  const first = stdout.nextFrame(10_000);
  const t0 = performance.now();
  const done = renderTui(fleet, {
    color: true,
    stdout: stdout as unknown as NodeJS.WriteStream,
    stdin: stdin as unknown as NodeJS.ReadStream,
    patchConsole: false,
    bell: false,
    onEditBacklog: async () => {},
    onRender: ({ renderTime }) => renders.push({ at: performance.now(), renderTime }),
  });
  const firstAt = await first;
  return {
    firstFrameMs: firstAt - t0,
    firstRenderMs: renders[0]?.renderTime ?? NaN,
    frameBytes: stdout.bytes,
    stdout,
    stdin,
    renders,
    done: done.finally(stop),
  };
}

async function measure(n: number, presses: number, warmMounts: number, working = false): Promise<SizeResult> {
  const cold = await mount(n, working);
  await sleep(200);
  const { stdout, stdin, renders } = cold;
  const keyToFrame: number[] = [];
  const renderMs: number[] = [];
  let missed = 0;
  // `j` and `k` in turn: every press moves the selection, also in a 10-task list.
  for (let i = 0; i < WARMUP_PRESSES + presses; i++) {
    const before = renders.length;
    const next = stdout.nextFrame(1000);
    const t = performance.now();
    stdin.type(i % 2 === 0 ? 'j' : 'k');
    const at = await next;
    if (i >= WARMUP_PRESSES) {
      if (Number.isNaN(at)) missed++;
      else keyToFrame.push(at - t);
      const r = renders[before];
      if (r !== undefined) renderMs.push(r.renderTime);
    }
    await sleep(GAP_MS);
  }
  stdin.type('q');
  await cold.done;
  const warm: number[] = [];
  for (let i = 0; i < warmMounts; i++) {
    const m = await mount(n, working);
    warm.push(m.firstFrameMs);
    await sleep(50);
    m.stdin.type('q');
    await m.done;
  }
  return {
    tasks: n,
    coldFirstFrameMs: cold.firstFrameMs,
    coldRenderMs: cold.firstRenderMs,
    warmFirstFrameMs: warm,
    keyToFrameMs: keyToFrame,
    renderMs,
    frameBytes: cold.frameBytes,
    missed,
  };
}

const arg = process.argv[2];
if (arg !== undefined) {
  const result = await measure(
    Number(arg),
    Number(process.argv[3] ?? PRESSES),
    Number(process.argv[4] ?? WARM_MOUNTS),
    process.argv[5] === 'busy',
  );
  process.stdout.write(JSON.stringify(result));
} else {
  const run = promisify(execFile);
  const self = fileURLToPath(import.meta.url);
  const perProcess = Math.ceil(PRESSES / PROCESSES);
  const parts: SizeResult[][] = SIZES.map(() => []);
  // Sizes interleaved, several fresh processes each: this machine's noise hits both sizes alike.
  for (let round = 0; round < PROCESSES; round++) {
    for (const [k, n] of SIZES.entries()) {
      if (n === 40 && round > 0) continue;
      const { stdout } = await run(
        process.execPath,
        lib.benchArgs(self, String(n), String(perProcess), String(WARM_MOUNTS)),
        {
          maxBuffer: 16 * 1024 * 1024,
        },
      );
      parts[k]!.push(JSON.parse(stdout) as SizeResult);
    }
  }
  const rows = parts.map((ps, k) => ({
    tasks: SIZES[k]!,
    processes: ps.length,
    cold: ps.map((p) => p.coldFirstFrameMs),
    coldRender: ps.map((p) => p.coldRenderMs),
    warm: ps.flatMap((p) => p.warmFirstFrameMs),
    key: ps.flatMap((p) => p.keyToFrameMs),
    render: ps.flatMap((p) => p.renderMs),
    missed: ps.reduce((a, p) => a + p.missed, 0),
    frameBytes: ps[0]!.frameBytes,
  }));
  const cold = rows.map((r) => lib.median(r.cold));
  const warm = rows.map((r) => lib.median(r.warm));
  const key = rows.map((r) => lib.median(r.key));
  const [small, screen, large] = [0, 1, 2];
  const coldRatio = cold[large]! / cold[small]!;
  const keyRatio = key[large]! / key[small]!;
  lib.section(
    `3. TUI — renderTui over a FakeFleet, ${COLUMNS}×${ROWS} fake terminal; per fresh process: a cold first frame, ${WARM_MOUNTS} warm ` +
      `mounts, ${perProcess} keypresses (\`j\` and \`k\` in turn, ${GAP_MS} ms apart); medians`,
  );
  lib.print(
    lib.table([
      [
        'tasks',
        'processes',
        'first frame cold',
        'its Ink render',
        'first frame warm',
        'j/k → frame',
        'p90',
        'Ink render of it',
        'no frame',
        'frame',
      ],
      ...rows.map((r, k) => [
        String(r.tasks),
        String(r.processes),
        lib.ms(cold[k]!),
        lib.ms(lib.median(r.coldRender), 2),
        lib.ms(warm[k]!),
        lib.ms(key[k]!, 2),
        lib.ms(lib.percentile(r.key, 90), 2),
        lib.ms(lib.median(r.render), 2),
        String(r.missed),
        `${(r.frameBytes / 1024).toFixed(1)} KB`,
      ]),
    ]),
  );
  lib.print('');
  lib.print(
    lib.table([
      ['figure', 'value', 'target', ''],
      ['first frame (cold) 1,000 / 10 tasks', lib.ratio(coldRatio), '≤ 1.20×', lib.verdict(coldRatio <= 1.2)],
      ['j/k → frame 1,000 / 10 tasks', lib.ratio(keyRatio), '≤ 1.20×', lib.verdict(keyRatio <= 1.2)],
      ['first frame (cold) 1,000 / 40 tasks (both a full list)', lib.ratio(cold[large]! / cold[screen]!), '(info)', ''],
      ['first frame (warm) 1,000 / 40 tasks', lib.ratio(warm[large]! / warm[screen]!), '(info)', ''],
      ['j/k → frame 1,000 / 40 tasks', lib.ratio(key[large]! / key[screen]!), '(info)', ''],
    ]),
  );
  await lib.report([
    {
      figure: '3a TUI first frame (cold) 1,000 vs 10 tasks',
      value: `${lib.ms(cold[large]!, 0)} vs ${lib.ms(cold[small]!, 0)} = ${lib.ratio(coldRatio)}`,
      target: '≤ 1.20×',
      pass: coldRatio <= 1.2,
    },
    {
      figure: '3b TUI j/k→frame 1,000 vs 10 tasks',
      value: `${lib.ms(key[large]!)} vs ${lib.ms(key[small]!)} = ${lib.ratio(keyRatio)}`,
      target: '≤ 1.20×',
      pass: keyRatio <= 1.2,
    },
  ]);
  // The scale case: 20,000 tasks while a fleet streams events into the view.
  const { stdout: busyOut } = await run(
    process.execPath,
    lib.benchArgs(self, String(BUSY_TASKS), String(PRESSES), String(WARM_MOUNTS), 'busy'),
    { maxBuffer: 16 * 1024 * 1024 },
  );
  const b = JSON.parse(busyOut) as SizeResult;
  const busyKey = lib.median(b.keyToFrameMs);
  lib.section(
    `3c. TUI — ${BUSY_TASKS.toLocaleString('en')} tasks while the fleet runs (a task event, a usage report and a line of text every 5 ms)`,
  );
  lib.print(
    lib.table([
      ['figure', 'value', 'target', ''],
      ['first frame (cold)', lib.ms(b.coldFirstFrameMs), '≤ 500 ms', lib.verdict(b.coldFirstFrameMs <= 500)],
      ['j/k → frame, median', lib.ms(busyKey, 2), '≤ 50 ms', lib.verdict(busyKey <= 50)],
      ['j/k → frame, p90', lib.ms(lib.percentile(b.keyToFrameMs, 90), 2), '(info)', ''],
      ['presses with no frame', String(b.missed), '0', lib.verdict(b.missed === 0)],
    ]),
  );
  await lib.report([
    {
      figure: `3c TUI first frame, ${BUSY_TASKS} tasks, fleet running`,
      value: lib.ms(b.coldFirstFrameMs, 0),
      target: '≤ 500 ms',
      pass: b.coldFirstFrameMs <= 500,
    },
    {
      figure: `3d TUI j/k→frame, ${BUSY_TASKS} tasks, fleet running`,
      value: lib.ms(busyKey),
      target: '≤ 50 ms',
      pass: busyKey <= 50,
    },
  ]);
}
