import { describe, expect, it } from 'vitest';
import type { SweepRunRecord } from '../../common/sweep';
import { passAtK } from '../../engines/metrics/pass-at-k';
import { computeSweepMetrics } from '../../engines/metrics/sweep-metrics';
import { renderSweepReport } from '../../engines/report/write-report';
import { runRecord } from '../helpers/sweep-records';

// n = 5 samples, c successes, worked by hand from 1 − C(5−c, k)/C(5, k) with
// C(5, k) = 5, 10, 10, 5, 1 for k = 1..5.
const BY_HAND: Record<number, number[]> = {
  0: [0, 0, 0, 0, 0],
  1: [1 - 4 / 5, 1 - 6 / 10, 1 - 4 / 10, 1 - 1 / 5, 1], // C(4, k) = 4, 6, 4, 1, 0
  2: [1 - 3 / 5, 1 - 3 / 10, 1 - 1 / 10, 1, 1], // C(3, k) = 3, 3, 1, 0, 0
  3: [1 - 2 / 5, 1 - 1 / 10, 1, 1, 1], // C(2, k) = 2, 1, 0, 0, 0
  4: [1 - 1 / 5, 1, 1, 1, 1], // C(1, k) = 1, 0, …
  5: [1, 1, 1, 1, 1],
};

describe('pass@k, the unbiased estimator', () => {
  it('matches the table worked by hand for n = 5, k = 1..5, c = 0..5', () => {
    for (const [c, row] of Object.entries(BY_HAND)) {
      row.forEach((want, i) => expect(passAtK(5, Number(c), i + 1), `c=${c} k=${i + 1}`).toBeCloseTo(want, 12));
    }
  });

  it('is the share of successes at k = 1 and "any of n" at k = n', () => {
    for (let n = 1; n <= 12; n++) {
      for (let c = 0; c <= n; c++) {
        expect(passAtK(n, c, 1)).toBeCloseTo(c / n, 12);
        expect(passAtK(n, c, n)).toBe(c > 0 ? 1 : 0);
      }
    }
  });

  it('stays exact where the binomials would overflow a double', () => {
    // C(2000, 1000) is far beyond 1e308; the product form needs none of it.
    expect(passAtK(2000, 1, 1000)).toBeCloseTo(0.5, 12);
    expect(passAtK(2000, 0, 1000)).toBe(0);
  });

  it('refuses k outside 1..n, c outside 0..n and non-integers', () => {
    expect(() => passAtK(5, 2, 0)).toThrow(/k must be in 1..n/);
    expect(() => passAtK(5, 2, 6)).toThrow(/k must be in 1..n/);
    expect(() => passAtK(5, 6, 1)).toThrow(/exceeds n/);
    expect(() => passAtK(5, 1.5, 1)).toThrow(/non-negative integer/);
  });
});

/** Three items of five samples each: typecheck successes c = 0, 2 and 5; BEq+ on item b only. */
function fiveSamples(): SweepRunRecord[] {
  const counts: Record<string, number> = { a: 0, b: 2, c: 5 };
  const out: SweepRunRecord[] = [];
  for (const [item, c] of Object.entries(counts)) {
    for (let s = 0; s < 5; s++) {
      const compiled = s < c;
      out.push(
        runRecord({
          config: 'X',
          item,
          sample: s,
          compiled,
          equivalent: compiled ? item === 'b' : null,
          judgeGrade: compiled ? 8 : null,
          faithful: compiled ? true : null,
        }),
      );
    }
  }
  return out;
}

describe('pass@k in the sweep metrics and the report', () => {
  const m = computeSweepMetrics(fiveSamples(), { resamples: 300 }).configs[0]!;

  it("averages the items' pass@k for every k ≤ n, with pass@1 = @1 and pass@n = any of n", () => {
    const tc = m.typecheck!.passAtK;
    expect(tc.map((p) => p.k)).toEqual([1, 2, 3, 4, 5]);
    tc.forEach((p, i) => expect(p.rate.estimate, `k=${p.k}`).toBeCloseTo((BY_HAND[0]![i]! + BY_HAND[2]![i]! + BY_HAND[5]![i]!) / 3, 12));
    expect(tc[0]!.rate.estimate).toBeCloseTo(m.typecheck!.at1.estimate, 12);
    expect(tc[4]!.rate.estimate).toBeCloseTo(m.typecheck!.atK.estimate, 12);
    // BEq+: c = 0, 2, 0 over the three items.
    m.beq!.passAtK.forEach((p, i) => expect(p.rate.estimate).toBeCloseTo(BY_HAND[2]![i]! / 3, 12));
  });

  it('gives each pass@k an interval over items that holds its estimate', () => {
    for (const p of m.typecheck!.passAtK) {
      expect(p.rate.lo).toBeLessThanOrEqual(p.rate.estimate);
      expect(p.rate.hi).toBeGreaterThanOrEqual(p.rate.estimate);
      expect(p.rate.hi).toBeGreaterThan(p.rate.lo);
    }
    // At k = n every item's value is 0 or 1: the Wilson interval; between, the bootstrap.
    expect(m.typecheck!.passAtK[4]!.rate.method).toBe('wilson');
    expect(m.typecheck!.passAtK[1]!.rate.method).toBe('bootstrap');
  });

  it('shows a pass@k table in the page and the Markdown, and the curve in the JSON', async () => {
    const out = await renderSweepReport({
      sweep: { id: 'pk', samples: 5 },
      records: fiveSamples(),
      bootstrap: { resamples: 200 },
      generatedAt: '2026-12-02T00:00:00.000Z',
    });
    for (const text of [out.html, out.markdown]) {
      expect(text).toContain('pass@5');
      // typecheck pass@2 = (0 + 0.7 + 1) / 3 = 56.7 %
      expect(text).toContain('56.7');
    }
    expect(out.metricsCsv).toMatch(/^X,,,typecheck_pass@2,0\.5666/m);
    const json = JSON.parse(out.json);
    expect(json.metrics.configs[0].typecheck.passAtK.map((p: { k: number }) => p.k)).toEqual([1, 2, 3, 4, 5]);
  });

  it('leaves the table out with one sample per item', async () => {
    const one = fiveSamples().filter((r) => r.sample === 0);
    const out = await renderSweepReport({
      sweep: { id: 'pk1', samples: 1 },
      records: one,
      bootstrap: { resamples: 100 },
      generatedAt: '2026-12-02T00:00:00.000Z',
    });
    expect(out.markdown).not.toContain('pass@');
    expect(computeSweepMetrics(one).configs[0]!.typecheck!.passAtK).toHaveLength(1);
  });
});
