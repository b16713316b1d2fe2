// A sweep's LLM budget (tokens or USD, in the sweep file): once the sweep's ledger totals reach
// it, the sweep starts no new run, lets the running ones finish, and ends `budget-exhausted`
// with a reason that its status shows.
import { SCREEN_VERSION } from '../../engines/lean/statement-safety';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { SweepProgress } from '../../common/sweep';
import { parseSweep } from '../../engines/sweeps/sweep-file';
import { createStack, startTemporal, type TestStack } from '../helpers/stack';
import { miniSpec, progressOf, startOnStack } from '../helpers/sweep';
import { FAKE_MODELS } from '../fakes/openai-server';

const minimal = { benchmark: { path: 'b.jsonl', format: 'rautoformalizer' }, library: 'connf', configurations: { drift: {} } };

describe('the sweep file budget', () => {
  it('takes tokens and/or costUsd, and refuses an empty or non-positive one', () => {
    expect(parseSweep({ ...minimal, budget: { tokens: 5000 } }, 's.yaml', { dataDir: '/d' }).budget).toEqual({ tokens: 5000 });
    expect(parseSweep({ ...minimal, budget: { costUsd: 2.5, tokens: 10 } }, 's.yaml', { dataDir: '/d' }).budget).toEqual({
      costUsd: 2.5,
      tokens: 10,
    });
    expect(parseSweep(minimal, 's.yaml', { dataDir: '/d' }).budget).toBeUndefined();
    expect(() => parseSweep({ ...minimal, budget: {} }, 's.yaml', { dataDir: '/d' })).toThrow(
      /budget: a budget names "tokens", "costUsd" or both/,
    );
    expect(() => parseSweep({ ...minimal, budget: { costUsd: 0 } }, 's.yaml', { dataDir: '/d' })).toThrow(/budget\.costUsd: /);
  });
});

