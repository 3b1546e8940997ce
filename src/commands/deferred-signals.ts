/**
 * SIGINT and SIGTERM held off while an operation that moves git and state together runs (merge, discard,
 * retry): the operation finishes, state is saved and the lock released, and only then does the process
 * end — with exit code 130. Killing it halfway would leave base moved and state saying otherwise.
 */
export interface Deferred {
  /** the first signal received, if any */
  readonly signal: NodeJS.Signals | null;
  /** stop holding signals off; call once, in a finally */
  release(): void;
}

export function deferSignals(onSignal: (signal: NodeJS.Signals) => void = () => undefined): Deferred {
  let received: NodeJS.Signals | null = null;
  const handler = (signal: NodeJS.Signals) => {
    if (received === null) {
      received = signal;
      onSignal(signal);
    }
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  return {
    get signal() {
      return received;
    },
    release() {
      process.off('SIGINT', handler);
      process.off('SIGTERM', handler);
    },
  };
}
