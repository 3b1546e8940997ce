/**
 * How loopfleet writes a quantity for a person: tokens, dollars, durations and bytes. The TUI, the morning
 * report, gate and budget messages, `status`, pull request bodies and notify payloads all print through
 * these, so one number reads the same everywhere.
 */

function trimZero(text: string): string {
  return text.endsWith('.0') ? text.slice(0, -2) : text;
}

/** `512`, `1.5k`, `512k`, `1.2M`, `25M`. One decimal below 10 of a unit, none above. */
export function formatTokens(n: number): string {
  const abs = Math.abs(n);
  const sign = n < 0 ? '-' : '';
  if (abs < 1000) return `${sign}${Math.round(abs)}`;
  const k = abs / 1000;
  const kText = k < 10 ? trimZero(k.toFixed(1)) : String(Math.round(k));
  if (Number(kText) < 1000) return `${sign}${kText}k`;
  const m = abs / 1_000_000;
  const mText = m < 10 ? trimZero(m.toFixed(1)) : String(Math.round(m));
  return `${sign}${mText}M`;
}

/**
 * `42s`, `3m 05s`, `1h 02m`: a span of time that ran (an elapsed clock, a check's run, a gate's trip). Rounds
 * down to whole seconds, so a ticking clock never jumps ahead; a span shorter than a second shows as `<1s`
 * (it ran, but not for a second), and zero or negative input as `0s`.
 */
export function formatDuration(ms: number): string {
  if (ms > 0 && ms < 1000) return '<1s';
  const totalSeconds = Math.max(0, Math.floor(ms / 1000));
  const hours = Math.floor(totalSeconds / 3600);
  const minutes = Math.floor((totalSeconds % 3600) / 60);
  const seconds = totalSeconds % 60;
  const pad = (v: number): string => String(v).padStart(2, '0');
  if (hours > 0) return `${hours}h ${pad(minutes)}m`;
  if (minutes > 0) return `${minutes}m ${pad(seconds)}s`;
  return `${seconds}s`;
}

/**
 * `$12.34`, `$0.42` from a cent up; `$0.0042` below a cent, so a small run's spend still shows; `<$0.0001`
 * for a spend that is not zero but rounds to it; `$0.00` for nothing spent.
 */
export function formatUsd(x: number): string {
  const abs = Math.abs(x);
  const sign = x < 0 ? '-' : '';
  const fine = abs.toFixed(4);
  if (Number(fine) >= 0.01 || abs === 0) return `${sign}$${abs.toFixed(2)}`;
  if (Number(fine) === 0) return `${sign}<$0.0001`;
  return `${sign}$${fine}`;
}

/**
 * A configured limit in the words it was likely given: `8h`, `30m`, `90s` when it is whole hours, minutes or
 * seconds, and {@link formatDuration} otherwise. Beside an elapsed clock it reads `12m 03s/30m`.
 */
export function formatLimitDuration(ms: number): string {
  if (ms > 0 && ms % 3_600_000 === 0) return `${ms / 3_600_000}h`;
  if (ms > 0 && ms % 60_000 === 0) return `${ms / 60_000}m`;
  if (ms > 0 && ms % 1000 === 0) return `${ms / 1000}s`;
  return formatDuration(ms);
}

/** `14:05`: a moment's local time of day, independent of the locale. */
export function clockTime(ms: number): string {
  const at = new Date(ms);
  return `${String(at.getHours()).padStart(2, '0')}:${String(at.getMinutes()).padStart(2, '0')}`;
}

/** A wait as a person reads it at a glance: `45s`, `5m`, `2h`, `1h 30m` (seconds rounded up, minutes to the nearest). */
export function shortDuration(ms: number): string {
  const s = Math.max(0, Math.ceil(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.round(s / 60);
  return m < 60 ? `${m}m` : `${Math.floor(m / 60)}h${m % 60 === 0 ? '' : ` ${m % 60}m`}`;
}

/** `512 MB`, `3.1 GB`, `800 kB`: decimal units, as people read sizes. */
export function formatBytes(n: number): string {
  if (n >= 1e9) return `${(n / 1e9).toFixed(n >= 1e10 ? 0 : 1)} GB`;
  if (n >= 1e6) return `${Math.round(n / 1e6)} MB`;
  if (n >= 1e3) return `${Math.round(n / 1e3)} kB`;
  return `${n} bytes`;
}
