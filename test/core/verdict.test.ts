import { describe, expect, it } from 'vitest';
import { parseVerdict } from '../../src/core/verdict.js';

describe('parseVerdict', () => {
  it('reads plain, fenced and embedded JSON', () => {
    expect(parseVerdict('{"pass":true,"reasons":["ok"]}')).toEqual({ pass: true, reasons: ['ok'] });
    expect(parseVerdict('```json\n{"pass":false,"reasons":["bad"]}\n```')).toEqual({ pass: false, reasons: ['bad'] });
    expect(parseVerdict('Verdict: {"pass": true, "reasons": []} done')).toEqual({ pass: true, reasons: [] });
  });
  it('treats anything else as a veto', () => {
    const v = parseVerdict('Looks good to me!');
    expect(v.pass).toBe(false);
    expect(v.reasons[0]).toMatch(/not a verdict: Looks good/);
    expect(parseVerdict('{"pass":"yes"}').pass).toBe(false);
    expect(parseVerdict('').pass).toBe(false);
  });
});
