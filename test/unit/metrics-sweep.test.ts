import { describe, expect, it } from 'vitest';
import type { SweepRunRecord } from '../../common/sweep';
import { computeSweepMetrics } from '../../engines/metrics/sweep-metrics';
import { compareConfigurations } from '../../engines/metrics/compare';
import { factorialAnalysis, factorialResponses } from '../../engines/metrics/factorial';
import { repairBudgetCurves, stepBudgetCurves } from '../../engines/metrics/budget-curve';
import { runRecord } from '../helpers/sweep-records';

const gold = ['P', 'Q'];

/** Configuration A: three items, two samples each (values worked out in the tests). */
function configA(): SweepRunRecord[] {
  const alg = { domain: 'alg' };
  return [
    runRecord({
      config: 'A',
      item: 'i1',
      sample: 0,
      compiled: true,
      judgeGrade: 10,
      faithful: true,
      equivalent: true,
      premises: ['P', 'X'],
      goldPremises: gold,
      repairRounds: 0,
      tags: alg,
      stageMs: { formalize: 100, compile: 10 },
      usage: { promptTokens: 10, completionTokens: 5, totalTokens: 15, costUsd: 0.01 },
    }),
    runRecord({
      config: 'A',
      item: 'i1',
      sample: 1,
      compiled: false,
      judgeGrade: 2,
      faithful: false,
      premises: ['P', 'Q'],
      goldPremises: gold,
      repairRounds: 2,
      tags: alg,
      stageMs: { formalize: 200, compile: 20 },
      usage: { promptTokens: 20, completionTokens: 10, totalTokens: 30, costUsd: 0.02 },
    }),
    runRecord({
      config: 'A',
      item: 'i2',
      sample: 0,
      compiled: false,
      judgeGrade: 1,
      faithful: false,
      premises: [],
      goldPremises: gold,
      repairRounds: 2,
      tags: alg,
      stageMs: { formalize: 300 },
    }),
    runRecord({
      config: 'A',
      item: 'i2',
      sample: 1,
      compiled: true,
      judgeGrade: 7,
      faithful: false,
      equivalent: false,
      premises: ['Q'],
      goldPremises: gold,
      repairRounds: 1,
      tags: alg,
      stageMs: { formalize: 400 },
    }),
    runRecord({
      config: 'A',
      item: 'i3',
      sample: 0,
      outcome: 'failed',
      checked: false,
      compiled: false,
      premises: [],
      goldPremises: gold,
      repairRounds: 0,
      tags: { domain: 'top' },
      hasGoldStatement: false,
      error: 'LlmUnauthorized',
    }),
    runRecord({
      config: 'A',
      item: 'i3',
      sample: 1,
      compiled: true,
      judgeGrade: 9,
      faithful: true,
      equivalent: true,
      premises: ['X', 'Y', 'Z'],
      goldPremises: gold,
      repairRounds: 0,
      tags: { domain: 'top' },
      hasGoldStatement: false,
      stageMs: { formalize: 500 },
    }),
  ];
}

