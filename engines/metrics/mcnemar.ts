// McNemar's exact test for two configurations' binary outcomes on the same items: only the
// discordant items count (b: A succeeded and B did not; c: the reverse). Under the null
// hypothesis each discordant item is a fair coin, so the two-sided p-value is twice the
// smaller binomial tail of Binomial(b + c, 1/2), capped at 1.

export interface McNemarResult {
  /** Items where A succeeded and B did not. */
  b: number;
  /** Items where B succeeded and A did not. */
  c: number;
  p: number;
}

/** P(X ≤ x) for X ~ Binomial(n, 1/2), summed in log space so large n does not overflow. */
export function binomialHalfCdf(x: number, n: number): number {
  if (x < 0) return 0;
  if (x >= n) return 1;
  let logC = 0; // log C(n, 0)
  let sum = 0;
  const logHalfN = n * Math.log(0.5);
  for (let i = 0; i <= x; i++) {
    if (i > 0) logC += Math.log(n - i + 1) - Math.log(i);
    sum += Math.exp(logC + logHalfN);
  }
  return Math.min(1, sum);
}

export function mcnemarExact(b: number, c: number): McNemarResult {
  if (!Number.isInteger(b) || !Number.isInteger(c) || b < 0 || c < 0) throw new Error(`McNemar needs counts ≥ 0, got b=${b}, c=${c}`);
  const n = b + c;
  const p = n === 0 ? 1 : Math.min(1, 2 * binomialHalfCdf(Math.min(b, c), n));
  return { b, c, p };
}

/** McNemar on paired outcomes (same order: item i of `a` is item i of `b`). */
export function mcnemarPaired(a: readonly boolean[], b: readonly boolean[]): McNemarResult {
  if (a.length !== b.length) throw new Error(`paired outcomes differ in length: ${a.length} vs ${b.length}`);
  let onlyA = 0;
  let onlyB = 0;
  for (let i = 0; i < a.length; i++) {
    if (a[i] && !b[i]) onlyA++;
    else if (!a[i] && b[i]) onlyB++;
  }
  return mcnemarExact(onlyA, onlyB);
}

/** Holm's step-down adjustment of p-values (same order as given). */
export function holm(ps: readonly number[]): number[] {
  const order = ps.map((p, i) => ({ p, i })).sort((x, y) => x.p - y.p);
  const out = new Array<number>(ps.length);
  let running = 0;
  order.forEach(({ p, i }, rank) => {
    running = Math.max(running, Math.min(1, (ps.length - rank) * p));
    out[i] = running;
  });
  return out;
}
