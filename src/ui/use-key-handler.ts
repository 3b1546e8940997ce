import { useEffect, useRef, useState } from 'react';
import { type Key, useInput } from 'ink';
import { commandFor, MODE_COMMANDS, type Command, type InputMode } from './key-bindings.js';

type Typed = readonly [input: string, key: Key];

/**
 * The keys in one read of the terminal. Keys typed faster than the view reads them (a quick typist, a slow
 * connection, a held key) arrive as one chunk, which Ink hands over whole, like a paste: a chunk of plain
 * printable characters is split into keys of their own. Anything else (a named key, a control or escape
 * sequence) is one key, as Ink parsed it.
 */
export function typedKeys(input: string, key: Key): Typed[] {
  const chars = [...input];
  if (chars.length < 2 || key.ctrl || key.meta || !chars.every((c) => c >= ' ' && c !== '\u007f'))
    return [[input, key]];
  const plain = { ...key, shift: false };
  return chars.map((c) => [c, { ...plain, shift: /[A-Z]/.test(c) }]);
}

/**
 * Turns keys into commands through the key-binding table, listening only to the commands of `mode`.
 * A key bound to nothing in this mode goes to `onUnbound` with the text it typed.
 *
 * Invariant: keys are handled one at a time, in order, each in the mode the key before it left — a key
 * waiting behind `M` is the answer to its question, not another command — so the keys of one chunk after
 * the first wait in `pending` for the render that the previous key's state changes bring.
 */
export function useKeyHandler(
  mode: InputMode,
  onCommand: (command: Command) => void,
  onUnbound: (input: string) => void,
): void {
  const pending = useRef<Typed[]>([]);
  const [turn, setTurn] = useState(0);
  const handle = ([input, key]: Typed): void => {
    const command = commandFor(input, key, MODE_COMMANDS[mode]);
    if (command !== null) onCommand(command);
    else onUnbound(input);
  };

  useInput((input, key) => {
    const keys = typedKeys(input, key);
    const waiting = pending.current.length > 0;
    pending.current.push(...keys);
    if (!waiting) handle(pending.current.shift()!);
    if (pending.current.length > 0) setTurn((n) => n + 1);
  });

  // Runs once per turn, with this render's `handle` (so this render's mode).
  useEffect(() => {
    const next = pending.current.shift();
    if (next === undefined) return;
    handle(next);
    if (pending.current.length > 0) setTurn((n) => n + 1);
  }, [turn]);
}
