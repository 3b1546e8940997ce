/**
 * The Wilson score interval of a share: where the true share of verified tasks likely lies, given `k`
 * verified of `n` tasks. Chosen over the normal approximation because eval sets are small and shares often
 * sit at 0 or 1, where the normal interval collapses to a point; Wilson's stays inside [0, 1] and is wide
 * when `n` is small. No statistics library: the formula is four lines.
 */

/** z for a two-sided 95 % interval */
export const Z95 = 1.959963984540054;

/** [low, high] of the Wilson score interval for `k` successes of `n` trials; [0, 1] when `n` is 0. */
export function wilsonInterval(k: number, n: number, z: number = Z95): [number, number] {
  if (!Number.isInteger(k) || !Number.isInteger(n) || k < 0 || n < 0 || k > n)
    throw new RangeError(`wilsonInterval: ${k} of ${n} is not a count of successes`);
  if (n === 0) return [0, 1];
  const p = k / n;
  const z2 = z * z;
  const denominator = 1 + z2 / n;
  const centre = (p + z2 / (2 * n)) / denominator;
  const half = (z / denominator) * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n));
  // At k = 0 and k = n the bound is exactly 0 or 1; rounding must not push it past.
  return [k === 0 ? 0 : Math.max(0, centre - half), k === n ? 1 : Math.min(1, centre + half)];
}
