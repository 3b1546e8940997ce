/** Token usage and its sums. Plain data only: every value survives a JSON round-trip. */

/** Token usage as the Messages API reports it. Every field is a plain count, never null. */
export interface Usage {
  input: number;
  output: number;
  cacheWrite: number;
  cacheRead: number;
}

export const ZERO_USAGE: Readonly<Usage> = Object.freeze({ input: 0, output: 0, cacheWrite: 0, cacheRead: 0 });

export function addUsage(a: Usage, b: Usage): Usage {
  return {
    input: a.input + b.input,
    output: a.output + b.output,
    cacheWrite: a.cacheWrite + b.cacheWrite,
    cacheRead: a.cacheRead + b.cacheRead,
  };
}

/** The `tokens` figure everywhere (gates, status --json) is the sum of all four kinds. */
export function totalTokens(u: Usage): number {
  return u.input + u.output + u.cacheWrite + u.cacheRead;
}
