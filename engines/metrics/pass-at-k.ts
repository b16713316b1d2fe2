// pass@k, the unbiased way: with n samples of an item of which c succeed, the chance that k
// samples drawn without replacement contain a success is 1 − C(n−c, k)/C(n, k). Averaged over
// items it estimates the rate a system reaches when it is allowed k tries, without the bias of
// "any of the first k samples" (which depends on the samples' order and wastes the other n − k).
// "Any of n" is pass@n. Pure.
import type { SweepRunRecord } from '../../common/sweep';
import type { BootstrapOptions, Interval } from './bootstrap';
import type { ItemRuns } from './item-outcomes';

/**
 * 1 − C(n−c, k)/C(n, k) for one item, computed as 1 − ∏_{i=n−c+1}^{n} (1 − k/i), which needs no
 * large binomials. Throws on arguments outside 0 ≤ c ≤ n, 1 ≤ k ≤ n (integers).
 */
export function passAtK(n: number, c: number, k: number): number {
  for (const [name, v] of [
    ['n', n],
    ['c', c],
    ['k', k],
  ] as const) {
    if (!Number.isInteger(v) || v < 0) throw new RangeError(`pass@k: ${name} must be a non-negative integer, got ${v}`);
  }
  if (c > n) throw new RangeError(`pass@k: c (${c}) exceeds n (${n})`);
  if (k < 1 || k > n) throw new RangeError(`pass@k: k must be in 1..n (n = ${n}), got ${k}`);
  // Fewer failures than draws: every draw of k holds a success.
  if (n - c < k) return 1;
  let allFail = 1;
  for (let i = n - c + 1; i <= n; i++) allFail *= 1 - k / i;
  return 1 - allFail;
}

/** The k's a group of items supports: 1..(the fewest samples any counted item has). */
export function passAtKRange(items: readonly ItemRuns[]): number[] {
  if (items.length === 0) return [];
  const n = Math.min(...items.map((it) => it.runs.length));
  return Array.from({ length: n }, (_, i) => i + 1);
}

/** One item's pass@k for a success predicate over its runs (every run is one sample). */
export function itemPassAtK(item: ItemRuns, ok: (r: SweepRunRecord) => boolean, k: number): number {
  return passAtK(item.runs.length, item.runs.filter(ok).length, k);
}

export interface PassAtK {
  k: number;
  /** The mean over items of each item's pass@k, with its 95% interval over items. */
  rate: Interval;
}

/**
 * pass@k for every k the items support. `interval` turns the per-item values into an interval
 * (the report passes its rate interval: Wilson where every item's value is 0 or 1, else the
 * percentile bootstrap over items).
 */
export function passAtKCurve(
  items: readonly ItemRuns[],
  ok: (r: SweepRunRecord) => boolean,
  interval: (values: readonly number[], opts: BootstrapOptions) => Interval,
  opts: BootstrapOptions = {},
): PassAtK[] {
  return passAtKRange(items).map((k) => ({
    k,
    rate: interval(
      items.map((it) => itemPassAtK(it, ok, k)),
      opts,
    ),
  }));
}
