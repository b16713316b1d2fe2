// The batch-mode transport (engines/llm/batch-fetch.ts): which requests it keeps from the network,
// the custom_id it gives them (the same in every retry of the activity), how it hands back the
// batch's answer, falls back to a synchronous call, and lets go when its caller stops waiting.
import { describe, expect, it } from 'vitest';
import { batchFetch, batchCustomId, isBatchReply, type BatchMailbox } from '../../engines/llm/batch-fetch';
import { withLlmCallContext, type BatchCallContext } from '../../engines/llm/call-context';
import type { BatchRequestRow, CollectedRequest } from '../../engines/results/llm-batches';

/** A mailbox whose batcher answers after `answerAfter` reads (or hands the request back). */
function mailbox(behaviour: { answerAfter?: number; handBack?: boolean } = {}) {
  const rows = new Map<string, BatchRequestRow & { reads: number }>();
  const posted: CollectedRequest[] = [];
  const withdrawn: string[] = [];
  const box: BatchMailbox = {
    async post(req) {
      posted.push(req);
      if (!rows.has(req.customId) || rows.get(req.customId)!.state === 'withdrawn')
        rows.set(req.customId, { state: 'collected', reply: null, error: null, submissions: 0, reads: 0 });
    },
    async read(customId) {
      const row = rows.get(customId);
      if (!row) return undefined;
      row.reads++;
      if (row.state === 'collected' && row.reads > (behaviour.answerAfter ?? 1)) {
        if (behaviour.handBack) row.state = 'synchronous';
        else Object.assign(row, { state: 'answered', reply: JSON.stringify({ id: 'chatcmpl-b', answered: customId }) });
      }
      return { state: row.state, reply: row.reply, error: row.error, submissions: row.submissions };
    },
    async withdraw(customId) {
      withdrawn.push(customId);
      const row = rows.get(customId);
      if (row?.state === 'collected') row.state = 'withdrawn';
    },
  };
  return { box, posted, withdrawn, rows };
}

const batchCtx = (prefix = 'sw/drift/A.1/0@1234abcd/formalize/5'): BatchCallContext => ({
  sweep: 'sw',
  waitMs: 60_000,
  resubmits: 2,
  requestPrefix: prefix,
  seen: new Map(),
});

const inCall = <T>(batch: BatchCallContext | undefined, fn: () => Promise<T>) =>
  withLlmCallContext({ runId: 'sw/drift/A.1/0', stage: 'formalize', sample: 0, cache: true, ...(batch ? { batch } : {}) }, fn);

const URL_ = 'http://provider.test/v1/chat/completions';
const body = (content: string) => JSON.stringify({ model: 'm-1', messages: [{ role: 'user', content }] });

function network() {
  const sent: string[] = [];
  const fetch: typeof globalThis.fetch = async (_input, init) => {
    sent.push(String(init?.body));
    return new Response(JSON.stringify({ id: 'chatcmpl-sync' }), { status: 200, headers: { 'content-type': 'application/json' } });
  };
  return { fetch, sent };
}

