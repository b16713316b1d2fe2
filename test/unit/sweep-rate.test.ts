// A sweep's rates (common/sweep-rate.ts, common/sweep.ts configRate): one definition, finished
// runs over the sweep's active time; configurations' rates add up to the sweep's; ETAs follow.
import { describe, expect, it } from 'vitest';
import { configRate, type SweepCounts } from '../../common/sweep';
import { etaSeconds, formatRate, runsPerSecond } from '../../common/sweep-rate';

const counts = (done: number, total: number): SweepCounts => ({ done, total, failed: 0, running: 0 });

describe('sweep rates', () => {
  it('are finished runs per second of active time: 6 runs in 62 s', () => {
    expect(runsPerSecond(6, 62_000)).toBeCloseTo(6 / 62, 12);
    expect(runsPerSecond(5, 50_000)).toBeCloseTo(0.1, 12);
    expect(runsPerSecond(0, 10_000)).toBe(0);
    expect(runsPerSecond(3, 0)).toBe(0);
  });

  it("give each configuration its runs over the same time, so they add up to the sweep's", () => {
    const rate = runsPerSecond(6, 62_000);
    const per = [counts(2, 2), counts(2, 2), counts(2, 2)].map((c) => configRate({ rate, done: 6 }, c));
    for (const p of per) expect(p.rate).toBeCloseTo(2 / 62, 12);
    expect(per.reduce((a, p) => a + p.rate, 0)).toBeCloseTo(rate, 12);
    expect(per.map((p) => p.etaSeconds)).toEqual([0, 0, 0]);
    // Uneven: one configuration finished more; the shares still add up, and the ETA is its own.
    const uneven = [counts(4, 10), counts(1, 10)].map((c) => configRate({ rate: 5 / 50, done: 5 }, c));
    expect(uneven[0]!.rate).toBeCloseTo(4 / 50, 12);
    expect(uneven[1]!.rate).toBeCloseTo(1 / 50, 12);
    expect(uneven[0]!.etaSeconds).toBeCloseTo(6 / (4 / 50), 9);
    expect(configRate({ rate: 0, done: 0 }, counts(0, 4))).toEqual({ rate: 0, etaSeconds: null });
  });

  it('give the ETA of what is left, 0 when nothing is, unknown before a rate', () => {
    expect(etaSeconds(10, 0.5)).toBe(20);
    expect(etaSeconds(0, 0)).toBe(0);
    expect(etaSeconds(3, 0)).toBeNull();
  });

  it('read at a glance: per minute below one a second, so slow configurations do not round alike', () => {
    expect(formatRate(6 / 62)).toBe('5.81 runs/min');
    expect(formatRate(2 / 62)).toBe('1.94 runs/min');
    expect(formatRate(0.5)).toBe('30.0 runs/min');
    expect(formatRate(13.3)).toBe('13.30 runs/s');
    expect(formatRate(0)).toBe('0 runs/min');
  });
});
