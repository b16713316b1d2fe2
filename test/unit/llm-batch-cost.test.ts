// What a call costs when it came back through a provider batch: the price table's batch factor
// (costOf), and the ledger's record of each call (metered-fetch.ts) as the batch transport
// marks it (batchReply): paid, and what it would have cost sent one at a time.
import { describe, expect, it } from 'vitest';
import { costOf, DEFAULT_BATCH_FACTOR, type PriceTable } from '../../engines/llm/usage';
import { batchReply } from '../../engines/llm/batch-fetch';
import { meteredFetch, type LlmCallRecord, type ReplyLedger, type StoredReply } from '../../engines/llm/metered-fetch';

const usage = { promptTokens: 1_000_000, completionTokens: 250_000, cachedTokens: 200_000 };
const prices: PriceTable = {
  plain: { prompt: 2, completion: 8, cachedPrompt: 0.5 },
  cheap: { prompt: 2, completion: 8, cachedPrompt: 0.5, batchFactor: 0.25 },
  same: { prompt: 2, completion: 8, batchFactor: 1 },
};

describe('costOf', () => {
  it('prices a synchronous call from the table: fresh and cached prompt tokens, and completion tokens', () => {
    // 800k fresh × $2 + 200k cached × $0.5 + 250k × $8, per million.
    expect(costOf('plain', usage, prices)).toBeCloseTo(1.6 + 0.1 + 2, 10);
    expect(costOf('plain', usage, prices, { batch: false })).toBeCloseTo(3.7, 10);
  });

  it('prices a batch call at the default batch factor, half, when the model names none', () => {
    expect(DEFAULT_BATCH_FACTOR).toBe(0.5);
    expect(costOf('plain', usage, prices, { batch: true })).toBeCloseTo(3.7 / 2, 10);
  });

  it("prices a batch call at the model's own batch factor", () => {
    expect(costOf('cheap', usage, prices, { batch: true })).toBeCloseTo(3.7 / 4, 10);
    expect(costOf('cheap', usage, prices)).toBeCloseTo(3.7, 10);
    // A factor of 1: the provider charges batches as it charges single calls.
    expect(costOf('same', usage, prices, { batch: true })).toBeCloseTo(costOf('same', usage, prices)!, 10);
  });

  it('gives no cost, never a guessed one, for a model without a price, batch or not', () => {
    expect(costOf('unknown', usage, prices)).toBeUndefined();
    expect(costOf('unknown', usage, prices, { batch: true })).toBeUndefined();
  });
});

class MemoryLedger implements ReplyLedger {
  replies = new Map<string, StoredReply>();
  calls: LlmCallRecord[] = [];
  async getReply(key: string) {
    return this.replies.get(key);
  }
  async putReply(key: string, reply: StoredReply) {
    if (!this.replies.has(key)) this.replies.set(key, reply);
  }
  async recordCall(call: LlmCallRecord) {
    this.calls.push(call);
  }
}

/** A transport answering every chat completion with the same usage; replies to requests whose
 * last message says "batch" carry the batch transport's header, as a batch transport sets it. */
function transport(calls: { n: number }): typeof fetch {
  return async (_input, init) => {
    calls.n++;
    const request = JSON.parse(String(init?.body)) as { messages: { content: string }[] };
    const text = request.messages.at(-1)!.content;
    const body = JSON.stringify({
      id: `c${calls.n}`,
      object: 'chat.completion',
      choices: [{ index: 0, message: { role: 'assistant', content: `re: ${text}` }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 1_000_000, completion_tokens: 250_000, total_tokens: 1_250_000 },
    });
    if (text.includes('batch')) return batchReply(body);
    return new Response(body, { status: 200, headers: { 'content-type': 'application/json' } });
  };
}

function ask(f: typeof fetch, model: string, text: string): Promise<Response> {
  return f('http://provider.test/v1/chat/completions', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: text }] }),
  });
}

describe('the ledger of batch calls', () => {
  it('records a reply marked as a batch reply at the batch price, with its price one at a time beside it', async () => {
    const ledger = new MemoryLedger();
    const sent = { n: 0 };
    const f = meteredFetch({ provider: 'http://provider.test/v1', ledger, prices, fetch: transport(sent) });
    await ask(f, 'plain', 'a batch question');
    await ask(f, 'plain', 'a question now');
    await ask(f, 'cheap', 'another batch question');
    const full = 2 + 2; // 1M prompt tokens × $2 + 250k completion tokens × $8
    expect(ledger.calls.map(({ batch, costUsd, costIfSyncUsd, cacheHit }) => ({ batch, costUsd, costIfSyncUsd, cacheHit }))).toEqual([
      { batch: true, costUsd: full / 2, costIfSyncUsd: full, cacheHit: false },
      { batch: false, costUsd: full, costIfSyncUsd: full, cacheHit: false },
      { batch: true, costUsd: full / 4, costIfSyncUsd: full, cacheHit: false },
    ]);
  });

  it('records a cache hit of a batch reply as free either way, and not as a batch call', async () => {
    const ledger = new MemoryLedger();
    const sent = { n: 0 };
    const f = meteredFetch({ provider: 'http://provider.test/v1', ledger, prices, fetch: transport(sent) });
    await ask(f, 'plain', 'a batch question');
    const again = await ask(f, 'plain', 'a batch question');
    expect(again.headers.get('x-driftline-cache')).toBe('hit');
    expect(sent.n).toBe(1);
    expect(ledger.calls[1]).toMatchObject({ batch: false, cacheHit: true, costUsd: 0, costIfSyncUsd: 0 });
  });

  it('records a batch call to a model without a price with no cost either way', async () => {
    const ledger = new MemoryLedger();
    const f = meteredFetch({ provider: 'http://provider.test/v1', ledger, prices, fetch: transport({ n: 0 }) });
    await ask(f, 'unpriced', 'a batch question');
    expect(ledger.calls[0]).toMatchObject({ batch: true, costUsd: undefined, costIfSyncUsd: undefined });
  });

  it("never takes a provider's own reply for a batch reply, whatever headers it carries", async () => {
    const ledger = new MemoryLedger();
    const inner: typeof fetch = async () =>
      new Response(JSON.stringify({ choices: [], usage: { prompt_tokens: 10, completion_tokens: 0 } }), {
        status: 200,
        headers: { 'x-driftline-batch': '1', 'x-batch': 'true' },
      });
    const f = meteredFetch({ provider: 'http://provider.test/v1', ledger, prices, fetch: inner });
    await ask(f, 'plain', 'q');
    expect(ledger.calls[0]).toMatchObject({ batch: false, costUsd: 20 / 1e6 });
  });
});
