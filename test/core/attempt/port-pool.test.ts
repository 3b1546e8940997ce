import { describe, expect, it } from 'vitest';
import { PortPool } from '../../../src/core/attempt/port-pool.js';

describe('PortPool', () => {
  it('gives running tasks distinct ports and reuses released ones', () => {
    const pool = new PortPool({ from: 4100, to: 4102 });
    expect(pool.acquire('T-1')).toBe(4100);
    expect(pool.acquire('T-2')).toBe(4101);
    expect(pool.acquire('T-1')).toBe(4100);
    pool.release('T-1');
    expect(pool.acquire('T-3')).toBe(4100);
    expect(pool.acquire('T-4')).toBe(4102);
    expect(() => pool.acquire('T-5')).toThrow(/no free port in 4100-4102 for T-5/);
  });
});