describe('sweep metrics per configuration', () => {
  const m = computeSweepMetrics(configA(), { resamples: 500 }).configs[0]!;

  it('counts items, runs and failed runs', () => {
    expect([m.config, m.items, m.runs, m.failedRuns]).toEqual(['A', 3, 6, 1]);
  });

  it('computes Typecheck, judge-faithful and BEq+ at 1 and k as worked out by hand', () => {
    // Typecheck: each item has one of two samples compiling → @1 = 0.5, @k = 1.
    expect(m.typecheck!.at1.estimate).toBeCloseTo(0.5, 12);
    expect(m.typecheck!.atK.estimate).toBe(1);
    expect(m.typecheck!.k).toBe(2);
    // Faithful: i1 ½, i2 0, i3 ½ (the failed sample counts as a failure) → ⅓; @k: ⅔.
    expect(m.faithful!.at1.estimate).toBeCloseTo(1 / 3, 12);
    expect(m.faithful!.atK.estimate).toBeCloseTo(2 / 3, 12);
    // BEq+: i3 has no gold statement; i1 ½, i2 0 → ¼; @k ½ over 2 items.
    expect(m.beq!.items).toBe(2);
    expect(m.beq!.at1.estimate).toBeCloseTo(0.25, 12);
    expect(m.beq!.atK.estimate).toBeCloseTo(0.5, 12);
    for (const r of [m.typecheck!.at1, m.faithful!.at1, m.beq!.at1]) {
      expect(r.lo).toBeLessThanOrEqual(r.estimate);
      expect(r.hi).toBeGreaterThanOrEqual(r.estimate);
    }
  });

  it('computes macro and micro retrieval precision, recall and F1 by hand', () => {
    const r = m.retrieval!;
    // per item (mean over non-failed samples): i1 p .75 r .75 f1 .75; i2 p .5 r .25 f1 ⅓; i3 0.
    expect(r.items).toBe(3);
    expect(r.precision.estimate).toBeCloseTo(1.25 / 3, 12);
    expect(r.recall.estimate).toBeCloseTo(1 / 3, 12);
    expect(r.f1.estimate).toBeCloseTo((0.75 + 1 / 3) / 3, 12);
    // micro: hits 1+2+0+1+0 = 4, retrieved 2+2+0+1+3 = 8, gold 5·2 = 10
    expect(r.microPrecision.estimate).toBeCloseTo(0.5, 12);
    expect(r.microRecall.estimate).toBeCloseTo(0.4, 12);
    expect(r.microF1.estimate).toBeCloseTo(0.4 / 0.9, 12);
  });

  it('averages repair rounds per item over runs that happened, and reports latency and usage', () => {
    // i1 (0+2)/2 = 1, i2 (2+1)/2 = 1.5, i3 0 (the failed run left out) → 2.5/3
    expect(m.repairRounds!.estimate).toBeCloseTo(2.5 / 3, 12);
    // formalize: 100..500 → p50 300, p95 at h = 3.8 → 480
    expect(m.latency.formalize).toEqual({ p50: 300, p95: 480, runs: 5 });
    expect(m.latency.compile!.p50).toBe(15);
    // totals per run: 110, 220, 300, 400, 500 → p50 300
    expect(m.latency.total!.p50).toBe(300);
    expect(m.usage!.runs).toBe(2);
    expect(m.usage!.meanTotalTokens).toBe(22.5);
    expect(m.usage!.totalTokens).toBe(45);
    expect(m.usage!.totalCostUsd).toBeCloseTo(0.03, 12);
  });

  it('leaves unmeasured rates out rather than reporting zeros', () => {
    const noLean = configA().map((r) => ({ ...r, checked: false, compiled: false, equivalent: null, judgeGrade: null, faithful: null }));
    const g = computeSweepMetrics(noLean).configs[0]!;
    expect(g.typecheck).toBeNull();
    expect(g.beq).toBeNull();
    expect(g.faithful).toBeNull();
    expect(g.retrieval).not.toBeNull();
  });

  it('splits by tag', () => {
    const tags = computeSweepMetrics(configA(), { resamples: 200 }).byTag;
    expect(tags.map((t) => `${t.config}/${t.tag!.key}=${t.tag!.value}:${t.items}`)).toEqual(['A/domain=alg:2', 'A/domain=top:1']);
    expect(tags[1]!.faithful!.at1.estimate).toBeCloseTo(0.5, 12);
    // A tag with more values than allowed (an id, say) is left out and named.
    const many = computeSweepMetrics(configA(), { resamples: 50, maxTagValues: 1 });
    expect(many.byTag).toEqual([]);
    expect(many.skippedTags).toEqual(['domain']);
  });

  it('gives the same intervals for the same records and seed', () => {
    expect(computeSweepMetrics(configA(), { seed: 5 })).toEqual(computeSweepMetrics(configA(), { seed: 5 }));
  });
});

