// The tests and intervals behind the report's verdicts, against values worked by hand.
import { describe, expect, it } from 'vitest';
import { EXACT_SIGN_FLIP_MAX, mcnemarMinP, normalQuantile, signFlipTest, wilsonInterval } from '../../engines/metrics/exact-tests';
import { compareConfigurations } from '../../engines/metrics/compare';
import { findings } from '../../engines/report/tables';
import { buildReportData } from '../../engines/report/report-data';
import { runRecord } from '../helpers/sweep-records';

describe('the paired sign-flip test', () => {
  it('n = 5 all in one direction: p = 2/32 = 0.0625, the least it can be', () => {
    const r = signFlipTest([0.1, 0.2, 0.3, 0.4, 0.5]);
    expect(r).toMatchObject({ p: 0.0625, informative: 5, method: 'sign-flip-exact', minP: 0.0625 });
  });

  it('a tie (all differences zero) gives p = 1 and no informative item', () => {
    expect(signFlipTest([0, 0, 0])).toMatchObject({ p: 1, informative: 0 });
  });

  it('worked by hand: d = (1, 2, −3): |sum| = 0; every assignment is as extreme → p = 1', () => {
    expect(signFlipTest([1, 2, -3]).p).toBe(1);
  });

  it('worked by hand: d = (3, 1, 1): sums ±5 (2), ±3 (4), ±1 (2) of 8 → P(|T| ≥ 5) = 2/8', () => {
    // Assignments of (3,1,1): 5, 3, 3, 1, -1, -3, -3, -5 → |T| ≥ 5 twice.
    expect(signFlipTest([3, 1, 1]).p).toBe(0.25);
    // Zeros carry no sign: the same with two zero items beside.
    expect(signFlipTest([3, 0, 1, 0, 1]).p).toBe(0.25);
  });

  it('beyond the exact size, Monte Carlo with a stated number of permutations, never p = 0', () => {
    const d = Array.from({ length: EXACT_SIGN_FLIP_MAX + 5 }, (_, i) => (i % 2 === 0 ? 1 : 0.5));
    const r = signFlipTest(d, { permutations: 2000 });
    expect(r.method).toBe('sign-flip-monte-carlo');
    expect(r.permutations).toBe(2000);
    expect(r.p).toBe(1 / 2001);
    // Balanced differences: far from significant.
    const balanced = signFlipTest(
      d.map((x, i) => (i % 4 < 2 ? x : -x)),
      { permutations: 2000 },
    );
    expect(balanced.p).toBeGreaterThan(0.3);
  });
});

describe('intervals that hold at small n', () => {
  it('Wilson on 2 of 3, worked by hand: [0.2077, 0.9385]', () => {
    const w = wilsonInterval(2, 3);
    expect(w.estimate).toBeCloseTo(2 / 3, 12);
    expect(w.lo).toBeCloseTo(0.2077, 4);
    expect(w.hi).toBeCloseTo(0.9385, 4);
  });

  it('Wilson on 0 of 5 is not [0, 0]: [0, 0.4345]', () => {
    const w = wilsonInterval(0, 5);
    expect(w.lo).toBe(0);
    expect(w.hi).toBeCloseTo(0.4345, 4);
  });

  it('the normal quantile is right where it matters', () => {
    expect(normalQuantile(0.975)).toBeCloseTo(1.959964, 6);
    expect(normalQuantile(0.5)).toBe(0);
  });

  it("McNemar's least p on n discordant items", () => {
    expect(mcnemarMinP(5)).toBe(0.0625);
    expect(mcnemarMinP(6)).toBe(0.03125);
    expect(mcnemarMinP(0)).toBe(1);
  });
});

describe('verdicts on five items', () => {
  const five = (config: string, compiled: (i: number) => boolean, faithful: (i: number) => boolean) =>
    Array.from({ length: 5 }, (_, i) =>
      runRecord({
        config,
        item: `i${i}`,
        compiled: compiled(i),
        judgeGrade: faithful(i) ? 10 : 2,
        faithful: faithful(i),
        ...(compiled(i) ? { outcome: 'unfaithful' as const } : {}),
      }),
    );

  it('no "leads" on a tie, n stated, and no verdict the items cannot carry', () => {
    const records = [
      ...five(
        'drift',
        () => true,
        () => false,
      ),
      ...five(
        'monolithic',
        () => false,
        () => false,
      ),
    ];
    const comparisons = compareConfigurations(records);
    const typecheck = comparisons.find((c) => c.metric === 'typecheck@1')!;
    expect(typecheck).toMatchObject({ items: 5, test: 'mcnemar-exact', p: 0.0625, minP: 0.0625, verdict: 'too-few', significant: false });
    const faithful = comparisons.find((c) => c.metric === 'faithful@1')!;
    expect(faithful.verdict).toBe('tie');
  });

  it('findings say "tie" and "too few items", each with n', () => {
    const records = [
      ...five(
        'drift',
        () => true,
        () => false,
      ),
      ...five(
        'monolithic',
        () => false,
        () => false,
      ),
    ];
    const data = buildReportData({ sweep: { id: 's' }, records, bootstrap: { resamples: 100 } });
    const lines = findings(data);
    expect(lines.find((l) => l.startsWith('Typecheck@1'))).toBe(
      "Typecheck@1: drift 100.0%, 100.0 pts above monolithic (n = 5 items): too few items for a verdict (McNemar's exact test cannot go below p = 0.0625 on 5 items).",
    );
    const faithful = lines.find((l) => l.startsWith('Faithful@1'));
    if (faithful) expect(faithful).toMatch(/^Faithful@1: (drift|monolithic) and (drift|monolithic) tie at 0\.0% \(n = 5 items\)\.$/);
    expect(lines.join('\n')).not.toMatch(/leads/);
  });
});
