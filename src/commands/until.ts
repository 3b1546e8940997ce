/** `--until HH:MM[:SS]` of `loopfleet --watch`: parsing it costs nothing, so the command line reads it before loading the fleet. */

/**
 * The next time the local clock reads `hh:mm` (or `hh:mm:ss`), strictly after `now` (tomorrow when today's
 * has passed). `text` has been checked by parseUntil.
 */
export function untilTime(text: string, now: Date): Date {
  const [h, m, sec = 0] = text.split(':').map(Number) as [number, number, number?];
  const at = new Date(now);
  at.setHours(h, m, sec, 0);
  if (at.getTime() <= now.getTime()) at.setDate(at.getDate() + 1);
  return at;
}

/** `--until HH:MM` or `HH:MM:SS`, a 24-hour local time. */
export function parseUntil(text: string): { ok: true; value: string } | { ok: false; message: string } {
  return /^([01]?\d|2[0-3]):[0-5]\d(:[0-5]\d)?$/.test(text.trim())
    ? { ok: true, value: text.trim() }
    : { ok: false, message: `'${text}' is not a time of day: use HH:MM (or HH:MM:SS) on a 24-hour clock, e.g. 07:00` };
}
