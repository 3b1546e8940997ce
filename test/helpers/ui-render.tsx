import { EventEmitter } from 'node:events';
import { stripVTControlCharacters } from 'node:util';
import { render } from 'ink-testing-library';
import { App } from '../../src/ui/app.js';
import type { Notice } from '../../src/ui/fleet-reducer.js';
import { FakeFleet, type FakeFleetOptions } from './fake-fleet.js';

export const KEY = {
  up: '\u001B[A',
  down: '\u001B[B',
  right: '\u001B[C',
  left: '\u001B[D',
  shiftUp: '\u001B[1;2A',
  shiftDown: '\u001B[1;2B',
  pageUp: '\u001B[5~',
  pageDown: '\u001B[6~',
  home: '\u001B[H',
  end: '\u001B[F',
  enter: '\r',
  tab: '\t',
  escape: '\u001B',
  ctrlC: '\u0003',
} as const;

export const plain = (text: string | undefined): string => stripVTControlCharacters(text ?? '');

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls until `check` stops throwing (or returns true), like testing-library's waitFor. */
export async function waitFor(check: () => unknown, timeoutMs = 2000): Promise<void> {
  // performance.now, not Date.now: a test may freeze Date, and the wait must still end.
  const deadline = performance.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      if (check() !== false) return;
      last = new Error('check returned false');
    } catch (error) {
      last = error;
    }
    if (performance.now() > deadline) throw last;
    await sleep(10);
  }
}

/** Give a testing stdout a terminal size and tell Ink it changed. */
export function resize(stdout: EventEmitter, columns: number, rows: number): void {
  Object.defineProperty(stdout, 'columns', { value: columns, configurable: true });
  Object.defineProperty(stdout, 'rows', { value: rows, configurable: true });
  stdout.emit('resize');
}

export interface Setup {
  fleet: FakeFleet;
  frame: () => string;
  lines: () => string[];
  press: (...keys: string[]) => Promise<void>;
  edits: number[];
  stdout: ReturnType<typeof render>['stdout'];
  stdin: ReturnType<typeof render>['stdin'];
  unmount: () => void;
}

export interface SetupOptions extends FakeFleetOptions {
  columns?: number;
  rows?: number;
  color?: boolean;
  bell?: boolean;
  fleet?: FakeFleet;
  startNotice?: Notice | null;
}

/** Render the App over a FakeFleet in a terminal of the given size. */
export async function setup(options: SetupOptions = {}): Promise<Setup> {
  const { columns = 120, rows = 30, color = false, bell = true, startNotice = null, ...fleetOptions } = options;
  const fleet = options.fleet ?? new FakeFleet(fleetOptions);
  const edits: number[] = [];
  const onEditBacklog = async (): Promise<void> => {
    edits.push(Date.now());
  };
  const r = render(
    <App fleet={fleet} color={color} onEditBacklog={onEditBacklog} bell={bell} startNotice={startNotice} />,
  );
  const first = plain(r.lastFrame());
  resize(r.stdout, columns, rows);
  // The view lays itself out for the new size on a later render, which a loaded machine may delay: wait for
  // that frame (up to a second; a size that changes nothing on screen makes no new frame).
  const settled = performance.now() + 1000;
  do await sleep(5);
  while (plain(r.lastFrame()) === first && performance.now() < settled);
  const frame = (): string => plain(r.lastFrame());
  return {
    fleet,
    frame,
    lines: () => frame().split('\n'),
    press: async (...keys: string[]) => {
      for (const k of keys) {
        const frames = r.frames.length;
        r.stdin.write(k);
        // Ink holds a lone ESC briefly to tell it from the start of a sequence.
        await sleep(k === KEY.escape ? 60 : 5);
        // The key's render, which a loaded machine may delay (a key that changes nothing renders nothing).
        const rendered = performance.now() + 250;
        while (r.frames.length === frames && performance.now() < rendered) await sleep(5);
      }
    },
    edits,
    stdout: r.stdout,
    stdin: r.stdin,
    unmount: r.unmount,
  };
}

/** The frame line showing a task row (its id followed by a space), or undefined. */
export function rowOf(frame: string, id: string): string | undefined {
  return frame.split('\n').find((l) => new RegExp(`^[ ›] ${id.replace('-', '\\-')} `).test(l));
}

export function selectedRow(frame: string): string | undefined {
  return frame.split('\n').find((l) => l.startsWith('› '));
}
