export interface Clock {
  /** milliseconds since the epoch */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };
