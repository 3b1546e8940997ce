import { describe, expect, it } from 'vitest';
import { costOf, endOfLife, priceOf, PRICE_TABLE } from '../../../src/core/budget/pricing.js';

describe('pricing', () => {
  it('prices each family, dated aliases by prefix, the longest entry winning', () => {
    expect(priceOf('claude-sonnet-5-5')).toEqual({
      input: 2,
      cacheWrite5m: 2.5,
      cacheWrite1h: 4,
      cacheRead: 0.2,
      output: 10,
    });
    expect(priceOf('claude-sonnet-5-20260301')).toBe(PRICE_TABLE['claude-sonnet-5']);
    expect(priceOf('claude-opus-5-5-20261101')).toEqual({
      input: 4,
      cacheWrite5m: 5,
      cacheWrite1h: 8,
      cacheRead: 0.2,
      output: 20,
    });
    expect(priceOf('claude-opus-5')).toEqual({
      input: 5,
      cacheWrite5m: 6.25,
      cacheWrite1h: 10,
      cacheRead: 0.5,
      output: 25,
    });
    for (const v of ['4-5', '4-6', '4-7', '4-8'])
      expect(priceOf(`claude-opus-${v}`)).toBe(PRICE_TABLE['claude-opus-5']);
    expect(priceOf('claude-sonnet-4-5-20250929')).toEqual({
      input: 3,
      cacheWrite5m: 3.75,
      cacheWrite1h: 6,
      cacheRead: 0.3,
      output: 15,
    });
    expect(priceOf('claude-haiku-4-5')).toEqual({
      input: 1,
      cacheWrite5m: 1.25,
      cacheWrite1h: 2,
      cacheRead: 0.1,
      output: 5,
    });
    expect(priceOf('anthropic/claude-haiku-4-5')).toBe(PRICE_TABLE['claude-haiku-4-5']);
  });

  it('returns null for unknown models and near misses', () => {
    expect(priceOf('gpt-5')).toBeNull();
    expect(priceOf('claude-opus-4-1')).toBeNull();
    expect(priceOf('claude-sonnet-55')).toBeNull();
    expect(priceOf('qwen2.5-coder')).toBeNull();
  });

  it('lets overrides win, exactly or by prefix', () => {
    const cheap = { input: 0, cacheWrite5m: 0, cacheWrite1h: 0, cacheRead: 0, output: 0 };
    expect(priceOf('qwen2.5-coder', { 'qwen2.5-coder': cheap })).toBe(cheap);
    expect(priceOf('claude-sonnet-5-5-20261015', { 'claude-sonnet-5-5': cheap })).toBe(cheap);
  });

  it('costs usage with cache writes at the 5-minute rate', () => {
    const price = priceOf('claude-sonnet-5-5')!;
    expect(costOf({ input: 1_000_000, output: 0, cacheWrite: 0, cacheRead: 0 }, price)).toBeCloseTo(2);
    expect(costOf({ input: 100_000, output: 20_000, cacheWrite: 200_000, cacheRead: 1_000_000 }, price)).toBeCloseTo(
      0.2 + 0.2 + 0.5 + 0.2,
    );
  });

  it('knows the end of life of claude-sonnet-4-5', () => {
    expect(endOfLife('claude-sonnet-4-5-20250929')).toBe('2026-11-30');
    expect(endOfLife('claude-sonnet-5-5')).toBeNull();
  });
});
