/**
 * What the coordinator tells a job that runs on a worker: plan answers, and an abort that stops the attempt
 * as the class of error it names; and the hand-back, when the worker stops or lost the job.
 *
 * Invariant: once the job is handed back or aborted, every plan still waiting for an answer rejects with
 * that reason, and nothing here is left waiting.
 */
import type { JobChannel, WireError } from '../../ports/attempt-queue.js';
import type { PlanBlocker } from '../attempt/attempt-io.js';
import { fromWireError } from './wire-error.js';

/** The job was handed back (the worker stops or lost it): nothing more is said on its channel. */
export class JobHandedBackError extends Error {
  override readonly name = 'JobHandedBackError';
}

/** The coordinator's control messages for the job: plan answers, and an abort that stops the attempt. */
export class Controls {
  readonly #controller = new AbortController();
  readonly #closed = new AbortController();
  readonly #waiting = new Map<string, (blocker: PlanBlocker | null) => void>();
  readonly #answered = new Map<string, PlanBlocker | null>();
  abortedBy: WireError | null = null;

  constructor(channel: JobChannel, handedBack: AbortSignal) {
    const onHandedBack = () => this.#controller.abort(new JobHandedBackError('the job was handed back'));
    if (handedBack.aborted) onHandedBack();
    else handedBack.addEventListener('abort', onHandedBack, { once: true });
    this.#closed.signal.addEventListener('abort', () => handedBack.removeEventListener('abort', onHandedBack), {
      once: true,
    });
    void this.#pump(channel, AbortSignal.any([handedBack, this.#closed.signal]));
  }

  /** what the pipeline's agents and commands run under */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** throws the coordinator's abort as the class it named (GateError, StopError, …), or the hand-back */
  check(): void {
    if (this.#controller.signal.aborted) throw this.#controller.signal.reason;
  }

  answerTo(request: string): Promise<PlanBlocker | null> {
    if (this.#answered.has(request)) return Promise.resolve(this.#answered.get(request)!);
    return new Promise((resolve, reject) => {
      const signal = this.#controller.signal;
      const onAbort = () => reject(signal.reason);
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      this.#waiting.set(request, (blocker) => {
        signal.removeEventListener('abort', onAbort);
        resolve(blocker);
      });
    });
  }

  close(): void {
    this.#closed.abort();
  }

  async #pump(channel: JobChannel, signal: AbortSignal): Promise<void> {
    try {
      for await (const message of channel.messages(signal)) {
        if (message.kind === 'abort') {
          this.abortedBy ??= message.error;
          this.#controller.abort(fromWireError(message.error));
          continue;
        }
        const waiter = this.#waiting.get(message.request);
        this.#waiting.delete(message.request);
        if (waiter !== undefined) waiter(message.blocker);
        else this.#answered.set(message.request, message.blocker);
      }
    } catch (error) {
      // Messages that can no longer be read are a job this worker cannot be told to stop: hand it back.
      if (!signal.aborted)
        this.#controller.abort(
          new JobHandedBackError(`control messages failed: ${error instanceof Error ? error.message : String(error)}`, {
            cause: error,
          }),
        );
    }
  }
}
