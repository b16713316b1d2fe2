// Percentile bootstrap over items, seeded so a report computed twice from the same records says
// the same thing. Items (not runs) are the unit resampled: the k samples of one item are not
// independent draws of the benchmark, and paired comparisons need the same items on both sides.
import { uniformInt } from 'pure-rand/distribution/uniformInt';
import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus';

/** Draws an index in [0, n). Injectable so tests can script the resamples. */
export type IndexSampler = (n: number) => number;

/** The seeded sampler every report uses (xoroshiro128+ and its unbiased integer draw, from
 * pure-rand). */
export function seededSampler(seed: number): IndexSampler {
  const rng = xoroshiro128plus(seed);
  return (n) => uniformInt(rng, 0, n - 1);
}

export const DEFAULT_RESAMPLES = 2000;
export const DEFAULT_SEED = 20260;

export interface BootstrapOptions {
  /** Number of resamples B. */
  resamples?: number;
  seed?: number;
  /** Replaces the seeded sampler (tests). */
  sampler?: IndexSampler;
  /** Coverage of the interval; 0.95 by default. */
  level?: number;
}

/** A point estimate with its interval (percentile bootstrap unless `method` says otherwise). */
export interface Interval {
  estimate: number;
  lo: number;
  hi: number;
  method?: 'wilson' | 'bootstrap';
}

/** Linear-interpolation quantile of sorted values (R's type 7, numpy's default). */
export function quantileSorted(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return NaN;
  const h = (sorted.length - 1) * q;
  const i = Math.floor(h);
  const lo = sorted[i]!;
  const hi = sorted[Math.min(i + 1, sorted.length - 1)]!;
  return lo + (h - i) * (hi - lo);
}

export function quantile(values: readonly number[], q: number): number {
  return quantileSorted(
    [...values].sort((a, b) => a - b),
    q,
  );
}

/**
 * The statistic on the full sample, and its values over `resamples` draws of n item indices
 * with replacement, sorted. `statistic` receives the drawn indices (length n, repeats allowed).
 * Resamples where the statistic is NaN (e.g. a ratio with a zero denominator) are left out.
 */
export function bootstrapDistribution(
  n: number,
  statistic: (indices: readonly number[]) => number,
  opts: BootstrapOptions = {},
): { estimate: number; resampled: number[] } {
  const all = Array.from({ length: n }, (_, i) => i);
  const estimate = statistic(all);
  const resampled: number[] = [];
  forEachResample(n, opts, (idx) => {
    const s = statistic(idx);
    if (!Number.isNaN(s)) resampled.push(s);
  });
  resampled.sort((x, y) => x - y);
  return { estimate, resampled };
}

// A report bootstraps dozens of statistics over the same items with the same seed, so the drawn
// indices are the same every time: draw them once per (seed, n, B) and replay them. A few
// tables are kept (2000 × 577 items is 4.6 MB).
const drawn = new Map<string, Int32Array>();
const DRAWN_KEEP = 4;

function drawnIndices(seed: number, n: number, b: number): Int32Array {
  const key = `${seed}/${n}/${b}`;
  let table = drawn.get(key);
  if (!table) {
    const draw = seededSampler(seed);
    table = new Int32Array(n * b);
    for (let i = 0; i < table.length; i++) table[i] = draw(n);
    if (drawn.size >= DRAWN_KEEP) drawn.delete(drawn.keys().next().value!);
    drawn.set(key, table);
  }
  return table;
}

/** Calls `fn` with each resample's n indices (the same array, refilled). */
function forEachResample(n: number, opts: BootstrapOptions, fn: (indices: readonly number[]) => void): void {
  if (n === 0) return;
  const b = opts.resamples ?? DEFAULT_RESAMPLES;
  const idx = new Array<number>(n);
  if (opts.sampler) {
    for (let r = 0; r < b; r++) {
      for (let i = 0; i < n; i++) idx[i] = opts.sampler(n);
      fn(idx);
    }
    return;
  }
  const table = drawnIndices(opts.seed ?? DEFAULT_SEED, n, b);
  for (let r = 0; r < b; r++) {
    for (let i = 0; i < n; i++) idx[i] = table[r * n + i]!;
    fn(idx);
  }
}

/** Percentile intervals of several statistics computed from the same resamples (e.g. the
 * effects of a factorial design, which must see the same items). */
export function bootstrapMany(
  n: number,
  statistic: (indices: readonly number[]) => readonly number[],
  opts: BootstrapOptions = {},
): Interval[] {
  const all = Array.from({ length: n }, (_, i) => i);
  const estimate = statistic(all);
  const resampled = estimate.map(() => [] as number[]);
  forEachResample(n, opts, (idx) => {
    statistic(idx).forEach((v, j) => {
      if (!Number.isNaN(v)) resampled[j]!.push(v);
    });
  });
  const alpha = (1 - (opts.level ?? 0.95)) / 2;
  return estimate.map((e, j) => {
    const sorted = resampled[j]!.sort((x, y) => x - y);
    return { estimate: e, lo: quantileSorted(sorted, alpha), hi: quantileSorted(sorted, 1 - alpha) };
  });
}

/** The statistic on the full sample with its percentile interval over the resamples. */
export function bootstrap(n: number, statistic: (indices: readonly number[]) => number, opts: BootstrapOptions = {}): Interval {
  const { estimate, resampled } = bootstrapDistribution(n, statistic, opts);
  const alpha = (1 - (opts.level ?? 0.95)) / 2;
  return { estimate, lo: quantileSorted(resampled, alpha), hi: quantileSorted(resampled, 1 - alpha) };
}

/** Mean of per-item values with its bootstrap interval. */
export function meanInterval(values: readonly number[], opts: BootstrapOptions = {}): Interval {
  return bootstrap(values.length, (ix) => meanAt(values, ix), opts);
}

/** Mean of `values` at the drawn indices (no intermediate array: this runs B times). */
export function meanAt(values: readonly number[], ix: readonly number[]): number {
  if (ix.length === 0) return NaN;
  let s = 0;
  for (let j = 0; j < ix.length; j++) s += values[ix[j]!]!;
  return s / ix.length;
}

export function mean(values: readonly number[]): number {
  if (values.length === 0) return NaN;
  let s = 0;
  for (const v of values) s += v;
  return s / values.length;
}
