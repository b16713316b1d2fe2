// A batch-mode call (engines/llm/batch-fetch.ts) against a mailbox in memory: what it hands over
// and when, as a retried activity meets its request in each state.
import { expect, it } from 'vitest';
import { batchFetch, isBatchReply, type BatchMailbox } from '../../engines/llm/batch-fetch';
import { withLlmCallContext } from '../../engines/llm/call-context';
import type { BatchRequestRow, BatchRequestState } from '../../engines/results/llm-batches';

const REPLY = JSON.stringify({
  id: 'c1',
  object: 'chat.completion',
  choices: [{ index: 0, message: { role: 'assistant', content: 'ok' } }],
});

/** A mailbox whose request is found in `initial` state, answered on the third read. */
function mailbox(initial: BatchRequestState | undefined) {
  const posted: string[] = [];
  let reads = 0;
  const box: BatchMailbox = {
    async post(req) {
      posted.push(req.customId);
    },
    async read(): Promise<BatchRequestRow | undefined> {
      reads++;
      if (reads >= 3) return { state: 'answered', reply: REPLY, error: null, submissions: 1 };
      return initial ? { state: initial, reply: null, error: null, submissions: 0 } : undefined;
    },
    async withdraw() {},
  };
  return { box, posted };
}

async function call(box: BatchMailbox): Promise<string> {
  const fetch = batchFetch({
    provider: 'default',
    mailbox: box,
    pollMs: 1,
    callTimeoutMs: 5_000,
    fetch: () => Promise.reject(new Error('not sent one at a time')),
  });
  const ctx = {
    runId: 'sweep/drift/item/0',
    stage: 'decompose',
    sample: 0,
    cache: false,
    batch: { sweep: 'sweep', waitMs: 60_000, resubmits: 2, requestPrefix: 'sweep/drift/item/0@abc/decompose/1', seen: new Map() },
  };
  const response = await withLlmCallContext(ctx, () =>
    fetch('http://provider.test/v1/chat/completions', { method: 'POST', body: JSON.stringify({ model: 'm', messages: [] }) }),
  );
  expect(isBatchReply(response)).toBe(true);
  return response.text();
}

it('hands a new request to its batcher, then answers with the batch reply', async () => {
  const { box, posted } = mailbox(undefined);
  expect(await call(box)).toBe(REPLY);
  expect(posted).toHaveLength(1);
});

it('tells the batcher again of a request an earlier attempt stored but may not have signalled', async () => {
  // The attempt that stored it died (or met the server down) before the signal landed; the
  // retry must not wait for a batcher that never heard of it.
  const { box, posted } = mailbox('collected');
  expect(await call(box)).toBe(REPLY);
  expect(posted).toHaveLength(1);
});

it('waits without posting again for a request already at the provider', async () => {
  const { box, posted } = mailbox('submitted');
  expect(await call(box)).toBe(REPLY);
  expect(posted).toEqual([]);
});
