import type { ModelPrice, Usage } from '../../domain/types.js';

/**
 * The one price table: US dollars per million tokens. A model id matches an entry when it equals the
 * entry's id or continues it after a `-` or `@` (dated snapshots such as `claude-sonnet-5-5-20261015`),
 * and the longest matching entry wins, so `claude-sonnet-5-5` is never priced as `claude-sonnet-5`.
 * Provider prefixes (`anthropic/`, `anthropic.`, `us.anthropic.`) are ignored.
 */

function price(
  input: number,
  cacheWrite5m: number,
  cacheWrite1h: number,
  cacheRead: number,
  output: number,
): ModelPrice {
  return Object.freeze({ input, cacheWrite5m, cacheWrite1h, cacheRead, output });
}

const SONNET_5 = price(2, 2.5, 4, 0.2, 10);
const OPUS_5_5 = price(4, 5, 8, 0.2, 20);
const OPUS = price(5, 6.25, 10, 0.5, 25);
const SONNET_4 = price(3, 3.75, 6, 0.3, 15);
const HAIKU_4_5 = price(1, 1.25, 2, 0.1, 5);

export const PRICE_TABLE: Readonly<Record<string, ModelPrice>> = Object.freeze({
  'claude-sonnet-5-5': SONNET_5,
  'claude-sonnet-5': SONNET_5,
  'claude-opus-5-5': OPUS_5_5,
  'claude-opus-5': OPUS,
  'claude-opus-4-8': OPUS,
  'claude-opus-4-7': OPUS,
  'claude-opus-4-6': OPUS,
  'claude-opus-4-5': OPUS,
  'claude-sonnet-4': SONNET_4,
  'claude-haiku-4-5': HAIKU_4_5,
});

/** Models with a published end of life (ISO date), so a run can warn before a configured model disappears. */
export const END_OF_LIFE: Readonly<Record<string, string>> = Object.freeze({
  'claude-sonnet-4-5': '2026-11-30',
  'claude-opus-4-5': '2027-01-22',
});

/** The model id without a provider prefix, lower-cased. */
export function canonicalModel(model: string): string {
  const lower = model.trim().toLowerCase();
  const at = lower.indexOf('claude-');
  return at > 0 && /[./:]$/.test(lower.slice(0, at)) ? lower.slice(at) : lower;
}

function matches(model: string, id: string): boolean {
  if (!model.startsWith(id)) return false;
  const next = model.charAt(id.length);
  return next === '' || next === '-' || next === '@';
}

function lookup(model: string, table: Readonly<Record<string, ModelPrice>>): ModelPrice | null {
  let best: string | null = null;
  for (const id of Object.keys(table)) {
    const key = canonicalModel(id);
    if (matches(model, key) && (best === null || key.length > canonicalModel(best).length)) best = id;
  }
  return best === null ? null : (table[best] ?? null);
}

/**
 * The price of `model`: the overrides first (exact id, then the same prefix rule), then the table.
 * null means the model is unknown, and the caller reports it as unpriced rather than guessing.
 */
export function priceOf(model: string, overrides: Readonly<Record<string, ModelPrice>> = {}): ModelPrice | null {
  const exact = overrides[model];
  if (exact !== undefined) return exact;
  const canonical = canonicalModel(model);
  return lookup(canonical, overrides) ?? lookup(canonical, PRICE_TABLE);
}

/**
 * US dollars for `usage` at `price`. Cache writes are priced at the 5-minute rate: that is the TTL the
 * client requests (`cache_control: {type: 'ephemeral'}` without a ttl).
 */
export function costOf(usage: Usage, price: ModelPrice): number {
  return (
    (usage.input * price.input +
      usage.cacheWrite * price.cacheWrite5m +
      usage.cacheRead * price.cacheRead +
      usage.output * price.output) /
    1_000_000
  );
}

/** The end-of-life date of `model`, if it has one. */
export function endOfLife(model: string): string | null {
  const canonical = canonicalModel(model);
  for (const [id, date] of Object.entries(END_OF_LIFE)) if (matches(canonical, id)) return date;
  return null;
}
