/** An AbortError-like error for an aborted call: the signal's reason when it is an Error (e.g. a GateError). */
export function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof Error) return reason;
  const error = new Error(typeof reason === 'string' ? `agent call aborted: ${reason}` : 'agent call aborted');
  error.name = 'AbortError';
  return error;
}
