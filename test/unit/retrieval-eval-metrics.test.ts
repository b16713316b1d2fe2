import { describe, expect, it } from 'vitest';
import { f1, metricsTable, parseKs, retrievalMetrics, retrievalMetricsAt } from '../../engines/retrieval/eval/metrics';

describe('retrieval metrics', () => {
  const cases = [
    // 1 hit in top 1; 2 hits in top 3 out of 3 gold
    { retrieved: ['a', 'x', 'b', 'c'], gold: ['a', 'b', 'c'] },
    // no hit at all
    { retrieved: ['y', 'z'], gold: ['d'] },
  ];

  it('averages precision, recall and F1 per item, in percent', () => {
    const [at1, at3] = retrievalMetrics(cases, [1, 3]);
    expect(at1).toMatchObject({ k: 1, items: 2, skipped: 0 });
    expect(at1!.precision).toBeCloseTo(50, 10); // (1 + 0) / 2
    expect(at1!.recall).toBeCloseTo(100 / 6, 10); // (1/3 + 0) / 2
    expect(at1!.f1).toBeCloseTo((100 * f1(1, 1 / 3)) / 2, 10);
    expect(at3!.precision).toBeCloseTo(((2 / 3 + 0) / 2) * 100, 10);
    expect(at3!.recall).toBeCloseTo(((2 / 3 + 0) / 2) * 100, 10);
  });

  it('computes micro F1 from summed counts', () => {
    const at3 = retrievalMetricsAt(cases, 3);
    // hits 2, retrieved 3 + 2, gold 3 + 1
    expect(at3.microF1).toBeCloseTo(100 * f1(2 / 5, 2 / 4), 10);
  });

  it('does not charge empty slots to precision, ignores repeats, and skips items without gold', () => {
    const m = retrievalMetricsAt(
      [
        { retrieved: ['a', 'a', 'b'], gold: ['a', 'b'] },
        { retrieved: ['q'], gold: [] },
      ],
      10,
    );
    expect(m).toMatchObject({ items: 1, skipped: 1, precision: 100, recall: 100, f1: 100, microF1: 100 });
    expect(retrievalMetricsAt([{ retrieved: [], gold: ['a'] }], 5)).toMatchObject({ precision: 0, recall: 0, f1: 0, microF1: 0 });
  });

  it('measures a whole dynamic set with k = Infinity', () => {
    const m = retrievalMetricsAt([{ retrieved: ['a', 'b', 'c', 'd', 'e', 'f'], gold: ['f'] }], Infinity);
    expect(m.precision).toBeCloseTo(100 / 6, 10);
    expect(m.recall).toBe(100);
  });

  it('parses --k lists and rejects bad ones', () => {
    expect(parseKs('10,1, 3,3')).toEqual([1, 3, 10]);
    expect(() => parseKs('0,1')).toThrow(/positive whole numbers/);
    expect(() => parseKs('a')).toThrow();
    expect(() => retrievalMetricsAt(cases, 0)).toThrow(/k must be/);
  });

  it('renders a Markdown table', () => {
    const table = metricsTable(retrievalMetrics(cases, [1]));
    expect(table.split('\n')).toEqual([
      '| k | precision | recall | F1 | micro F1 |',
      '|---:|---:|---:|---:|---:|',
      expect.stringMatching(/^\| 1 \| 50\.00 \| 16\.67 \| /),
    ]);
  });
});
