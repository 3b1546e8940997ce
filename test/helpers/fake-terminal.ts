import { EventEmitter } from 'node:events';

/**
 * A keyboard for Ink without a terminal: what `type` receives is read by Ink as keypresses. Used to drive
 * the TUI in tests and benchmarks; Ink only needs this much of a TTY read stream.
 */
export class FakeStdin extends EventEmitter {
  isTTY = true;
  #data: string | null = null;

  type(data: string): void {
    this.#data = data;
    this.emit('readable');
    this.emit('data', data);
  }

  read = (): string | null => {
    const d = this.#data;
    this.#data = null;
    return d;
  };

  setEncoding(): void {}
  setRawMode(): void {}
  resume(): void {}
  pause(): void {}
  ref(): void {}
  unref(): void {}
}
