import { AgentSetupError, RateLimitError } from '../../../domain/errors.js';

/**
 * Failure patterns shared by the CLI agents: rate and usage limits (with the reset time they name), API
 * errors by status, and refused credentials.
 */

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

/**
 * The next moment after `now` at the wall-clock time in "resets 5am", "resets 17:30", "resets at 5:00 am",
 * "resets Dec 3, 5am" (local time of the machine); null when the text names none.
 */
export function resetTimeOf(text: string, now: number = Date.now()): number | null {
  const m =
    /resets?\s+(?:at\s+)?(?:([a-z]{3})[a-z]*\s+(\d{1,2}),?\s+(?:at\s+)?)?(\d{1,2})(?::(\d{2}))?\s*(am|pm)?/i.exec(text);
  if (!m) {
    const inMatch = /(?:try again|retry|resets?) in\s+(\d+)\s*(s|sec|seconds?|m|min|minutes?|h|hours?)\b/i.exec(text);
    if (!inMatch) return null;
    const n = Number(inMatch[1]);
    const unit = inMatch[2]!.toLowerCase();
    return now + n * (unit.startsWith('h') ? 3_600_000 : unit.startsWith('m') ? 60_000 : 1000);
  }
  let hour = Number(m[3]);
  const minute = m[4] === undefined ? 0 : Number(m[4]);
  const meridiem = m[5]?.toLowerCase();
  if (meridiem === undefined && m[4] === undefined) return null;
  if (hour > 23 || minute > 59 || (meridiem !== undefined && (hour < 1 || hour > 12))) return null;
  if (meridiem === 'pm' && hour !== 12) hour += 12;
  if (meridiem === 'am' && hour === 12) hour = 0;
  const at = new Date(now);
  if (m[1] !== undefined && m[2] !== undefined) {
    const month = MONTHS.indexOf(m[1].toLowerCase());
    if (month >= 0) at.setMonth(month, Number(m[2]));
  }
  at.setHours(hour, minute, 0, 0);
  while (at.getTime() <= now) at.setDate(at.getDate() + 1);
  return at.getTime();
}

/** retry-after (seconds or an HTTP date) / retry-after-ms, as epoch ms; null when absent or unreadable. */
export function retryAfterOf(headers: Record<string, string | undefined>, now: number = Date.now()): number | null {
  const ms = headers['retry-after-ms'];
  if (ms !== undefined && /^\d+(\.\d+)?$/.test(ms.trim())) return now + Number(ms);
  const after = headers['retry-after'];
  if (after !== undefined) {
    if (/^\d+$/.test(after.trim())) return now + Number(after) * 1000;
    const date = Date.parse(after);
    if (!Number.isNaN(date)) return date;
  }
  for (const name of [
    'anthropic-ratelimit-unified-reset',
    'anthropic-ratelimit-requests-reset',
    'anthropic-ratelimit-tokens-reset',
    'x-ratelimit-reset-requests',
  ]) {
    const v = headers[name];
    if (v === undefined) continue;
    if (/^\d{9,}$/.test(v.trim())) return Number(v) * (v.trim().length > 11 ? 1 : 1000);
    const date = Date.parse(v);
    if (!Number.isNaN(date)) return date;
  }
  return null;
}

const USAGE_LIMIT =
  /(usage limit|limit reached|quota (?:exceeded|exhausted)|out of (?:credits|usage)|rate[ _-]?limit(?:ed)?|too many requests|resource[_ ]exhausted)/i;
const OVERLOADED = /\b(529|overloaded)/i;
const STATUS_429 = /\b429\b/;

/** A rate/usage-limit refusal in a CLI's text, as a RateLimitError carrying the reset time; else null. */
export function rateLimitOf(text: string, now: number = Date.now()): RateLimitError | null {
  const line = text.split('\n').find((l) => USAGE_LIMIT.test(l) || STATUS_429.test(l) || OVERLOADED.test(l));
  if (line === undefined) return null;
  const kind = /usage|quota|credits|limit reached/i.test(line)
    ? 'usage'
    : OVERLOADED.test(line)
      ? 'overloaded'
      : 'rate';
  const resetAt = resetTimeOf(text, now);
  const when = resetAt === null ? 'no reset time given' : `resets ${new Date(resetAt).toTimeString().slice(0, 5)}`;
  return new RateLimitError(
    `${kind === 'usage' ? 'usage limit' : kind === 'overloaded' ? 'model overloaded' : 'rate limit'} (${when}): ${line.trim().slice(0, 200)}`,
    resetAt,
    kind,
  );
}

export function notLoggedIn(preset: string, hint: string, detail: string): AgentSetupError {
  return new AgentSetupError(`${preset} is not logged in: ${hint} (${detail.trim().slice(0, 160)})`, 'not-logged-in');
}
