// Tests and intervals that hold at any number of items, for the report's verdicts.
//
// - The paired sign-flip (permutation) test for a continuous per-item difference: under the
//   null hypothesis each item's difference is as likely positive as negative, so the p-value is
//   the share of the 2^m sign assignments (m: items with a non-zero difference) whose |sum| is
//   at least the observed one. Exact up to EXACT_SIGN_FLIP_MAX items, Monte Carlo beyond with
//   a stated number of seeded permutations (p = (1 + hits) / (1 + B), never 0).
// - The Wilson score interval for a share of successes: sensible at n = 3 and at 0% or 100%,
//   where a percentile bootstrap collapses to [0, 0].
// - The smallest p-value a test could give on this many items: when even the most extreme data
//   cannot reach 0.05, the report says so instead of a verdict.
import { seededSampler, DEFAULT_SEED, type Interval } from './bootstrap';

export const EXACT_SIGN_FLIP_MAX = 20;
export const SIGN_FLIP_PERMUTATIONS = 20_000;

export interface SignFlipResult {
  p: number;
  /** Items with a non-zero difference (the others carry no sign). */
  informative: number;
  method: 'sign-flip-exact' | 'sign-flip-monte-carlo';
  /** Monte Carlo only. */
  permutations?: number;
  /** The smallest p this test could give on these items (all differences one way). */
  minP: number;
}

export function signFlipTest(differences: readonly number[], opts: { permutations?: number; seed?: number } = {}): SignFlipResult {
  const d = differences.filter((x) => x !== 0 && Number.isFinite(x));
  const m = d.length;
  if (m === 0) return { p: 1, informative: 0, method: 'sign-flip-exact', minP: 1 };
  const observed = Math.abs(d.reduce((s, x) => s + x, 0));
  // Float sums of the same values in another order differ in the last bits.
  const tol = 1e-12 * d.reduce((s, x) => s + Math.abs(x), 0);
  if (m <= EXACT_SIGN_FLIP_MAX) {
    // Every assignment, enumerated by a Gray code: one sign changes per step.
    const signs = new Int8Array(m).fill(1);
    let sum = d.reduce((s, x) => s + x, 0);
    let hits = 0;
    const total = 2 ** m;
    for (let k = 0; k < total; k++) {
      if (k > 0) {
        let bit = 0;
        while (((k >> bit) & 1) === 0) bit++;
        signs[bit] = -signs[bit]! as 1 | -1;
        sum += 2 * signs[bit]! * d[bit]!;
      }
      if (Math.abs(sum) >= observed - tol) hits++;
    }
    return { p: hits / total, informative: m, method: 'sign-flip-exact', minP: Math.min(1, 2 / total) };
  }
  const permutations = opts.permutations ?? SIGN_FLIP_PERMUTATIONS;
  const draw = seededSampler(opts.seed ?? DEFAULT_SEED);
  let hits = 0;
  for (let r = 0; r < permutations; r++) {
    let sum = 0;
    for (let i = 0; i < m; i++) sum += draw(2) === 0 ? d[i]! : -d[i]!;
    if (Math.abs(sum) >= observed - tol) hits++;
  }
  return {
    p: (1 + hits) / (1 + permutations),
    informative: m,
    method: 'sign-flip-monte-carlo',
    permutations,
    minP: 1 / (1 + permutations),
  };
}

/** The smallest two-sided p of McNemar's exact test with `discordant` discordant items. */
export function mcnemarMinP(discordant: number): number {
  return discordant === 0 ? 1 : Math.min(1, 2 * 0.5 ** discordant);
}

/** Wilson score interval for `successes` of `n` (95% by default). */
export function wilsonInterval(successes: number, n: number, level = 0.95): Interval {
  if (n === 0) return { estimate: NaN, lo: NaN, hi: NaN };
  const z = normalQuantile(1 - (1 - level) / 2);
  const p = successes / n;
  const z2 = z * z;
  const centre = (p + z2 / (2 * n)) / (1 + z2 / n);
  const half = (z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / (1 + z2 / n);
  return { estimate: p, lo: Math.max(0, centre - half), hi: Math.min(1, centre + half) };
}

/** Inverse of the standard normal CDF (Acklam's rational approximation, |error| < 1.2e-9). */
export function normalQuantile(q: number): number {
  const a = [-39.69683028665376, 220.9460984245205, -275.9285104469687, 138.357751867269, -30.66479806614716, 2.506628277459239];
  const b = [-54.47609879822406, 161.5858368580409, -155.6989798598866, 66.80131188771972, -13.28068155288572];
  const c = [-0.007784894002430293, -0.3223964580411365, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783];
  const dd = [0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416];
  const low = 0.02425;
  if (q <= 0 || q >= 1) return q <= 0 ? -Infinity : Infinity;
  if (q < low) {
    const t = Math.sqrt(-2 * Math.log(q));
    return (
      (((((c[0]! * t + c[1]!) * t + c[2]!) * t + c[3]!) * t + c[4]!) * t + c[5]!) /
      ((((dd[0]! * t + dd[1]!) * t + dd[2]!) * t + dd[3]!) * t + 1)
    );
  }
  if (q > 1 - low) return -normalQuantile(1 - q);
  const t = q - 0.5;
  const r = t * t;
  return (
    ((((((a[0]! * r + a[1]!) * r + a[2]!) * r + a[3]!) * r + a[4]!) * r + a[5]!) * t) /
    (((((b[0]! * r + b[1]!) * r + b[2]!) * r + b[3]!) * r + b[4]!) * r + 1)
  );
}
