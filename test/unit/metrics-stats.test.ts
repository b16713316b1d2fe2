import { describe, expect, it } from 'vitest';
import { uniformInt } from 'pure-rand/distribution/uniformInt';
import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus';
import { bootstrap, bootstrapDistribution, bootstrapMany, meanInterval, quantile, seededSampler } from '../../engines/metrics/bootstrap';
import { binomialHalfCdf, holm, mcnemarExact, mcnemarPaired } from '../../engines/metrics/mcnemar';
import { effectMasks, effectsFromCellMeans, simpleEffectsFromCellMeans } from '../../engines/metrics/factorial';

/** A sampler that replays scripted indices, so resamples are known in advance. */
function scripted(indices: number[]) {
  let i = 0;
  return () => {
    if (i >= indices.length) throw new Error('script exhausted');
    return indices[i++]!;
  };
}

describe('quantiles', () => {
  it('interpolates linearly between order statistics (type 7)', () => {
    expect(quantile([4, 1, 3, 2], 0.25)).toBeCloseTo(1.75, 12);
    expect(quantile([4, 1, 3, 2], 0.5)).toBeCloseTo(2.5, 12);
    expect(quantile([10], 0.95)).toBe(10);
  });
});

describe('bootstrap', () => {
  it('gives the percentile interval of scripted resamples, computed by hand', () => {
    // values 1,0,0,1; resamples {0,0,0,0} → 1, {1,1,2,2} → 0, {0,1,2,3} → 0.5.
    // sorted 0, 0.5, 1: 2.5% at h = 0.05 → 0.025; 97.5% at h = 1.95 → 0.975.
    const ci = meanInterval([1, 0, 0, 1], { resamples: 3, sampler: scripted([0, 0, 0, 0, 1, 1, 2, 2, 0, 1, 2, 3]) });
    expect(ci.estimate).toBe(0.5);
    expect(ci.lo).toBeCloseTo(0.025, 12);
    expect(ci.hi).toBeCloseTo(0.975, 12);
  });

  it("with a fixed seed draws the seeded generator's indices, and the interval follows by hand", () => {
    // The first six draws of xoroshiro128+ seeded 7, uniform on {0, 1, 2}, read off the library.
    const rng = xoroshiro128plus(7);
    const draws = Array.from({ length: 6 }, () => uniformInt(rng, 0, 2));
    const values = [0, 10, 20];
    const meanOf = (ix: number[]) => ix.reduce((a, i) => a + values[i]!, 0) / ix.length;
    const m1 = meanOf(draws.slice(0, 3));
    const m2 = meanOf(draws.slice(3, 6));
    const [low, high] = [Math.min(m1, m2), Math.max(m1, m2)];
    const ci = meanInterval(values, { resamples: 2, seed: 7 });
    expect(ci.estimate).toBe(10);
    // Two resamples: quantile q sits at h = q between the two means.
    expect(ci.lo).toBeCloseTo(low + 0.025 * (high - low), 12);
    expect(ci.hi).toBeCloseTo(low + 0.975 * (high - low), 12);
  });

  it('is deterministic for a seed and changes with it', () => {
    const values = Array.from({ length: 50 }, (_, i) => ((i * 7919) % 101) / 100);
    const a = meanInterval(values, { seed: 1 });
    expect(meanInterval(values, { seed: 1 })).toEqual(a);
    expect(meanInterval(values, { seed: 2 })).not.toEqual(a);
    const stat = (ix: readonly number[]) => ix.reduce((s, i) => s + values[i]!, 0);
    expect(bootstrapDistribution(50, stat, { seed: 1 }).resampled).toEqual(bootstrapDistribution(50, stat, { seed: 1 }).resampled);
  });

  it('agrees with the normal approximation for a large sample of a rate', () => {
    // 120 of 400 items succeed: sd of the mean √(0.3·0.7/400) = 0.0229; ±1.96 sd = ±0.0449.
    const values = Array.from({ length: 400 }, (_, i) => (i < 120 ? 1 : 0));
    const ci = meanInterval(values, { seed: 11, resamples: 4000 });
    expect(ci.estimate).toBeCloseTo(0.3, 12);
    expect(ci.lo).toBeGreaterThan(0.3 - 0.0449 - 0.006);
    expect(ci.lo).toBeLessThan(0.3 - 0.0449 + 0.006);
    expect(ci.hi).toBeGreaterThan(0.3 + 0.0449 - 0.006);
    expect(ci.hi).toBeLessThan(0.3 + 0.0449 + 0.006);
  });

  it('collapses to the point for constant data, and is empty for no items', () => {
    expect(meanInterval([1, 1, 1])).toEqual({ estimate: 1, lo: 1, hi: 1 });
    const none = bootstrap(0, () => NaN);
    expect(Number.isNaN(none.lo) && Number.isNaN(none.hi)).toBe(true);
  });

  it('resamples several statistics with the same items', () => {
    const [a, b] = bootstrapMany(3, (ix) => [ix.length, ix.filter((i) => i === 0).length], {
      resamples: 2,
      sampler: scripted([0, 0, 0, 1, 2, 1]),
    });
    expect(a).toEqual({ estimate: 3, lo: 3, hi: 3 });
    // counts of index 0: full sample 1; resamples 3 and 0.
    expect(b!.estimate).toBe(1);
    expect(b!.lo).toBeCloseTo(0.075, 12);
    expect(b!.hi).toBeCloseTo(2.925, 12);
    expect(seededSampler(3)(5)).toBe(seededSampler(3)(5));
  });
});

