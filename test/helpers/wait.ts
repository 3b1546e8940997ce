/**
 * Waiting on a condition instead of a clock. {@link eventually} has no deadline of its own: the test's
 * timeout is the one bound, so a loaded machine makes a test slower, never wrong.
 */
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Resolves with the first value `probe` returns that is not `undefined`, asking again every `everyMs`.
 * A probe that throws ends the wait with its error.
 */
export async function eventually<T>(probe: () => Promise<T | undefined> | T | undefined, everyMs = 100): Promise<T> {
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    await sleep(everyMs);
  }
}