describe('batch-mode transport', () => {
  it('sends requests of runs not in batch mode, and other endpoints, to the network', async () => {
    const m = mailbox();
    const net = network();
    const f = batchFetch({ provider: 'default', mailbox: m.box, pollMs: 1, callTimeoutMs: 5_000, fetch: net.fetch });
    await inCall(undefined, () => f(URL_, { method: 'POST', body: body('a') }));
    await inCall(batchCtx(), () => f('http://provider.test/v1/embeddings', { method: 'POST', body: body('b') }));
    expect(net.sent).toHaveLength(2);
    expect(m.posted).toEqual([]);
  });

  it("waits for the batch's answer and returns it as the provider's reply, marked as a batch reply", async () => {
    const m = mailbox({ answerAfter: 2 });
    const net = network();
    const f = batchFetch({ provider: 'default', mailbox: m.box, pollMs: 1, callTimeoutMs: 5_000, fetch: net.fetch });
    const res = await inCall(batchCtx(), () => f(URL_, { method: 'POST', body: body('a') }));
    expect(res.status).toBe(200);
    expect(isBatchReply(res)).toBe(true);
    const reply = (await res.json()) as { answered: string };
    expect(net.sent).toEqual([]);
    expect(m.posted).toHaveLength(1);
    expect(m.posted[0]).toMatchObject({
      sweep: 'sw',
      provider: 'default',
      model: 'm-1',
      batcher: 'llm-batch/sw/default/m-1',
      stage: 'formalize',
    });
    expect(reply.answered).toBe(m.posted[0]!.customId);
    expect(m.posted[0]!.customId).toMatch(/^sw\/drift\/A\.1\/0@1234abcd\/formalize\/5\/[0-9a-f]{16}$/);
  });

  it('gives a retried activity the same custom_ids, so it finds its requests instead of making new ones', async () => {
    const m = mailbox({ answerAfter: 1 });
    const f = batchFetch({ provider: 'default', mailbox: m.box, pollMs: 1, callTimeoutMs: 5_000, fetch: network().fetch });
    const attempt = () =>
      inCall(batchCtx(), async () => {
        await f(URL_, { method: 'POST', body: body('first') });
        await f(URL_, { method: 'POST', body: body('second') });
      });
    await attempt();
    await attempt(); // the activity's retry: every request was answered already
    expect(m.posted.map((p) => p.customId)).toHaveLength(2);
    expect(new Set(m.rows.keys()).size).toBe(2);
  });

  it('names identical requests of one activity apart, and requests of other stages or attempts apart', () => {
    const ctx = batchCtx();
    const a = batchCustomId(ctx, body('x'));
    const b = batchCustomId(ctx, body('x'));
    expect(b).toBe(`${a}#1`);
    expect(batchCustomId(batchCtx('sw/drift/A.1/0@1234abcd/repair/9'), body('x'))).not.toBe(a);
    // A very long run ID stays bounded and distinct.
    const long = batchCustomId(batchCtx(`${'x'.repeat(300)}@1/formalize/1`), body('x'));
    const long2 = batchCustomId(batchCtx(`${'y'.repeat(300)}@1/formalize/1`), body('x'));
    expect(long.length).toBeLessThanOrEqual(200);
    expect(long).not.toBe(long2);
  });

  it('sends a request one at a time when the batcher hands it back', async () => {
    const m = mailbox({ handBack: true });
    const net = network();
    const f = batchFetch({ provider: 'default', mailbox: m.box, pollMs: 1, callTimeoutMs: 5_000, fetch: net.fetch });
    const res = await inCall(batchCtx(), () => f(URL_, { method: 'POST', body: body('a') }));
    expect(isBatchReply(res)).toBe(false);
    expect(net.sent).toEqual([body('a')]);
  });

  it('gives a request sent one at a time its own call time, not the batch wait', async () => {
    const m = mailbox({ handBack: true });
    // A provider that never answers, until the request is aborted.
    const hanging: typeof fetch = (_input, init) =>
      new Promise((_resolve, reject) => init?.signal?.addEventListener('abort', () => reject(init.signal!.reason as Error)));
    const f = batchFetch({ provider: 'default', mailbox: m.box, pollMs: 1, callTimeoutMs: 50, fetch: hanging });
    const started = Date.now();
    await expect(inCall(batchCtx(), () => f(URL_, { method: 'POST', body: body('a') }))).rejects.toThrow(/timeout|aborted/i);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('withdraws its request when the caller stops waiting', async () => {
    const m = mailbox({ answerAfter: Infinity });
    const f = batchFetch({ provider: 'default', mailbox: m.box, pollMs: 5, callTimeoutMs: 5_000, fetch: network().fetch });
    const abort = new AbortController();
    const call = inCall(batchCtx(), () => f(URL_, { method: 'POST', body: body('a'), signal: abort.signal }));
    setTimeout(() => abort.abort(), 30);
    await expect(call).rejects.toThrow(/abort/i);
    expect(m.withdrawn).toEqual([m.posted[0]!.customId]);
    expect(m.rows.get(m.posted[0]!.customId)?.state).toBe('withdrawn');
  });
});
