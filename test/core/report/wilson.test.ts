import { describe, expect, it } from 'vitest';
import { wilsonInterval } from '../../../src/core/report/wilson.js';

describe('wilsonInterval', () => {
  it('matches published values', () => {
    const [lo, hi] = wilsonInterval(8, 10);
    expect(lo).toBeCloseTo(0.4902, 4);
    expect(hi).toBeCloseTo(0.9433, 4);
    const [lo2, hi2] = wilsonInterval(50, 100);
    expect(lo2).toBeCloseTo(0.4038, 4);
    expect(hi2).toBeCloseTo(0.5962, 4);
  });

  it('stays inside [0, 1] and is exact at the edges', () => {
    const [lo0, hi0] = wilsonInterval(0, 10);
    expect(lo0).toBe(0);
    expect(hi0).toBeCloseTo(0.2775, 4);
    const [loN, hiN] = wilsonInterval(10, 10);
    expect(loN).toBeCloseTo(0.7225, 4);
    expect(hiN).toBe(1);
    expect(wilsonInterval(1, 1)[0]).toBeCloseTo(0.2065, 4);
  });

  it('says nothing is known of an empty set, and refuses what is not a count', () => {
    expect(wilsonInterval(0, 0)).toEqual([0, 1]);
    expect(() => wilsonInterval(3, 2)).toThrow(/3 of 2/);
    expect(() => wilsonInterval(-1, 2)).toThrow(RangeError);
    expect(() => wilsonInterval(0.5, 2)).toThrow(RangeError);
  });
});
