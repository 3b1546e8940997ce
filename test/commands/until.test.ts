import { describe, expect, it } from 'vitest';
import { parseUntil, untilTime } from '../../src/commands/until.js';

describe('--until HH:MM', () => {
  it('is the next time the local clock reads it: later today, or tomorrow once passed', () => {
    const now = new Date(2026, 0, 1, 22, 30, 15);
    expect(untilTime('23:00', now)).toEqual(new Date(2026, 0, 1, 23, 0, 0));
    expect(untilTime('07:00', now)).toEqual(new Date(2026, 0, 2, 7, 0, 0));
    expect(untilTime('22:30', now)).toEqual(new Date(2026, 0, 2, 22, 30, 0));
    expect(untilTime('22:30:20', now)).toEqual(new Date(2026, 0, 1, 22, 30, 20));
    expect(untilTime('22:30:15', now)).toEqual(new Date(2026, 0, 2, 22, 30, 15));
  });

  it('refuses what is not a 24-hour time of day', () => {
    expect(parseUntil('7:05')).toEqual({ ok: true, value: '7:05' });
    expect(parseUntil('07:05:30')).toEqual({ ok: true, value: '07:05:30' });
    for (const bad of ['24:00', '7', '07:60', '07:05:60', '07:05:', 'tomorrow', '7pm']) {
      expect(parseUntil(bad)).toMatchObject({ ok: false, message: expect.stringContaining('HH:MM') });
    }
  });
});
