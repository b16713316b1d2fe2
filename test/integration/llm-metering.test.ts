// The reply cache and the call ledger, as the OpenAI client uses them (metered-fetch.ts as its
// fetch): counted at the fake OpenAI-compatible server, which is what a provider would bill.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createLlmClient, type LlmSettings } from '../../engines/llm/client';
import { withLlmCallContext } from '../../engines/llm/call-context';
import { meteredFetch, type LlmCallRecord, type ReplyLedger, type StoredReply } from '../../engines/llm/metered-fetch';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';

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

let fake: FakeOpenAI;
let ledger: MemoryLedger;
beforeAll(async () => {
  fake = await startFakeOpenAI({ handler: (req) => ({ content: `echo ${req.messages.at(-1)!.content}`, delayMs: 150 }) });
});
afterAll(() => fake.close());
beforeEach(() => {
  ledger = new MemoryLedger();
  fake.requests.length = 0;
});

function client(overrides: Partial<LlmSettings> = {}) {
  return createLlmClient({
    baseURL: fake.url,
    models: { decomposer: 'm-dec', formalizer: 'm-form', judge: 'm-judge' },
    timeoutMs: 10_000,
    maxReasks: 0,
    fetch: meteredFetch({ provider: fake.url, ledger, prices: { 'm-form': { prompt: 2, completion: 8 } } }),
    ...overrides,
  });
}
const ask = (c = client(), text = 'hello') => c.complete('formalizer', [{ role: 'user', content: text }]);
const run = <T>(ctx: Partial<Parameters<typeof withLlmCallContext>[0]>, fn: () => Promise<T>) =>
  withLlmCallContext({ sample: 0, cache: true, ...ctx }, fn);

describe('the reply cache', () => {
  it('answers a repeated request from the cache: the provider sees it once', async () => {
    const c = client();
    expect(await ask(c)).toBe('echo hello');
    expect(await ask(c)).toBe('echo hello');
    expect(fake.requests).toHaveLength(1);
    expect(ledger.calls.map((x) => x.cacheHit)).toEqual([false, true]);
  });

  it('misses when anything that changes the reply changes: model, temperature, sample, messages', async () => {
    await ask();
    await run({ temperature: 0.7 }, () => ask());
    await run({ sample: 1 }, () => ask());
    await run({ models: { formalizer: 'other-model' } }, () => ask());
    await ask(client(), 'hello again');
    expect(fake.requests).toHaveLength(5);
    expect(fake.requests[1]!.body.temperature).toBe(0.7);
    expect(fake.requests[3]!.model).toBe('other-model');
    // …and each of them hits on a second asking.
    await run({ sample: 1 }, () => ask());
    await run({ temperature: 0.7 }, () => ask());
    expect(fake.requests).toHaveLength(5);
  });

  it('is neither read nor written for a run that turns it off', async () => {
    await ask();
    await run({ cache: false }, () => ask());
    await run({ cache: false }, () => ask());
    expect(fake.requests).toHaveLength(3);
    expect(ledger.calls.every((x) => !x.cacheHit)).toBe(true);
  });

  it('sends identical requests in flight at the same time once', async () => {
    const c = client();
    const replies = await Promise.all([ask(c, 'same'), ask(c, 'same'), ask(c, 'same')]);
    expect(replies).toEqual(['echo same', 'echo same', 'echo same']);
    expect(fake.requests).toHaveLength(1);
    expect(ledger.calls.filter((x) => x.cacheHit)).toHaveLength(2);
  });

  it('never keeps an error answer', async () => {
    fake.script('m-form', { status: 500, message: 'boom' });
    await expect(ask()).rejects.toThrow();
    expect(await ask()).toBe('echo hello');
    expect(fake.requests).toHaveLength(2);
    expect(ledger.replies.size).toBe(1);
  });
});

describe('the ledger', () => {
  it("records each reply used with the provider's token counts, the run, the stage and the price", async () => {
    await run({ runId: 'run-1', stage: 'formalize' }, () => ask());
    await run({ runId: 'run-2', stage: 'formalize' }, () => ask());
    const sent = JSON.parse(ledger.replies.values().next().value!.body).usage;
    expect(ledger.calls[0]).toMatchObject({
      runId: 'run-1',
      stage: 'formalize',
      provider: fake.url,
      model: 'm-form',
      cacheHit: false,
      usage: { promptTokens: sent.prompt_tokens, completionTokens: sent.completion_tokens, cachedTokens: 0 },
    });
    // 2 USD per million prompt tokens, 8 per million completion tokens.
    expect(ledger.calls[0]!.costUsd).toBeCloseTo((2 * sent.prompt_tokens + 8 * sent.completion_tokens) / 1e6, 12);
    // The second run used the same reply from the cache: same tokens, nothing paid.
    expect(ledger.calls[1]).toMatchObject({ runId: 'run-2', cacheHit: true, costUsd: 0, usage: ledger.calls[0]!.usage });
  });

  it('has no price for a model the table does not list', async () => {
    await client().complete('judge', [{ role: 'user', content: 'x' }]);
    expect(ledger.calls[0]!.costUsd).toBeUndefined();
  });
});
