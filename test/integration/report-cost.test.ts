// The sweep report's cost, from the ledger the calls were recorded in: a sweep whose calls went
// half through provider batches (a transport that marks its replies as the batch transport does)
// and half one at a time, asked of the fake OpenAI-compatible server with priced fake models,
// recorded by the real metered fetch into the real results database (SQLite). The report states
// what was paid and what the same calls would have cost one at a time: for the batch
// configuration, half of what the same questions cost the synchronous one.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLlmClient } from '../../engines/llm/client';
import { withLlmCallContext } from '../../engines/llm/call-context';
import { meteredFetch } from '../../engines/llm/metered-fetch';
import { batchReply } from '../../engines/llm/batch-fetch';
import { costOf, type PriceTable } from '../../engines/llm/usage';
import { ResultsDb } from '../../engines/results/results-db';
import { SqlReplyLedger } from '../../engines/results/llm-ledger';
import { renderSweepReport } from '../../engines/report/write-report';
import { sweepReportInput } from '../../client/sweep-report';
import { unitWorkflowId } from '../../common/sweep-ledger';
import type { BenchmarkItem } from '../../common/sweep';
import { FAKE_MODELS, startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';
import { runRecord } from '../helpers/sweep-records';

// The fake's models, priced: $3 and $15 per million prompt and completion tokens.
const PRICES: PriceTable = {
  [FAKE_MODELS.formalizer]: { prompt: 3, completion: 15 },
  [FAKE_MODELS.judge]: { prompt: 3, completion: 15 },
};
const ITEMS: BenchmarkItem[] = Array.from({ length: 5 }, (_, i) => ({
  id: `Demo.item_${i}`,
  informal: `Every number ${i} is a number, said ${'at length '.repeat(i + 1)}.`,
  goldPremises: [],
  tags: {},
}));

let fake: FakeOpenAI;
let db: ResultsDb;
let dir: string;
beforeAll(async () => {
  fake = await startFakeOpenAI({ handler: (req) => ({ content: `theorem t : True := by sorry -- ${req.messages.at(-1)!.content}` }) });
  dir = mkdtempSync(join(tmpdir(), 'driftline-report-cost-'));
  db = await ResultsDb.open({ file: join(dir, 'results.sqlite') });
});
afterAll(async () => {
  await db?.close();
  await fake?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The fake, reached the way the batch transport reaches a reply: each one marked as a batch reply. */
const throughBatches: typeof fetch = async (input, init) => {
  const res = await fetch(input, init);
  return batchReply(await res.text());
};

/** Runs a sweep of two configurations asking the same questions, `sync` one at a time and
 * `batch` through batches, recording each run's calls under its workflow ID and its record. */
async function sweepOf(id: string, prices: PriceTable): Promise<void> {
  const ledger = new SqlReplyLedger(db.driver);
  const clientFor = (transport?: typeof fetch) =>
    createLlmClient({
      baseURL: fake.url,
      models: { decomposer: FAKE_MODELS.decomposer, formalizer: FAKE_MODELS.formalizer, judge: FAKE_MODELS.judge },
      timeoutMs: 10_000,
      maxReasks: 0,
      fetch: meteredFetch({ provider: fake.url, ledger, prices, ...(transport ? { fetch: transport } : {}) }),
    });
  const clients = { sync: clientFor(), batch: clientFor(throughBatches) };
  await db.createSweep(
    {
      id,
      library: 'mini',
      indexVersion: null,
      leaveOut: 'item',
      samples: 1,
      items: ITEMS.length,
      cells: [
        { name: 'sync', config: {}, hash: 'h-sync' },
        { name: 'batch', config: {}, hash: 'h-batch' },
      ],
      spec: {},
      createdAt: '2026-12-06T20:00:00.000Z',
    },
    ITEMS,
  );
  for (const config of ['sync', 'batch'] as const) {
    for (const item of ITEMS) {
      const runId = unitWorkflowId(id, config, item.id, 0);
      // The cache off: both configurations pay for the same questions.
      const ctx = { runId, sample: 0, cache: false };
      await withLlmCallContext({ ...ctx, stage: 'formalize' }, () =>
        clients[config].complete('formalizer', [{ role: 'user', content: item.informal }]),
      );
      await withLlmCallContext({ ...ctx, stage: 'judge' }, () =>
        clients[config].complete('judge', [{ role: 'user', content: `Judge: ${item.informal}` }]),
      );
      await db.recordRun(runRecord({ sweepId: id, config, item: item.id }));
    }
  }
}

describe("the sweep report's cost", () => {
  it("states the batch calls at half the price of the same calls one at a time, with the fake's prices", async () => {
    fake.usageServed.length = 0;
    await sweepOf('cost-sweep', PRICES);
    // What the provider served, priced one at a time: the first half of the calls are `sync`'s.
    const served = fake.usageServed.map((u) =>
      costOf(u.model, { promptTokens: u.prompt_tokens, completionTokens: u.completion_tokens, cachedTokens: 0 }, PRICES)!,
    );
    expect(served).toHaveLength(4 * ITEMS.length);
    const syncCalls = served.slice(0, 2 * ITEMS.length).reduce((a, b) => a + b, 0);
    const batchCallsOneAtATime = served.slice(2 * ITEMS.length).reduce((a, b) => a + b, 0);
    // The same questions cost the same one at a time, whichever configuration asked them.
    expect(batchCallsOneAtATime).toBeCloseTo(syncCalls, 12);

    const input = await sweepReportInput(db, 'cost-sweep');
    const report = await renderSweepReport(input!);
    const cost = report.data.cost!;
    expect(cost.calls).toBe(4 * ITEMS.length);
    expect(cost.batchCalls).toBe(2 * ITEMS.length);
    expect(cost.usdIfSynchronous).toBeCloseTo(syncCalls + batchCallsOneAtATime, 12);
    expect(cost.usd).toBeCloseTo(syncCalls + batchCallsOneAtATime / 2, 12);
    const per = Object.fromEntries(cost.perConfig.map((c) => [c.config, c]));
    expect(per.batch!.usd).toBeCloseTo(per.sync!.usd! / 2, 12);
    expect(per.batch!.usdIfSynchronous).toBeCloseTo(per.sync!.usd!, 12);
    expect(per.batch!.batchCalls).toBe(2 * ITEMS.length);
    expect(per.sync).toMatchObject({ batchCalls: 0, calls: 2 * ITEMS.length });
    expect(per.sync!.usdIfSynchronous).toBe(per.sync!.usd);

    // report.json carries the sweep's cost.
    const json = JSON.parse(report.json) as { cost: { usd: number; usdIfSynchronous: number } };
    expect(json.cost.usd).toBeCloseTo(cost.usd!, 12);
    expect(json.cost.usdIfSynchronous).toBeCloseTo(cost.usdIfSynchronous!, 12);

    // The pages say it: paid, one at a time, the share; per configuration too.
    const line =
      /LLM cost\*\*: \$([\d.]+), 10 of 20 calls in batches; \$([\d.]+) if sent one at a time: (.+?) of that, \$([\d.]+) saved/.exec(
        report.markdown,
      );
    expect(
      line,
      report.markdown.split('\n').find((l) => l.includes('LLM cost')),
    ).not.toBeNull();
    expect(Number(line![1])).toBeCloseTo(cost.usd!, 4);
    expect(Number(line![2])).toBeCloseTo(cost.usdIfSynchronous!, 4);
    expect(line![3]).toBe('three quarters'); // half the calls at half the price
    expect(report.html).toContain('<dt>LLM cost</dt>');
    expect(report.html).toContain('10 of 20 calls in batches');
    expect(report.markdown).toMatch(/\| calls in batches \| cost one at a time \(USD\) \|/);
    expect(report.markdown).toMatch(/\| 10 of 10 \| [\d.]+ \(paid [\d.]+\) \|/);
    expect(report.metricsCsv).toMatch(/\r\nbatch,,,cost_usd_if_synchronous,[\d.e-]+,,,10\r\n/);
  });

  it('says the cost is unknown, null in report.json, when the models have no price', async () => {
    await sweepOf('unpriced-sweep', {});
    const report = await renderSweepReport((await sweepReportInput(db, 'unpriced-sweep'))!);
    const json = JSON.parse(report.json) as { cost: { usd: number | null; usdIfSynchronous: number | null; unpricedCalls: number } };
    expect(json.cost).toMatchObject({ usd: null, usdIfSynchronous: null, unpricedCalls: 4 * ITEMS.length });
    expect(report.markdown).toContain('**LLM cost**: unknown: 20 of 20 calls went to models without a price (DRIFTLINE_LLM_PRICES)');
    // The other sweep's calls are not this one's.
    expect(json.cost).toMatchObject({ calls: 4 * ITEMS.length });
  });
});
