import { afterEach, describe, expect, test } from 'vitest';
import { cleanup } from 'ink-testing-library';
import type { Key } from 'ink';
import { fakeTask } from '../helpers/fake-fleet.js';
import { typedKeys } from '../../src/ui/use-key-handler.js';
import { rowOf, selectedRow, setup, waitFor } from '../helpers/ui-render.js';

afterEach(cleanup);

/**
 * Keys typed faster than the view reads them (a quick typist, a slow connection, a held key) reach it as
 * one chunk. Each is still a key of its own, handled in the mode the key before it left.
 */
describe('keys that arrive together', () => {
  const tasks = () => [
    fakeTask('T-1', { title: 'One', status: 'verified' }),
    fakeTask('T-2', { title: 'Two', status: 'verified' }),
    fakeTask('T-3', { title: 'Three', status: 'failed' }),
  ];

  test('each moves the selection: jj is two rows down, k one back', async () => {
    const t = await setup({ tasks: tasks() });
    expect(selectedRow(t.frame())).toContain('T-1');
    t.stdin.write('jj');
    await waitFor(() => expect(selectedRow(t.frame())).toContain('T-3'));
    t.stdin.write('kkj');
    await waitFor(() => expect(selectedRow(t.frame())).toContain('T-2'));
  });

  test('a key after one that asks a question is its answer: M then n asks and cancels, merging nothing', async () => {
    const t = await setup({ tasks: tasks(), base: 'main' });
    t.stdin.write('Mn');
    await waitFor(() => expect(t.frame()).toContain('Merge queue cancelled'));
    expect(t.fleet.calls).toEqual([]);
    expect(rowOf(t.frame(), 'T-1')).toContain('verified');
  });
});

describe('typedKeys', () => {
  const none: Key = {
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

  test('splits plain characters, marking capitals shifted; leaves one key, named keys and control text whole', () => {
    expect(typedKeys('jM', none)).toEqual([
      ['j', none],
      ['M', { ...none, shift: true }],
    ]);
    expect(typedKeys('j', none)).toEqual([['j', none]]);
    expect(typedKeys('', { ...none, upArrow: true })).toEqual([['', { ...none, upArrow: true }]]);
    expect(typedKeys('ab', { ...none, meta: true })).toEqual([['ab', { ...none, meta: true }]]);
    expect(typedKeys('a\u0003', none)).toEqual([['a\u0003', none]]);
    expect(typedKeys('é✓', none).map(([c]) => c)).toEqual(['é', '✓']);
  });
});
