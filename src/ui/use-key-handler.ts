import { useInput } from 'ink';
import { commandFor, MODE_COMMANDS, type Command, type InputMode } from './key-bindings.js';

/**
 * Turns keys into commands through the key-binding table, listening only to the commands of `mode`.
 * A key bound to nothing in this mode goes to `onUnbound` with the text it typed.
 */
export function useKeyHandler(mode: InputMode, onCommand: (command: Command) => void, onUnbound: (input: string) => void): void {
  useInput((input, key) => {
    const command = commandFor(input, key, MODE_COMMANDS[mode]);
    if (command !== null) onCommand(command);
    else onUnbound(input);
  });
}
