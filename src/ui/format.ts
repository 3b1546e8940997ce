import { oneLine, visible } from '../domain/sanitize.js';
import {
  clockTime,
  formatDuration,
  formatLimitDuration,
  formatTokens,
  formatUsd,
  shortDuration,
} from '../core/text/format-units.js';

export { formatDuration, formatLimitDuration, formatTokens, formatUsd };

/** Display width of a string, counted in code points (the UI treats every code point as one cell). */
export function width(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

/** Cut to at most `max` cells, ending with `…` when something was cut. */
export function truncate(text: string, max: number): string {
  if (max <= 0) return '';
  const chars = Array.from(text);
  if (chars.length <= max) return text;
  return `${chars.slice(0, max - 1).join('')}…`;
}

export function padEnd(text: string, size: number): string {
  const t = truncate(text, size);
  return t + ' '.repeat(Math.max(0, size - width(t)));
}

export function padStart(text: string, size: number): string {
  const t = truncate(text, size);
  return ' '.repeat(Math.max(0, size - width(t))) + t;
}

/**
 * Text from the outside world (agent output, check output, diffs) made safe to print inside the frame:
 * the one sanitiser's multi-line form ({@link visible}), tabs as two spaces. Newlines are kept.
 */
export function sanitize(text: string): string {
  return visible(text).replace(/\t/g, '  ');
}

/** A one-line field of the view (a title, a reason, a status line): never more than one line. */
export function singleLine(text: string): string {
  return oneLine(text).trim();
}

/** Hard-wrap one line (no newlines in it) into chunks of at most `max` cells. Always at least one chunk. */
export function wrapLine(line: string, max: number): string[] {
  const chars = Array.from(line);
  if (max <= 0 || chars.length <= max) return [line];
  const out: string[] = [];
  for (let i = 0; i < chars.length; i += max) out.push(chars.slice(i, i + max).join(''));
  return out;
}

/** A bounded meter, e.g. `▮▮▮▯▯`. `ratio` is clamped to [0, 1]; from 1 % on, at least one cell shows. */
export function meter(ratio: number, cells = 5): string {
  const r = Math.min(1, Math.max(0, Number.isFinite(ratio) ? ratio : 0));
  const filled = Math.max(r >= 0.01 ? 1 : 0, Math.round(r * cells));
  return '▮'.repeat(filled) + '▯'.repeat(cells - filled);
}

/** `1.2M / 5M`, or just `1.2M` when there is no limit. */
export function againstLimit(value: number, limit: number | null, fmt: (n: number) => string): string {
  return limit === null ? fmt(value) : `${fmt(value)}/${fmt(limit)}`;
}

export function basename(path: string): string {
  const parts = path.split(/[\\/]/).filter((p) => p !== '');
  return parts.at(-1) ?? path;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'] as const;
const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'] as const;

/** `Dec 1 14:05`, local time, independent of the locale. */
export function dayClock(ms: number): string {
  const at = new Date(ms);
  return `${MONTHS[at.getMonth()]} ${at.getDate()} ${clockTime(ms)}`;
}

const sameDay = (a: Date, b: Date): boolean =>
  a.getFullYear() === b.getFullYear() && a.getMonth() === b.getMonth() && a.getDate() === b.getDate();

/**
 * When something due at `at` happens, seen at `now`, as short as it stays unambiguous: `in 45s`, `in 5m`
 * within the hour, `14:05` later today, `Wed 09:00` within the week, `Dec 10 09:00` beyond; `due` once passed.
 */
export function nextRunText(at: number, now: number): string {
  const ms = at - now;
  if (ms <= 0) return 'due';
  if (ms < 3_600_000) return `in ${shortDuration(ms)}`;
  const when = new Date(at);
  if (sameDay(when, new Date(now))) return clockTime(at);
  if (ms < 6 * 86_400_000) return `${WEEKDAYS[when.getDay()]} ${clockTime(at)}`;
  return dayClock(at);
}
