// Cohen's kappa and the weighted kappa of a rescore's report, against tables worked by hand,
// including the degenerate ones (kappa undefined: said so, never NaN), and their intervals
// (percentile bootstrap over items: an item's samples are drawn together).
import { describe, expect, it } from 'vitest';
import {
  agreementTable,
  cohensKappa,
  kappaWithInterval,
  weightedKappa,
  weightedKappaWithInterval,
  type VerdictPair,
} from '../../engines/metrics/kappa';

/** One unit per item: `both` units where both judges say yes, and so on. */
function pairs(t: { both: number; firstOnly: number; secondOnly: number; neither: number }): VerdictPair[] {
  const out: VerdictPair[] = [];
  const push = (n: number, first: boolean, second: boolean) => {
    for (let i = 0; i < n; i++) out.push({ item: `item-${out.length}`, first, second });
  };
  push(t.both, true, true);
  push(t.firstOnly, true, false);
  push(t.secondOnly, false, true);
  push(t.neither, false, false);
  return out;
}

describe("Cohen's kappa", () => {
  it('matches a 2×2 table worked by hand', () => {
    // both 20, first only 5, second only 10, neither 15 (n = 50):
    //   p_o = (20 + 15) / 50 = 0.7
    //   first says yes 25/50 = 0.5, second 30/50 = 0.6
    //   p_e = 0.5·0.6 + 0.5·0.4 = 0.5
    //   κ = (0.7 − 0.5) / (1 − 0.5) = 0.4
    const t = agreementTable(pairs({ both: 20, firstOnly: 5, secondOnly: 10, neither: 15 }));
    expect(t).toEqual({ both: 20, firstOnly: 5, secondOnly: 10, neither: 15 });
    const k = cohensKappa(t)!;
    expect(k.observed).toBeCloseTo(0.7, 12);
    expect(k.expected).toBeCloseTo(0.5, 12);
    expect(k.kappa).toBeCloseTo(0.4, 12);
  });

  it('is 1 for perfect agreement over both verdicts, −1 for balanced complete disagreement, 0 at chance', () => {
    // both 3, neither 2: p_o = 1, p_e = 0.6² + 0.4² = 0.52, κ = 0.48 / 0.48 = 1.
    expect(cohensKappa({ both: 3, firstOnly: 0, secondOnly: 0, neither: 2 })!.kappa).toBeCloseTo(1, 12);
    // first only 2, second only 2: p_o = 0, p_e = 0.5·0.5 + 0.5·0.5 = 0.5, κ = −0.5 / 0.5 = −1.
    expect(cohensKappa({ both: 0, firstOnly: 2, secondOnly: 2, neither: 0 })!.kappa).toBeCloseTo(-1, 12);
    // The first always yes, the second always no: p_o = 0, p_e = 1·0 + 0·1 = 0, κ = 0.
    expect(cohensKappa({ both: 0, firstOnly: 5, secondOnly: 0, neither: 0 })!.kappa).toBe(0);
  });

  it('is undefined, not NaN, when both judges give every unit one and the same verdict', () => {
    // neither 7: p_o = 1 and p_e = 0·0 + 1·1 = 1, so κ = 0/0.
    const k = cohensKappa({ both: 0, firstOnly: 0, secondOnly: 0, neither: 7 })!;
    expect(k).toEqual({ observed: 1, expected: 1, kappa: null });
    expect(cohensKappa({ both: 4, firstOnly: 0, secondOnly: 0, neither: 0 })!.kappa).toBeNull();
    expect(cohensKappa({ both: 0, firstOnly: 0, secondOnly: 0, neither: 0 })).toBeNull();
    const est = kappaWithInterval(pairs({ both: 0, firstOnly: 0, secondOnly: 0, neither: 7 }));
    expect(est).toEqual({
      estimate: null,
      interval: null,
      reason: expect.stringMatching(/^undefined: both judges/),
      degenerateResamples: 0,
    });
    expect(kappaWithInterval([]).reason).toBe('no unit has both verdicts');
  });
});

