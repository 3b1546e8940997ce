/**
 * Text helpers both forge adapters share: the token redacted from whatever a server or a client library
 * says, and the bounds on what a forge's text may occupy in a summary.
 */

/** `pr.timeout`'s default: a forge that accepts a request and never answers costs at most this per try. */
export const DEFAULT_FORGE_TIMEOUT_MS = 30_000;

/**
 * Pages of comments (of 100) read per list per pull request and pass, newest first: a flood of comments
 * costs a bounded number of requests and bytes, and only the newest few hundred of each kind are seen.
 */
export const COMMENT_PAGES = 3;

/** The summary of one failing check, at most this many characters. */
export const SUMMARY_CHARS = 600;
/** A log excerpt: at most this many of the log's last lines, and at most this many characters. */
export const EXCERPT_LINES = 60;
export const EXCERPT_CHARS = 4000;

/**
 * `text` with every secret replaced, including the forms a token takes on the wire (URL-encoded, and the
 * base64 of `user:token` that an https remote's Basic header carries).
 */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret.length < 4) continue;
    const forms = new Set([secret, encodeURIComponent(secret), Buffer.from(secret).toString('base64')]);
    for (const user of ['x-access-token', 'oauth2']) forms.add(Buffer.from(`${user}:${secret}`).toString('base64'));
    for (const form of forms) out = out.split(form).join('[redacted]');
  }
  return out;
}

/** The first `max` characters of `text`, marked when cut. */
export function bounded(text: string, max = SUMMARY_CHARS): string {
  const trimmed = text.trim();
  return trimmed.length <= max ? trimmed : `${trimmed.slice(0, max - 1)}…`;
}

/** The end of a log: its last EXCERPT_LINES lines, at most EXCERPT_CHARS characters; null for an empty log. */
export function logTail(text: string | null | undefined): string | null {
  if (text === null || text === undefined || text.trim() === '') return null;
  const lines = text.trimEnd().split('\n');
  let tail = lines.slice(-EXCERPT_LINES).join('\n');
  if (tail.length > EXCERPT_CHARS) tail = tail.slice(-EXCERPT_CHARS);
  return lines.length > EXCERPT_LINES || tail.length < text.trimEnd().length ? `…\n${tail}` : tail;
}

/** The combined CI state from each check's state: failing if any failed, pending if any runs, none when there are none. */
export function combinedState(
  states: readonly ('passing' | 'failing' | 'pending')[],
): 'passing' | 'failing' | 'pending' | 'none' {
  if (states.length === 0) return 'none';
  if (states.includes('failing')) return 'failing';
  if (states.includes('pending')) return 'pending';
  return 'passing';
}

/** The review state from each reviewer's latest verdict (comments do not change a verdict). */
export function reviewFromVerdicts(
  latest: Iterable<'approved' | 'changes-requested' | 'dismissed'>,
): 'none' | 'approved' | 'changes-requested' {
  const verdicts = new Set(latest);
  if (verdicts.has('changes-requested')) return 'changes-requested';
  if (verdicts.has('approved')) return 'approved';
  return 'none';
}
