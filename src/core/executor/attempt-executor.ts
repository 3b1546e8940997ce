/**
 * Where an attempt runs. The task runner hands every attempt to an executor and settles what comes back
 * through the lifecycle (the one writer of task state), whichever executor ran it: the result, or an error
 * of the class the local pipeline throws (GateError, StopError, RateLimitError, ResourceLimitError, Error).
 */
import type { AttemptInput, AttemptResult } from '../attempt/attempt-io.js';
import type { Pipeline } from '../attempt/pipeline.js';
import type { SetupTrust } from '../attempt/setup-trust.js';

export interface AttemptExecutor {
  run(input: AttemptInput): Promise<AttemptResult>;
  /**
   * Best-of-N: the reviewer's answer to a prompt choosing among candidates. An executor without it runs no
   * best-of-N round (a worker pool: `planOnly` is not on its wire), and a `parallel:` task runs one implementer.
   */
  choose?(input: AttemptInput, prompt: string): Promise<string>;
  /** told the fleet's record of landings, so an executor that sends attempts away can vouch for base */
  trustSetupWith?(trust: SetupTrust): void;
}

/** The one-machine path: the fleet's own pipeline, in this process. */
export class InProcessExecutor implements AttemptExecutor {
  readonly #pipeline: Pipeline;

  constructor(pipeline: Pipeline) {
    this.#pipeline = pipeline;
  }

  run(input: AttemptInput): Promise<AttemptResult> {
    return this.#pipeline.run(input);
  }

  choose(input: AttemptInput, prompt: string): Promise<string> {
    return this.#pipeline.choose(input, prompt);
  }
}
