/**
 * How the page writes tokens, dollars and durations: the same forms as the
 * terminal view and the report (`1.2M`, `$0.42`, `3m 05s`), and the five-cell meter against a gate.
 */
export const FORMAT_JS = String.raw`
function trimZero(text) {
  return text.endsWith('.0') ? text.slice(0, -2) : text;
}

export function tokens(n) {
  const abs = Math.abs(n);
  const sign = n < 0 ? '-' : '';
  if (abs < 1000) return sign + Math.round(abs);
  const k = abs / 1000;
  const kText = k < 10 ? trimZero(k.toFixed(1)) : String(Math.round(k));
  if (Number(kText) < 1000) return sign + kText + 'k';
  const m = abs / 1000000;
  return sign + (m < 10 ? trimZero(m.toFixed(1)) : String(Math.round(m))) + 'M';
}

export function usd(x) {
  const abs = Math.abs(x);
  const sign = x < 0 ? '-' : '';
  const fine = abs.toFixed(4);
  if (Number(fine) >= 0.01 || abs === 0) return sign + '$' + abs.toFixed(2);
  if (Number(fine) === 0) return sign + '<$0.0001';
  return sign + '$' + fine;
}

export function duration(ms) {
  if (ms > 0 && ms < 1000) return '<1s';
  const total = Math.max(0, Math.floor(ms / 1000));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  const pad = (v) => String(v).padStart(2, '0');
  if (h > 0) return h + 'h ' + pad(m) + 'm';
  if (m > 0) return m + 'm ' + pad(s) + 's';
  return s + 's';
}

/** ▮▮▯▯▯ for a ratio of a limit. */
export function meter(ratio, cells = 5) {
  const r = Math.min(1, Math.max(0, Number.isFinite(ratio) ? ratio : 0));
  const filled = Math.max(r >= 0.01 ? 1 : 0, Math.round(r * cells));
  return '\u25ae'.repeat(filled) + '\u25af'.repeat(cells - filled);
}

/** green under 60 % of a limit, yellow under 90 %, red from there on (as the terminal view) */
export function ratioClass(ratio) {
  return ratio >= 0.9 ? 'over' : ratio >= 0.6 ? 'near' : 'under';
}

export function againstLimit(value, limit, fmt) {
  return limit === null || limit === undefined ? fmt(value) : fmt(value) + '/' + fmt(limit);
}

export const STATUS_SYMBOL = {
  queued: '\u00b7',
  running: '\u25b6',
  'awaiting-approval': '?',
  verified: '\u2714',
  merged: '\u2713',
  discarded: '\u232b',
  failed: '\u2717',
  conflict: '\u26a0',
};

export const STATUS_ORDER = ['running', 'awaiting-approval', 'queued', 'verified', 'merged', 'conflict', 'failed', 'discarded'];

export const STATE_SYMBOL = { idle: '\u25cc', running: '\u25b6', paused: '\u2016', stopping: '\u25a0', finished: '\u2714' };
`;
