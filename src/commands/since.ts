/**
 * `--since` of `loopfleet eval`: how far back in history, as days or weeks before now (`90d`, `12w`) or a
 * date (`2026-01-31`, read as UTC midnight).
 */
export function parseSince(text: string, now: number): { ok: true; value: Date } | { ok: false; message: string } {
  const span = /^(\d{1,5})([dw])$/.exec(text.trim());
  if (span) {
    const days = Number(span[1]) * (span[2] === 'w' ? 7 : 1);
    return { ok: true, value: new Date(now - days * 86_400_000) };
  }
  if (/^\d{4}-\d{2}-\d{2}$/.test(text.trim())) {
    const date = new Date(`${text.trim()}T00:00:00Z`);
    if (!Number.isNaN(date.getTime()) && date.toISOString().startsWith(text.trim())) return { ok: true, value: date };
  }
  return { ok: false, message: `'${text}' is neither days or weeks (90d, 12w) nor a date (2026-01-31)` };
}
