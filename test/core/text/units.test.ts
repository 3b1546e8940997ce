import { describe, expect, it } from 'vitest';
import { parseDuration, parseSize, parseUsd } from '../../../src/core/text/parse-units.js';
import { formatDuration, formatLimitDuration, formatTokens, formatUsd } from '../../../src/core/text/format-units.js';

const value = <T>(p: { ok: true; value: T } | { ok: false; message: string }): T => {
  if (!p.ok) throw new Error(p.message);
  return p.value;
};
const message = (p: { ok: boolean; message?: string }): string => (p.ok ? '' : (p.message ?? ''));

describe('parseSize', () => {
  it.each([
    ['500k', 500_000],
    ['500K', 500_000],
    ['5M', 5_000_000],
    ['1.5M', 1_500_000],
    ['1.1M', 1_100_000],
    ['2.5k', 2500],
    ['123', 123],
    [' 42 ', 42],
    [750, 750],
    ['0', 0],
  ] as const)('%s → %d', (input, expected) => {
    expect(value(parseSize(input))).toBe(expected);
  });

  it.each(['5Q', '', 'k', '5m', '-5k', '1.2.3M', '5 M tokens', '0.0005k'])('refuses %j', (input) => {
    expect(parseSize(input).ok).toBe(false);
  });

  it('says what is wrong and what is expected', () => {
    expect(message(parseSize('5Q'))).toBe(
      "malformed size '5Q': use a number with an optional k or M suffix, e.g. 500k or 1.5M",
    );
    expect(message(parseSize('0.0005k'))).toContain('not a whole number');
    expect(parseSize(-1).ok).toBe(false);
    expect(parseSize(1.5).ok).toBe(false);
  });
});

describe('parseDuration', () => {
  it.each([
    ['30s', 30_000],
    ['30m', 1_800_000],
    ['8h', 28_800_000],
    ['1h30m', 5_400_000],
    ['1h 30m', 5_400_000],
    ['1h30m15s', 5_415_000],
    ['1.5h', 5_400_000],
    ['90', 90_000],
    [45, 45_000],
  ] as const)('%s → %d ms', (input, expected) => {
    expect(value(parseDuration(input))).toBe(expected);
  });

  it.each(['30x', '', 'h', '30m1h', '1h1h', 'm30', '-5m', '30 minutes'])('refuses %j', (input) => {
    expect(parseDuration(input).ok).toBe(false);
  });

  it('says what is wrong', () => {
    expect(message(parseDuration('30x'))).toMatch(/^malformed duration '30x': use a number with an s, m or h suffix/);
    expect(message(parseDuration('30m1h'))).toContain('largest first');
  });
});

describe('parseUsd', () => {
  it.each([
    ['2', 2],
    ['2.50', 2.5],
    ['$2', 2],
    ['$0.75', 0.75],
    [3, 3],
  ] as const)('%s → %d', (input, expected) => {
    expect(value(parseUsd(input))).toBe(expected);
  });

  it.each(['two', '€2', '2$', '-1', '$', '1,000'])('refuses %j', (input) => {
    expect(message(parseUsd(input))).toContain(`malformed amount '${input}'`);
  });
});

describe('formatting', () => {
  it.each([
    [0, '0'],
    [512, '512'],
    [1500, '1.5k'],
    [2000, '2k'],
    [512_000, '512k'],
    [999_600, '1M'],
    [1_200_000, '1.2M'],
    [25_000_000, '25M'],
  ])('formatTokens(%d) = %s', (n, text) => {
    expect(formatTokens(n)).toBe(text);
  });

  it.each([
    [0, '0s'],
    [42_900, '42s'],
    [185_000, '3m 05s'],
    [3_720_000, '1h 02m'],
    [-5, '0s'],
    [400, '<1s'],
    [1_200, '1s'],
    [11_100_000, '3h 05m'],
  ])('formatDuration(%d) = %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });

  it.each([
    [0, '$0.00'],
    [0.42, '$0.42'],
    [12, '$12.00'],
    [0.4213, '$0.42'],
    [0.01, '$0.01'],
    [0.00999, '$0.01'],
    [0.0042, '$0.0042'],
    [0.001, '$0.0010'],
    [0.00004, '<$0.0001'],
    [1.5, '$1.50'],
    [1234.5, '$1234.50'],
    [-0.42, '-$0.42'],
  ])('formatUsd(%d) = %s', (x, text) => {
    expect(formatUsd(x)).toBe(text);
  });

  it.each([
    [8 * 3_600_000, '8h'],
    [30 * 60_000, '30m'],
    [90_000, '90s'],
    [90_500, '1m 30s'],
    [0, '0s'],
  ])('formatLimitDuration(%d) = %s', (ms, text) => {
    expect(formatLimitDuration(ms)).toBe(text);
  });
});
