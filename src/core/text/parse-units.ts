/**
 * Sizes, durations and dollar amounts as people write them in BACKLOG.md and on the command line. Their
 * display forms are {@link formatTokens}, {@link formatUsd} and {@link formatDuration}.
 *
 * - size: `500k`, `5M`, `1.5M`, `500000` (k = 1,000, M = 1,000,000); the result is a whole number.
 * - duration: `30s`, `30m`, `8h`, `1h30m`, `1h 30m`, `1.5h`; a plain number is seconds.
 * - dollars: `2`, `2.50`, `$2`, `$0.75`.
 *
 * Parsers never throw: they return the value or a message that says what is wrong and what is expected.
 */

export type Parsed<T> = { ok: true; value: T } | { ok: false; message: string };

const ok = <T>(value: T): Parsed<T> => ({ ok: true, value });
const fail = <T>(message: string): Parsed<T> => ({ ok: false, message });

const NUMBER = String.raw`(\d+(?:\.\d+)?|\.\d+)`;
const SIZE_RE = new RegExp(`^${NUMBER}\\s*([kKM]?)$`);
const USD_RE = new RegExp(`^\\$?\\s*${NUMBER}$`);
const DURATION_PART_RE = new RegExp(`${NUMBER}\\s*(h|m|s)\\s*`, 'gy');

const SIZE_HINT = 'use a number with an optional k or M suffix, e.g. 500k or 1.5M';
const DURATION_HINT = 'use a number with an s, m or h suffix, e.g. 90s, 30m, 8h or 1h30m';
const USD_HINT = 'use an amount in US dollars, e.g. 2, 2.50 or $2';

function quote(input: string | number): string {
  return `'${String(input)}'`;
}

/** Token counts and other sizes. Negative, fractional-after-scaling and non-finite values are refused. */
export function parseSize(input: string | number): Parsed<number> {
  if (typeof input === 'number') {
    if (!Number.isFinite(input) || input < 0 || !Number.isInteger(input)) {
      return fail(`malformed size ${quote(input)}: ${SIZE_HINT}`);
    }
    return ok(input);
  }
  const m = SIZE_RE.exec(input.trim());
  if (!m) return fail(`malformed size ${quote(input)}: ${SIZE_HINT}`);
  const factor = m[2] === '' ? 1 : m[2] === 'M' ? 1_000_000 : 1_000;
  // Scale in integer arithmetic where possible so that 1.1M is exactly 1100000.
  const value = Math.round(Number(m[1]) * factor * 1e6) / 1e6;
  if (!Number.isInteger(value)) return fail(`malformed size ${quote(input)}: it is not a whole number`);
  return ok(value);
}

/** Durations in milliseconds. Units appear at most once each, largest first (`1h30m`, not `30m1h`). */
export function parseDuration(input: string | number): Parsed<number> {
  if (typeof input === 'number') {
    if (!Number.isFinite(input) || input < 0) return fail(`malformed duration ${quote(input)}: ${DURATION_HINT}`);
    return ok(Math.round(input * 1000));
  }
  const text = input.trim();
  if (/^\d+(?:\.\d+)?$/.test(text)) return ok(Math.round(Number(text) * 1000));
  const unitMs = { h: 3_600_000, m: 60_000, s: 1000 } as const;
  const order = ['h', 'm', 's'] as const;
  let total = 0;
  let lastRank = -1;
  let pos = 0;
  DURATION_PART_RE.lastIndex = 0;
  for (let m = DURATION_PART_RE.exec(text); m; m = DURATION_PART_RE.exec(text)) {
    const unit = m[2] as (typeof order)[number];
    const rank = order.indexOf(unit);
    if (rank <= lastRank)
      return fail(`malformed duration ${quote(input)}: write units once each, largest first (e.g. 1h30m)`);
    lastRank = rank;
    total += Number(m[1]) * unitMs[unit];
    pos = DURATION_PART_RE.lastIndex;
  }
  if (text === '' || pos !== text.length) return fail(`malformed duration ${quote(input)}: ${DURATION_HINT}`);
  return ok(Math.round(total));
}

/**
 * How often something recurs (`every:`): a duration as parseDuration reads it, or whole days (`1d`, `2d`).
 * Zero is refused: a recurring task must wait between its runs.
 */
export function parseInterval(input: string | number): Parsed<number> {
  const text = String(input).trim();
  const days = /^(\d+)\s*d$/.exec(text);
  const parsed = days ? ok(Number(days[1]) * 86_400_000) : parseDuration(input);
  if (!parsed.ok)
    return fail(`malformed interval ${quote(input)}: use a number with a d, h, m or s suffix, e.g. 1d, 6h, 30m or 2s`);
  if (parsed.value <= 0) return fail(`interval ${quote(input)} must be greater than zero`);
  return parsed;
}

/** US dollars, at most a dollar sign in front; no thousands separators, no other currency. */
export function parseUsd(input: string | number): Parsed<number> {
  if (typeof input === 'number') {
    if (!Number.isFinite(input) || input < 0) return fail(`malformed amount ${quote(input)}: ${USD_HINT}`);
    return ok(input);
  }
  const m = USD_RE.exec(input.trim());
  if (!m) return fail(`malformed amount ${quote(input)}: ${USD_HINT}`);
  return ok(Number(m[1]));
}