describe("McNemar's exact test", () => {
  it('matches binomial tails computed by hand', () => {
    // b = 1, c = 7: P(X ≤ 1 | n = 8) = (1 + 8)/256; two-sided 18/256.
    expect(mcnemarExact(1, 7).p).toBeCloseTo(18 / 256, 12);
    // b = 10, c = 2: P(X ≤ 2 | n = 12) = (1 + 12 + 66)/4096; two-sided 158/4096.
    expect(mcnemarExact(10, 2).p).toBeCloseTo(158 / 4096, 12);
    // b = 0, c = 5: 2 · 1/32.
    expect(mcnemarExact(0, 5).p).toBeCloseTo(1 / 16, 12);
    // balanced tables are no evidence at all
    expect(mcnemarExact(2, 2).p).toBe(1);
    expect(mcnemarExact(0, 0).p).toBe(1);
  });

  it('counts only discordant pairs from paired outcomes', () => {
    // a: T T F F T F F F F F   b: T F T F F T T T T F  → b (only a) = 2, c (only b) = 5
    const a = [1, 1, 0, 0, 1, 0, 0, 0, 0, 0].map(Boolean);
    const b = [1, 0, 1, 0, 0, 1, 1, 1, 1, 0].map(Boolean);
    const r = mcnemarPaired(a, b);
    expect([r.b, r.c]).toEqual([2, 5]);
    // P(X ≤ 2 | n = 7) = (1 + 7 + 21)/128; two-sided 58/128.
    expect(r.p).toBeCloseTo(58 / 128, 12);
  });

  it('stays finite for large tables and rejects bad counts', () => {
    expect(binomialHalfCdf(500, 1000)).toBeGreaterThan(0.5);
    expect(binomialHalfCdf(500, 1000)).toBeLessThan(0.52);
    expect(mcnemarExact(300, 400).p).toBeLessThan(0.001);
    expect(() => mcnemarExact(-1, 2)).toThrow(/counts/);
  });

  it('adjusts p-values by Holm', () => {
    // sorted 0.01·3 = 0.03, 0.03·2 = 0.06, 0.04·1 → kept monotone at 0.06
    const adj = holm([0.01, 0.04, 0.03]);
    expect(adj[0]).toBeCloseTo(0.03, 12);
    expect(adj[1]).toBeCloseTo(0.06, 12);
    expect(adj[2]).toBeCloseTo(0.06, 12);
  });
});

describe('factorial effects from cell means', () => {
  // The agent paper's table 3 (faithful %, N = 400), factors T, F, S as bits 0, 1, 2.
  const table: Record<string, number> = {
    '000': 19.75,
    '100': 24.5,
    '001': 33.0,
    '101': 36.0,
    '110': 58.75,
    '111': 60.5,
    '010': 61.25,
    '011': 62.0,
  };
  const y = Array.from({ length: 8 }, (_, cell) => table[`${cell & 1}${(cell >> 1) & 1}${(cell >> 2) & 1}`]!);

  it('orders main effects, then pairs, then the triple', () => {
    expect(effectMasks(3)).toEqual([1, 2, 4, 3, 5, 6, 7]);
  });

  it("reproduces the paper's main effects and interactions, computed by hand", () => {
    const [t, f, s, tf, ts, fs, tfs] = effectsFromCellMeans(3, y);
    // F: (58.75 + 60.5 + 61.25 + 62)/4 − (19.75 + 24.5 + 33 + 36)/4 = 60.625 − 28.3125
    expect(f).toBeCloseTo(32.3125, 10);
    // S: 47.875 − 41.0625; T: 44.9375 − 44.0
    expect(s).toBeCloseTo(6.8125, 10);
    expect(t).toBeCloseTo(0.9375, 10);
    // F × S: ΔS(F=1) = (0.75 + 1.75)/2 = 1.25, ΔS(F=0) = (13.25 + 11.5)/2 = 12.375
    expect(fs).toBeCloseTo(-11.125, 10);
    // T × F: ΔT(F=1) = (−2.5 − 1.5)/2 = −2, ΔT(F=0) = (4.75 + 3)/2 = 3.875
    expect(tf).toBeCloseTo(-5.875, 10);
    // T × S: ΔT(S=1) = (3 − 1.5)/2 = 0.75, ΔT(S=0) = (4.75 − 2.5)/2 = 1.125
    expect(ts).toBeCloseTo(-0.375, 10);
    // T × F × S: (F × S at T=1) − (F × S at T=0) = (1.75 − 11.5) − (0.75 − 13.25)
    expect(tfs).toBeCloseTo(2.75, 10);
  });

  it("reproduces the paper's simple effects of search and drafting at each level of feedback", () => {
    const simple = simpleEffectsFromCellMeans(3, y);
    const at = (x: number, g: number, level: 0 | 1) => simple.find((s) => s.x === x && s.g === g && s.level === level)!.value;
    // ΔS(F=0) = (13.25 + 11.5)/2, ΔS(F=1) = (0.75 + 1.75)/2 (the paper: +12.4 and +1.2)
    expect(at(2, 1, 0)).toBeCloseTo(12.375, 10);
    expect(at(2, 1, 1)).toBeCloseTo(1.25, 10);
    // ΔT(F=0) = (4.75 + 3)/2, ΔT(F=1) = (−2.5 − 1.5)/2 (the paper: +3.9 and −2.0)
    expect(at(0, 1, 0)).toBeCloseTo(3.875, 10);
    expect(at(0, 1, 1)).toBeCloseTo(-2, 10);
    // The difference of the two simple effects is the interaction: F × S = 1.25 − 12.375.
    expect(at(2, 1, 1) - at(2, 1, 0)).toBeCloseTo(effectsFromCellMeans(3, y)[5]!, 10);
    expect(simple).toHaveLength(3 * 2 * 2);
  });

  it('refuses a table of the wrong size', () => {
    expect(() => effectsFromCellMeans(2, [1, 2, 3])).toThrow(/4 cells/);
  });
});