describe('the interval of kappa (percentile bootstrap over items)', () => {
  it('holds the estimate, lies within [−1, 1], and is the same on every call (seeded)', () => {
    const p = pairs({ both: 20, firstOnly: 5, secondOnly: 10, neither: 15 });
    const a = kappaWithInterval(p, { resamples: 500 });
    expect(a.estimate).toBeCloseTo(0.4, 12);
    expect(a.interval!.lo).toBeLessThan(0.4);
    expect(a.interval!.hi).toBeGreaterThan(0.4);
    expect(a.interval!.lo).toBeGreaterThanOrEqual(-1);
    expect(a.interval!.hi).toBeLessThanOrEqual(1);
    expect(kappaWithInterval(p, { resamples: 500 })).toEqual(a);
  });

  it('draws items, each with all its samples, and leaves out resamples where kappa is undefined', () => {
    // Item A: two samples both judges call faithful; item B: two both call unfaithful.
    const units: VerdictPair[] = [
      { item: 'A', first: true, second: true },
      { item: 'A', first: true, second: true },
      { item: 'B', first: false, second: false },
      { item: 'B', first: false, second: false },
    ];
    // A sampler that always draws item A: every resample is A's two units, one verdict only,
    // so kappa is undefined in each; no interval, and the count says why.
    const onlyA = kappaWithInterval(units, { resamples: 10, sampler: () => 0 });
    expect(onlyA).toEqual({ estimate: 1, interval: null, reason: 'no interval: undefined in every resample', degenerateResamples: 10 });
    // Drawing A then B (the items, not the four units) gives back the sample itself each time.
    let i = 0;
    const same = kappaWithInterval(units, { resamples: 10, sampler: () => i++ % 2 });
    expect(same).toEqual({ estimate: 1, interval: { lo: 1, hi: 1 }, degenerateResamples: 0 });
  });

  it('has no interval over a single item', () => {
    const one = kappaWithInterval([
      { item: 'A', first: true, second: true },
      { item: 'A', first: false, second: false },
    ]);
    expect(one).toEqual({ estimate: 1, interval: null, reason: 'no interval: fewer than two items', degenerateResamples: 0 });
  });
});

describe('weighted kappa on grades (quadratic weights)', () => {
  it('matches grades worked by hand', () => {
    // Pairs (10, 9), (5, 5), (0, 2):
    //   observed: mean of (x − y)² = (1 + 0 + 4) / 3 = 5/3
    //   x̄ = 5, ȳ = 16/3; var x = (25 + 0 + 25)/3 = 50/3; var y = ((11/3)² + (1/3)² + (10/3)²)/3 = 74/9
    //   expected: (x̄ − ȳ)² + var x + var y = 1/9 + 150/9 + 74/9 = 25
    //   κ_w = 1 − (5/3) / 25 = 14/15
    const grades = [
      { first: 10, second: 9 },
      { first: 5, second: 5 },
      { first: 0, second: 2 },
    ];
    expect(weightedKappa(grades)).toBeCloseTo(14 / 15, 12);
    const est = weightedKappaWithInterval(
      grades.map((g, i) => ({ ...g, item: `i${i}` })),
      { resamples: 200 },
    );
    expect(est.estimate).toBeCloseTo(14 / 15, 12);
    expect(est.interval!.hi).toBeLessThanOrEqual(1);
  });

  it('is 0 when each judge gives one grade of its own, and undefined when both give the same one', () => {
    // 7 against 9 everywhere: observed 4, expected (7 − 9)² + 0 + 0 = 4, κ_w = 0.
    expect(
      weightedKappa([
        { first: 7, second: 9 },
        { first: 7, second: 9 },
      ]),
    ).toBe(0);
    expect(
      weightedKappa([
        { first: 8, second: 8 },
        { first: 8, second: 8 },
      ]),
    ).toBeNull();
    expect(weightedKappa([])).toBeNull();
    expect(weightedKappaWithInterval([{ item: 'a', first: 8, second: 8 }]).reason).toMatch(
      /^undefined: both judges gave every unit one and the same grade/,
    );
  });
});
