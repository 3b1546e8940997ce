import { EventEmitter } from 'node:events';
import { describe, expect, test } from 'vitest';
import { FakeFleet } from '../helpers/fake-fleet.js';
import { FakeStdin } from '../helpers/fake-terminal.js';
import { colorWanted, renderTui } from '../../src/ui/render-tui.js';
import { mixedTasks } from '../helpers/ui-fixtures.js';
import { KEY, sleep } from '../helpers/ui-render.js';

/** A terminal for Ink: a stdout that records what is written and a stdin that can be typed into. */
class TestStdout extends EventEmitter {
  readonly frames: string[] = [];
  columns = 100;
  rows = 30;
  isTTY = false;
  write = (data: string, ...rest: unknown[]): boolean => {
    this.frames.push(data);
    const callback = rest.find((r) => typeof r === 'function') as (() => void) | undefined;
    callback?.();
    return true;
  };
}

function terminal(): { stdout: NodeJS.WriteStream; stdin: NodeJS.ReadStream; input: FakeStdin } {
  const input = new FakeStdin();
  return {
    stdout: new TestStdout() as unknown as NodeJS.WriteStream,
    stdin: input as unknown as NodeJS.ReadStream,
    input,
  };
}

describe('renderTui', () => {
  test('q stops the fleet, then the app exits and renderTui resolves', async () => {
    const fleet = new FakeFleet({ tasks: mixedTasks() });
    const { stdout, stdin, input } = terminal();
    let resolved = false;
    const done = renderTui(fleet, {
      color: false,
      stdout,
      stdin,
      patchConsole: false,
      onEditBacklog: async () => {},
    }).then(() => {
      resolved = true;
    });
    await sleep(50);
    expect(resolved).toBe(false);
    input.type('q');
    await done;
    expect(fleet.calls).toEqual([{ command: 'stop' }]);
  });

  test('Ctrl+C behaves like q', async () => {
    const fleet = new FakeFleet({ tasks: mixedTasks() });
    const { stdout, stdin, input } = terminal();
    const done = renderTui(fleet, { color: false, stdout, stdin, patchConsole: false });
    await sleep(50);
    input.type(KEY.ctrlC);
    await done;
    expect(fleet.calls).toEqual([{ command: 'stop' }]);
  });

  test('while the fleet stops, a second q leaves without waiting', async () => {
    class SlowStop extends FakeFleet {
      override stop(): Promise<void> {
        void super.stop();
        return new Promise(() => {});
      }
    }
    const fleet = new SlowStop({ tasks: mixedTasks() });
    const { stdout, stdin, input } = terminal();
    const done = renderTui(fleet, { color: false, stdout, stdin, patchConsole: false });
    await sleep(50);
    input.type('q');
    await sleep(50);
    input.type('q');
    await done;
    expect(fleet.calls).toEqual([{ command: 'stop' }]);
  });

  test('a failing stop rejects renderTui with its error', async () => {
    class BrokenStop extends FakeFleet {
      override async stop(): Promise<void> {
        throw new Error('state.json could not be written');
      }
    }
    const { stdout, stdin, input } = terminal();
    const done = renderTui(new BrokenStop({ tasks: mixedTasks() }), {
      color: false,
      stdout,
      stdin,
      patchConsole: false,
    });
    await sleep(50);
    input.type('q');
    await expect(done).rejects.toThrow('state.json could not be written');
  });

  test('colour is off with --no-color or a non-empty NO_COLOR', () => {
    expect(colorWanted(false, {})).toBe(true);
    expect(colorWanted(true, {})).toBe(false);
    expect(colorWanted(false, { NO_COLOR: '1' })).toBe(false);
    expect(colorWanted(false, { NO_COLOR: '' })).toBe(true);
  });
});
