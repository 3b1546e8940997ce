import { APIError } from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { toModelError } from '../../../src/adapters/model/anthropic-errors.js';
import { RateLimitError } from '../../../src/domain/errors.js';

describe('a 429 or 529 left after the SDK retries', () => {
  it('becomes a RateLimitError carrying the reset time from the headers', () => {
    const before = Date.now();
    const e = toModelError(
      APIError.generate(
        429,
        { type: 'error', error: { type: 'rate_limit_error', message: 'slow down' } },
        undefined,
        new Headers({ 'retry-after': '120' }),
      ),
      [],
    );
    expect(e).toBeInstanceOf(RateLimitError);
    expect((e as RateLimitError).kind).toBe('rate');
    expect((e as RateLimitError).resetAt! - before).toBeGreaterThanOrEqual(120_000);
    expect((e as RateLimitError).resetAt! - before).toBeLessThan(125_000);
    expect(e.message).toMatch(/HTTP 429, rate_limit_error\): slow down/);
  });
  it('an overload without a reset time carries null (the fleet backs off)', () => {
    const e = toModelError(
      APIError.generate(
        529,
        { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
        undefined,
        new Headers(),
      ),
      ['sk-secret'],
    );
    expect(e).toMatchObject({ kind: 'overloaded', resetAt: null });
  });
  it('other API errors stay what they were', () => {
    const e = toModelError(
      APIError.generate(
        500,
        { type: 'error', error: { type: 'api_error', message: 'boom' } },
        undefined,
        new Headers(),
      ),
      [],
    );
    expect(e).not.toBeInstanceOf(RateLimitError);
  });
});