describe('a sweep with a budget', () => {
  let env: TestWorkflowEnvironment;
  let s: TestStack;
  beforeAll(async () => {
    env = await startTemporal();
    // Priced fake models: $1 per million tokens either way, so a run costs about $0.0009.
    const price = { prompt: 1, completion: 1 };
    s = await createStack(env, {
      ledger: true,
      prices: { [FAKE_MODELS.formalizer]: price, [FAKE_MODELS.judge]: price, [FAKE_MODELS.decomposer]: price },
    });
  }, 120_000);
  afterAll(async () => {
    await s?.close();
    await env?.teardown();
  });

  it('stops starting runs once the ledger totals reach the token budget, and says so', async () => {
    // One run at a time, so the stop point is exact: the first run after which the sweep's
    // totals reach the budget is the last one.
    const BUDGET = 2500;
    const spec = {
      ...miniSpec({
        window: 1,
        maxAttempts: 1,
        configurations: [{ name: 'small', config: { retrieval: 'none', repairRounds: 0, cache: false } }],
      }),
      budget: { tokens: BUDGET },
    };
    const started = await startOnStack(s, spec, { id: 'budget-tokens' });
    expect(started.total).toBe(8);
    const final = (await s.withWorkers(() => s.client.workflow.getHandle('budget-tokens').result())) as SweepProgress;

    const runs = await s.results.runs('budget-tokens');
    const perRun = await Promise.all(runs.map(async (r) => (await s.ledger!.runTotals(r.workflowId)).totalTokens));
    const used = perRun.reduce((a, b) => a + b, 0);
    console.log(`token budget ${BUDGET}: ${runs.length} of 8 runs (${perRun.join(' + ')} = ${used} tokens)`);
    expect(runs.length).toBeGreaterThanOrEqual(1);
    expect(runs.length).toBeLessThan(8);
    // Reached with the last run, not before it.
    expect(used).toBeGreaterThanOrEqual(BUDGET);
    expect(used - perRun[perRun.length - 1]!).toBeLessThan(BUDGET);
    expect((await s.ledger!.sweepTotals('budget-tokens')).totalTokens).toBe(used);

    expect(final).toMatchObject({ status: 'budget-exhausted', total: 8, done: runs.length, failed: 0, running: 0 });
    expect(final.budget).toEqual({
      tokens: BUDGET,
      used: { tokens: used, costUsd: expect.any(Number) },
      reached: `token budget reached: ${used} tokens used of ${BUDGET}`,
    });
    // The status the CLI and API read says the same once the workflow is closed.
    expect(await progressOf(s, 'budget-tokens')).toMatchObject({
      status: 'budget-exhausted',
      budget: { reached: expect.stringContaining('token budget reached') },
    });
  }, 240_000);

  it('a sweep within its budget completes as usual and reports what it used', async () => {
    const spec = {
      ...miniSpec({ window: 4, maxAttempts: 1, configurations: [{ name: 'small', config: { retrieval: 'none', repairRounds: 0 } }] }),
      budget: { tokens: 10_000_000 },
    };
    await startOnStack(s, spec, { id: 'budget-ample' });
    const final = (await s.withWorkers(() => s.client.workflow.getHandle('budget-ample').result())) as SweepProgress;
    expect(final).toMatchObject({ status: 'completed', total: 8, done: 8, failed: 0 });
    expect(final.budget?.reached).toBeUndefined();
    expect(final.budget?.used.tokens).toBe((await s.ledger!.sweepTotals('budget-ample')).totalTokens);
    expect(final.budget!.used.tokens).toBeGreaterThan(0);
    // Every record carries its run's usage from the ledger: tokens, USD and cache use, and the
    // report's per-configuration totals are their sums.
    const runs = await s.results.runs('budget-ample');
    for (const r of runs) {
      const ledger = await s.ledger!.runTotals(r.workflowId);
      expect(r.usage, r.workflowId).toMatchObject({
        totalTokens: ledger.totalTokens,
        promptTokens: ledger.promptTokens,
        completionTokens: ledger.completionTokens,
      });
      expect(r.usage!.costUsd).toBeCloseTo(ledger.costUsd!, 12);
      expect(r.cache).toEqual({ hits: expect.any(Number), misses: expect.any(Number) });
    }
    const { computeSweepMetrics } = await import('../../engines/metrics/sweep-metrics');
    const small = computeSweepMetrics(runs).configs.find((g) => g.config === 'small')!;
    expect(small.usage!.totalTokens).toBe(final.budget!.used.tokens);
    expect(small.usage!.totalCostUsd).toBeCloseTo(
      runs.reduce((a, r) => a + r.usage!.costUsd!, 0),
      12,
    );
    expect(small.usage!.cacheHits! + small.usage!.cacheMisses!).toBe(runs.reduce((a, r) => a + r.cache!.hits + r.cache!.misses, 0));

    // The report's protocol names the models that answered, the screen, driftline, the
    // configurations resolved with their defaults, and each fact once.
    const { sweepReportInput } = await import('../../client/sweep-report');
    const { renderSweepReport } = await import('../../engines/report/write-report');
    const input = (await sweepReportInput(s.results, 'budget-ample'))!;
    expect(input.sweep.models!.map((m) => `${m.stage}:${m.model}`).sort()).toEqual(
      expect.arrayContaining([`formalize:${FAKE_MODELS.formalizer}`, `judge:${FAKE_MODELS.judge}`]),
    );
    const calls = input.sweep.models!.reduce((a, m) => a + m.calls, 0);
    expect(calls).toBe((await s.ledger!.sweepTotals('budget-ample')).calls);
    expect(input.sweep.configurations!.small).toMatchObject({ retrieval: 'none', repairRounds: 0, judge: true, topK: expect.any(Number) });
    // The grid's informal statements come from the sweep's own items.
    expect(Object.keys(input.sweep.informal!).sort()).toEqual([...new Set(runs.map((r) => r.item))].sort());
    expect(Object.values(input.sweep.informal!).every((t) => t.length > 10)).toBe(true);
    const { markdown } = await renderSweepReport(input);
    for (const label of ['models', 'screen', 'driftline', 'started', 'last run finished', 'Lean', 'library', 'leave-out policy', 'seeds']) {
      expect(markdown.match(new RegExp(`^- \\*\\*${label}\\*\\*: `, 'gm')), label).toHaveLength(1);
    }
    expect(markdown).toMatch(/^- \*\*driftline\*\*: driftline \d+\.\d+\.\d+/m);
    expect(markdown).toMatch(new RegExp(`^- \\*\\*screen\\*\\*: ${SCREEN_VERSION}$`, 'm'));
    expect(markdown).not.toMatch(/leave-out policy: /);
  }, 240_000);

  it('stops on a cost budget the same way (USD from the price table)', async () => {
    const BUDGET_USD = 0.002;
    const spec = {
      ...miniSpec({
        window: 1,
        maxAttempts: 1,
        configurations: [{ name: 'small', config: { retrieval: 'none', repairRounds: 0, cache: false } }],
      }),
      budget: { costUsd: BUDGET_USD },
    };
    await startOnStack(s, spec, { id: 'budget-cost' });
    const final = (await s.withWorkers(() => s.client.workflow.getHandle('budget-cost').result())) as SweepProgress;
    const runs = await s.results.runs('budget-cost');
    const perRun = await Promise.all(runs.map(async (r) => (await s.ledger!.runTotals(r.workflowId)).costUsd!));
    const spent = perRun.reduce((a, b) => a + b, 0);
    console.log(
      `cost budget $${BUDGET_USD}: ${runs.length} of 8 runs ($${perRun.map((c) => c.toFixed(6)).join(' + ')} = $${spent.toFixed(6)})`,
    );
    expect(runs.length).toBeLessThan(8);
    expect(spent).toBeGreaterThanOrEqual(BUDGET_USD);
    expect(spent - perRun[perRun.length - 1]!).toBeLessThan(BUDGET_USD);
    expect(final).toMatchObject({ status: 'budget-exhausted', done: runs.length, failed: 0 });
    expect(final.budget?.reached).toBe(`cost budget reached: $${spent.toFixed(4)} used of $${BUDGET_USD}`);
    expect(final.budget?.used.costUsd).toBeCloseTo(spent, 9);
  }, 240_000);
});