describe('paired comparisons', () => {
  // 10 items, one sample each; A compiles items 0,1,4; B compiles 0,2,5,6,7,8 → b = 2, c = 5.
  const a = [1, 1, 0, 0, 1, 0, 0, 0, 0, 0];
  const b = [1, 0, 1, 0, 0, 1, 1, 1, 1, 0];
  const records = [
    ...a.map((ok, i) => runRecord({ config: 'A', item: `i${i}`, compiled: ok === 1, premises: ['P'], goldPremises: ['P', 'Q'] })),
    ...b.map((ok, i) =>
      runRecord({ config: 'B', item: `i${i}`, compiled: ok === 1, premises: i < 5 ? ['P', 'Q'] : ['P'], goldPremises: ['P', 'Q'] }),
    ),
  ];
  const cmp = compareConfigurations(records, { resamples: 1000 });

  it("tests rates with McNemar's exact test and a paired interval for the difference", () => {
    const t = cmp.find((c) => c.metric === 'typecheck@1')!;
    expect([t.a, t.b, t.items]).toEqual(['A', 'B', 10]);
    expect([t.mcnemar!.b, t.mcnemar!.c]).toEqual([2, 5]);
    expect(t.p).toBeCloseTo(58 / 128, 12);
    expect(t.pHolm).toBeCloseTo(58 / 128, 12);
    expect(t.significant).toBe(false);
    expect(t.diff.estimate).toBeCloseTo(0.3 - 0.6, 12);
    expect(t.diff.lo).toBeLessThan(t.diff.estimate);
    expect(cmp.some((c) => c.metric === 'typecheck@k')).toBe(false);
  });

  it('compares retrieval F1 with the exact sign-flip test and a paired bootstrap interval', () => {
    const f = cmp.find((c) => c.metric === 'f1')!;
    // A: F1 of {P} vs {P,Q} = ⅔ on every item; B: 1 on items 0–4, ⅔ on 5–9 → mean diff −⅙
    expect(f.diff.estimate).toBeCloseTo(-1 / 6, 12);
    expect(f.diff.hi).toBeLessThan(0);
    // Five items differ, all the same way: 2 of the 2^5 sign assignments are as extreme, so
    // p = 0.0625 (the paired bootstrap called this significant).
    expect(f.test).toBe('sign-flip-exact');
    expect(f.p).toBe(0.0625);
    expect(f.significant).toBe(false);
    expect(f.verdict).toBe('within-noise');
    expect(f.mcnemar).toBeUndefined();
  });

  it('finds a large effect significant', () => {
    const many = Array.from({ length: 60 }, (_, i) => [
      runRecord({ config: 'good', item: `i${i}`, compiled: i % 10 !== 0 }),
      runRecord({ config: 'bad', item: `i${i}`, compiled: i % 10 === 0 || i % 3 === 0 }),
    ]).flat();
    const t = compareConfigurations(many, { resamples: 500 }).find((c) => c.metric === 'typecheck@1')!;
    expect(t.significant).toBe(true);
    expect(t.diff.lo).toBeGreaterThan(0);
  });
});

