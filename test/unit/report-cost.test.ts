// The sweep's cost as the report states it, from the ledger's rows per run: sums for the sweep
// and per configuration, unknown (null) rather than too low when a model has no price, and the
// sentence the pages show.
import { describe, expect, it } from 'vitest';
import { costLine, formatUsd, sweepCost } from '../../engines/report/sweep-cost';
import { renderSweepReport } from '../../engines/report/write-report';
import type { RunLlmCost } from '../../engines/results/llm-ledger';
import { runRecord } from '../helpers/sweep-records';

const row = (runId: string, p: Partial<RunLlmCost>): RunLlmCost => ({
  runId,
  calls: 2,
  batchCalls: 0,
  unpricedCalls: 0,
  costUsd: 0,
  costIfSyncUsd: 0,
  ...p,
});

const records = [
  runRecord({ config: 'a', item: 'X.one' }),
  runRecord({ config: 'a', item: 'X.two' }),
  runRecord({ config: 'b', item: 'X.one' }),
];

describe("a sweep's cost", () => {
  it('sums what was paid and what it would have cost one at a time, for the sweep and per configuration', () => {
    const rows = [
      row('sw/a/X.one/0', { costUsd: 0.6, costIfSyncUsd: 1.2, batchCalls: 2 }),
      row('sw/a/X.two/0', { costUsd: 0.6, costIfSyncUsd: 1.2, batchCalls: 2 }),
      row('sw/b/X.one/0', { costUsd: 1, costIfSyncUsd: 1 }),
      // A run not reported yet counts for the sweep, not for a configuration.
      row('sw/b/X.two/0', { costUsd: 0.5, costIfSyncUsd: 0.5, calls: 1 }),
    ];
    const cost = sweepCost(rows, records, ['a', 'b']);
    expect(cost).toMatchObject({ calls: 7, batchCalls: 4, unpricedCalls: 0 });
    expect(cost.usd).toBeCloseTo(2.7, 12);
    expect(cost.usdIfSynchronous).toBeCloseTo(3.9, 12);
    expect(cost.perConfig.map((c) => [c.config, c.calls, c.batchCalls])).toEqual([
      ['a', 4, 4],
      ['b', 2, 0],
    ]);
    expect(cost.perConfig[0]!.usd).toBeCloseTo(1.2, 12);
    expect(cost.perConfig[0]!.usdIfSynchronous).toBeCloseTo(2.4, 12);
  });

  it('is unknown, null and not 0, where a paid call went to a model without a price', () => {
    const cost = sweepCost(
      [row('sw/a/X.one/0', { costUsd: 0.6, costIfSyncUsd: 1.2 }), row('sw/b/X.one/0', { unpricedCalls: 1 })],
      records,
      ['a', 'b'],
    );
    expect(cost).toMatchObject({ usd: null, usdIfSynchronous: null, unpricedCalls: 1 });
    expect(cost.perConfig[0]).toMatchObject({ config: 'a', usd: 0.6, usdIfSynchronous: 1.2 });
    expect(cost.perConfig[1]).toMatchObject({ config: 'b', usd: null, usdIfSynchronous: null });
    expect(costLine(cost)).toBe('unknown: 1 of 4 calls went to models without a price (DRIFTLINE_LLM_PRICES)');
  });

  it('costs nothing with no calls at all', () => {
    expect(sweepCost([], records, ['a'])).toMatchObject({ usd: 0, usdIfSynchronous: 0, calls: 0 });
  });

  it('says what the batches saved, and only when some calls went through one', () => {
    const base = { calls: 120, unpricedCalls: 0 };
    expect(costLine({ ...base, usd: 1.2, usdIfSynchronous: 2.4, batchCalls: 120 })).toBe(
      '$1.20, 120 of 120 calls in batches; $2.40 if sent one at a time: half of that, $1.20 saved',
    );
    expect(costLine({ ...base, usd: 1.8, usdIfSynchronous: 2.4, batchCalls: 60 })).toBe(
      '$1.80, 60 of 120 calls in batches; $2.40 if sent one at a time: three quarters of that, $0.60 saved',
    );
    expect(costLine({ ...base, usd: 2, usdIfSynchronous: 2.4, batchCalls: 20 })).toMatch(/: 83% of that, \$0\.40 saved$/);
    expect(costLine({ ...base, usd: 2.4, usdIfSynchronous: 2.4, batchCalls: 0 })).toBe('$2.40 for 120 LLM calls');
  });

  it('writes amounts in cents, and below a cent with two significant digits', () => {
    expect([0, 0.000123, 0.0068, 0.05, 0.5, 0.999, 1, 12.345].map(formatUsd)).toEqual([
      '$0',
      '$0.00012',
      '$0.0068',
      '$0.05',
      '$0.50',
      '$1.00',
      '$1.00',
      '$12.35',
    ]);
  });

  it('is in report.json when the report is given the ledger, and absent when not', async () => {
    const input = { sweep: { id: 'sw' }, records, generatedAt: '2026-12-06T00:00:00.000Z', bootstrap: { resamples: 50 } };
    const without = await renderSweepReport(input);
    expect(JSON.parse(without.json).cost).toBeUndefined();
    expect(without.markdown).not.toContain('LLM cost');
    const withCost = await renderSweepReport({
      ...input,
      llmCosts: [row('sw/a/X.one/0', { costUsd: 0.6, costIfSyncUsd: 1.2, batchCalls: 2 })],
    });
    expect(JSON.parse(withCost.json).cost).toMatchObject({ usd: 0.6, usdIfSynchronous: 1.2, batchCalls: 2, calls: 2 });
    expect(withCost.markdown).toContain(
      '- **LLM cost**: $0.60, 2 of 2 calls in batches; $1.20 if sent one at a time: half of that, $0.60 saved',
    );
  });
});
