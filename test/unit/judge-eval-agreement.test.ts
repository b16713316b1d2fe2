import { describe, expect, it } from 'vitest';
import { agreement, confusion, statsOf, type VerdictPair } from '../../engines/judge-eval/agreement';

/** n pairs of (reference, predicted). */
function pairs(spec: { tp: number; fp: number; fn: number; tn: number }): VerdictPair[] {
  const out: VerdictPair[] = [];
  const push = (n: number, reference: boolean, predicted: boolean) => {
    for (let i = 0; i < n; i++) out.push({ reference, predicted });
  };
  push(spec.tp, true, true);
  push(spec.fp, false, true);
  push(spec.fn, true, false);
  push(spec.tn, false, false);
  return out;
}

describe('agreement statistics', () => {
  it('match a 2×2 table worked by hand', () => {
    // TP 3, FP 1, FN 2, TN 4: accuracy 7/10; precision 3/4; recall 3/5;
    // chance agreement 0.5·0.4 + 0.5·0.6 = 0.5, so kappa = (0.7 − 0.5) / (1 − 0.5) = 0.4.
    const s = statsOf(confusion(pairs({ tp: 3, fp: 1, fn: 2, tn: 4 })));
    expect(s.confusion).toEqual({ tp: 3, fp: 1, fn: 2, tn: 4 });
    expect(s.n).toBe(10);
    expect(s.accuracy).toBeCloseTo(0.7, 12);
    expect(s.precision).toBeCloseTo(0.75, 12);
    expect(s.recall).toBeCloseTo(0.6, 12);
    expect(s.kappa).toBeCloseTo(0.4, 12);
  });

  it('give a negative kappa for systematic disagreement and leave undefined ratios empty', () => {
    // Always the opposite: accuracy 0, chance agreement 0.5, kappa −1.
    const opposite = statsOf(confusion(pairs({ tp: 0, fp: 2, fn: 2, tn: 0 })));
    expect(opposite.kappa).toBeCloseTo(-1, 12);
    // Nothing predicted yes: no precision; the reference has no yes: no recall.
    const none = statsOf(confusion(pairs({ tp: 0, fp: 0, fn: 0, tn: 5 })));
    expect(none.precision).toBeNull();
    expect(none.recall).toBeNull();
    // Both sides constant and equal: perfect agreement, kappa 1 by convention.
    expect(none.kappa).toBe(1);
    expect(statsOf(confusion([])).accuracy).toBeNull();
  });

  it('brackets each statistic with a reproducible bootstrap interval', () => {
    const data = pairs({ tp: 30, fp: 10, fn: 20, tn: 40 });
    const a = agreement(data, { seed: 7, resamples: 500 });
    const b = agreement(data, { seed: 7, resamples: 500 });
    expect(a.ci).toEqual(b.ci);
    for (const k of ['accuracy', 'precision', 'recall', 'kappa'] as const) {
      expect(a.ci[k]!.lo).toBeLessThanOrEqual(a[k]!);
      expect(a.ci[k]!.hi).toBeGreaterThanOrEqual(a[k]!);
      expect(a.ci[k]!.hi).toBeGreaterThan(a.ci[k]!.lo);
    }
    // With 100 items the accuracy interval is roughly ±9 points around 0.7.
    expect(a.ci.accuracy!.lo).toBeGreaterThan(0.55);
    expect(a.ci.accuracy!.hi).toBeLessThan(0.85);
    // Unanimous data has a degenerate interval.
    const same = agreement(pairs({ tp: 5, fp: 0, fn: 0, tn: 5 }), { seed: 1, resamples: 200 });
    expect(same.ci.accuracy).toEqual({ lo: 1, hi: 1 });
  });
});
