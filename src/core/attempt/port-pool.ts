import type { PortRange } from '../../domain/types.js';

/** Hands out `PORT` values: unique among the tasks running at once, lowest free first. */
export class PortPool {
  readonly #range: PortRange;
  readonly #taken = new Map<string, number>();

  constructor(range: PortRange) {
    this.#range = range;
  }

  acquire(taskId: string): number {
    const held = this.#taken.get(taskId);
    if (held !== undefined) return held;
    const used = new Set(this.#taken.values());
    for (let port = this.#range.from; port <= this.#range.to; port++) {
      if (!used.has(port)) {
        this.#taken.set(taskId, port);
        return port;
      }
    }
    throw new Error(
      `no free port in ${this.#range.from}-${this.#range.to} for ${taskId}: widen \`ports:\` or lower \`concurrency\``,
    );
  }

  release(taskId: string): void {
    this.#taken.delete(taskId);
  }
}
