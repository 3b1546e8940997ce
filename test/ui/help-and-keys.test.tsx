import { afterEach, describe, expect, test } from 'vitest';
import { cleanup } from 'ink-testing-library';
import type { Key } from 'ink';
import {
  Command,
  COMMAND_HELP,
  commandFor,
  formatBinding,
  formatBindings,
  HELP_ORDER,
  KEY_BINDINGS,
  MODE_COMMANDS,
  type InputMode,
} from '../../src/ui/key-bindings.js';
import { mixedTasks } from '../helpers/ui-fixtures.js';
import { KEY, setup, waitFor } from '../helpers/ui-render.js';

afterEach(cleanup);

const NO_KEY: Key = {
  upArrow: false,
  downArrow: false,
  leftArrow: false,
  rightArrow: false,
  pageDown: false,
  pageUp: false,
  home: false,
  end: false,
  return: false,
  escape: false,
  ctrl: false,
  shift: false,
  tab: false,
  backspace: false,
  delete: false,
  meta: false,
  super: false,
  hyper: false,
  capsLock: false,
  numLock: false,
};

describe('key bindings', () => {
  test('every command has at least one key, a help text, and appears in the help order once', () => {
    for (const command of Object.values(Command)) {
      expect(KEY_BINDINGS[command].length).toBeGreaterThan(0);
      expect(COMMAND_HELP[command]).not.toBe('');
    }
    expect(new Set(HELP_ORDER).size).toBe(Object.values(Command).length);
  });

  test('within a mode, no key triggers two commands', () => {
    for (const mode of Object.keys(MODE_COMMANDS) as InputMode[]) {
      const seen = new Map<string, Command>();
      for (const command of MODE_COMMANDS[mode]) {
        for (const b of KEY_BINDINGS[command]) {
          const label = formatBinding(b);
          expect(seen.get(label), `${label} in ${mode}`).toBeUndefined();
          seen.set(label, command);
        }
      }
    }
  });

  test('keys resolve to commands by mode', () => {
    expect(commandFor('j', NO_KEY, MODE_COMMANDS.normal)).toBe(Command.SelectDown);
    expect(commandFor('', { ...NO_KEY, downArrow: true }, MODE_COMMANDS.normal)).toBe(Command.SelectDown);
    expect(commandFor('', { ...NO_KEY, downArrow: true, shift: true }, MODE_COMMANDS.normal)).toBe(Command.ScrollDown);
    expect(commandFor('G', { ...NO_KEY, shift: true }, MODE_COMMANDS.normal)).toBe(Command.SelectLast);
    expect(commandFor('c', { ...NO_KEY, ctrl: true }, MODE_COMMANDS.confirm)).toBe(Command.Interrupt);
    expect(commandFor('y', NO_KEY, MODE_COMMANDS.normal)).toBeNull();
    expect(commandFor('m', NO_KEY, MODE_COMMANDS.confirm)).toBeNull();
    expect(commandFor('', { ...NO_KEY, escape: true }, MODE_COMMANDS.confirm)).toBe(Command.ConfirmNo);
    expect(commandFor('', { ...NO_KEY, escape: true }, MODE_COMMANDS.detail)).toBe(Command.Close);
  });
});

describe('help overlay', () => {
  test('? lists every binding from the key-binding table; ? again closes it', async () => {
    const t = await setup({ tasks: mixedTasks(), rows: 60, columns: 120 });
    await t.press('?');
    const frame = t.frame();
    expect(frame).toContain('Keys (Esc or ? closes');
    for (const command of HELP_ORDER) {
      const line = t.lines().find((l) => l.includes(COMMAND_HELP[command]));
      expect(line, command).toBeDefined();
      expect(line).toContain(formatBindings(command));
    }
    expect(frame).toContain('Ctrl+C');
    expect(frame).toContain('Shift+↑');
    expect(frame).not.toContain('T-1 '); // the help takes the list's place
    await t.press('?');
    expect(t.frame()).not.toContain('Keys (Esc');
    expect(t.frame()).toContain('T-1 ');
  });

  test('on a short terminal the help scrolls with PgDn, and Esc closes it', async () => {
    const t = await setup({ tasks: mixedTasks(), rows: 16 });
    await t.press('?');
    expect(t.frame()).toContain('Keys (Esc');
    expect(t.frame()).not.toContain(COMMAND_HELP[Command.Interrupt]);
    await t.press(KEY.pageDown, KEY.pageDown, KEY.pageDown, KEY.pageDown);
    expect(t.frame()).toContain(COMMAND_HELP[Command.Interrupt]);
    expect(t.lines().length).toBeLessThanOrEqual(16);
    await t.press(KEY.escape);
    await waitFor(() => expect(t.frame()).not.toContain('Keys (Esc'));
  });

  test('the footer shows the main keys of the mode, from the same table', async () => {
    const t = await setup({ tasks: mixedTasks(), rows: 30 });
    const footer = t.lines().at(-1) ?? '';
    expect(footer).toContain('↑ up');
    expect(footer).toContain('m merge');
    expect(footer).toContain('? help');
    expect(footer).toContain('q quit');
    await t.press('j', 'j', 'm');
    expect(t.lines().at(-1)).toContain('y yes');
    expect(t.lines().at(-1)).toContain('n no');
  });
});
