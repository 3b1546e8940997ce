import { ResourceLimitError } from '../domain/errors.js';

/**
 * While a session is open: an error event nobody handled that names a machine limit (a child process that
 * could not be spawned for EMFILE/ENFILE/ENOMEM, emitted by a library a tick after it failed) goes to
 * `hit` instead of killing the process with a stack trace. Any other uncaught error crashes as before.
 * Returns the function that removes the guard.
 */
export function guardLimits(hit: (error: ResourceLimitError) => void): () => void {
  const onUncaught = (error: Error) => {
    const limit = ResourceLimitError.of(error);
    if (limit !== null) {
      hit(limit);
      return;
    }
    process.off('uncaughtException', onUncaught);
    // Thrown again with no handler left: Node's own report and exit, as if the guard were not there.
    setImmediate(() => {
      throw error;
    });
  };
  process.on('uncaughtException', onUncaught);
  return () => process.off('uncaughtException', onUncaught);
}