describe('factorial analysis from records', () => {
  // 2×2 over X, Y with 4 items per cell; faithful items per cell: c00 1, c10 3, c01 2, c11 2.
  const succ: Record<string, number> = { c00: 1, c10: 3, c01: 2, c11: 2 };
  const records = Object.entries(succ).flatMap(([config, k]) =>
    Array.from({ length: 4 }, (_, i) => runRecord({ config, item: `i${i}`, compiled: i < k, judgeGrade: i < k ? 10 : 2, faithful: i < k })),
  );
  const design = {
    factors: [{ name: 'X' }, { name: 'Y' }],
    cells: { c00: { X: 0, Y: 0 }, c10: { X: 1, Y: 0 }, c01: { X: 0, Y: 1 }, c11: { X: 1, Y: 1 } } as Record<string, Record<string, 0 | 1>>,
  };

  it('computes cell means, main effects and the interaction as worked out by hand', () => {
    expect(factorialResponses(records, ['c00', 'c10', 'c01', 'c11'])).toEqual(['faithful@1', 'typecheck@1']);
    const f = factorialAnalysis(records, design, 'faithful@1', { resamples: 500 });
    expect(f.items).toBe(4);
    expect(f.cells.map((c) => [c.config, c.mean])).toEqual([
      ['c00', 0.25],
      ['c10', 0.75],
      ['c01', 0.5],
      ['c11', 0.5],
    ]);
    const byLabel = Object.fromEntries(f.effects.map((e) => [e.label, e]));
    // X: (0.75 + 0.5)/2 − (0.25 + 0.5)/2; Y: (0.5 + 0.5)/2 − (0.25 + 0.75)/2; X×Y: (0 − 0.5)
    expect(byLabel['X']!.estimate).toBeCloseTo(0.25, 12);
    expect(byLabel['Y']!.estimate).toBeCloseTo(0, 12);
    expect(byLabel['X × Y']!.estimate).toBeCloseTo(-0.5, 12);
    // X with Y low: 0.75 − 0.25; with Y high: 0.5 − 0.5.
    const sx = f.simpleEffects.filter((s) => s.factor === 'X');
    expect(sx.map((s) => [s.given, s.level, s.estimate])).toEqual([
      ['Y', 0, 0.5],
      ['Y', 1, 0],
    ]);
    for (const e of f.effects) {
      expect(e.lo).toBeLessThanOrEqual(e.estimate + 1e-12);
      expect(e.hi).toBeGreaterThanOrEqual(e.estimate - 1e-12);
    }
  });

  it('names what is missing from an incomplete design', () => {
    const partial = { factors: design.factors, cells: { c00: design.cells.c00!, c10: design.cells.c10!, c01: design.cells.c01! } };
    expect(() => factorialAnalysis(records, partial, 'faithful@1')).toThrow(/no cell declared for X=1, Y=1/);
    expect(() =>
      factorialAnalysis(
        records.filter((r) => r.config !== 'c11'),
        design,
        'faithful@1',
      ),
    ).toThrow(/no records for cell c11/);
  });
});

describe('budget curves', () => {
  it('accumulates compile and faithful success over repair rounds from the attempts', () => {
    const att = (...ok: boolean[]) => ok.map((compiled, round) => ({ round, compiled }));
    const records = [
      runRecord({ config: 'A', item: 'a', compiled: true, attempts: att(true), judgeGrade: 10, faithful: true }),
      runRecord({ config: 'A', item: 'b', compiled: true, attempts: att(false, false, true), judgeGrade: 5, faithful: false }),
      runRecord({ config: 'A', item: 'c', compiled: true, attempts: att(false, true), judgeGrade: 9, faithful: true }),
      runRecord({ config: 'A', item: 'd', compiled: false, attempts: att(false, false, false, false), judgeGrade: 1, faithful: false }),
    ];
    const [c] = repairBudgetCurves(records);
    expect(c!.unit).toBe('repair');
    expect(c!.points).toEqual([
      { budget: 0, compiled: 0.25, faithful: 0.25 },
      { budget: 1, compiled: 0.5, faithful: 0.5 },
      { budget: 2, compiled: 0.75, faithful: 0.5 },
      { budget: 3, compiled: 0.75, faithful: 0.5 },
    ]);
    expect(stepBudgetCurves(records)).toEqual([]);
  });

  it('uses agent steps when the records carry them', () => {
    const records = [
      runRecord({ config: 'agent', item: 'a', compiled: true, agentSteps: 3, compiledAtStep: 2, judgeGrade: 10, faithful: true }),
      runRecord({ config: 'agent', item: 'b', compiled: false, agentSteps: 4, compiledAtStep: null, judgeGrade: 1, faithful: false }),
    ];
    const [c] = stepBudgetCurves(records);
    expect(c!.points).toEqual([
      { budget: 1, compiled: 0, faithful: 0 },
      { budget: 2, compiled: 0.5, faithful: 0 },
      { budget: 3, compiled: 0.5, faithful: 0.5 },
      { budget: 4, compiled: 0.5, faithful: 0.5 },
    ]);
  });
});
