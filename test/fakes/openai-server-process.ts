// The fake OpenAI-compatible server in a process of its own, for measuring the request rate a
// provider sees: in the test's own process, requests would be timestamped whenever that busy
// event loop (workflows, sweep, Lean) got round to them, bunched together. Started with IPC; it
// sends `{url}` once listening and answers `stats` with the arrival times of synchronous chat completions.
// FAKE_REFUSE_EVERY=10 FAKE_REFUSE_AT=2,5,8: requests numbered 2, 5, 8 of every ten get 429 with
// `Retry-After: FAKE_RETRY_AFTER` seconds (default 1). FAKE_LIMITS (JSON, FakeLimits) gives it an
// account's rate limits; `{limits}` changes them, and `quota` answers with what each request was
// charged and how it ended. FAKE_BATCHES (JSON, FakeBatchOptions) sets the Batch API's pace and
// faults; `{batchFault}` queues a fault for the next batch, `{batchDelayMs}` changes the pace, and
// `batches` answers with the submission counts (FakeBatchCounts). The process outlives the
// workers a test kills, and so do its batches.
import {
  defaultBrain,
  startFakeOpenAI,
  type FakeBatchFault,
  type FakeBatchOptions,
  type FakeLimits,
  type FakeRequest,
} from './openai-server';

const every = Number(process.env.FAKE_REFUSE_EVERY ?? 0);
const refuseAt = new Set((process.env.FAKE_REFUSE_AT ?? '').split(',').filter(Boolean).map(Number));
const retryAfter = Number(process.env.FAKE_RETRY_AFTER ?? 1);
let n = 0;

const limits = process.env.FAKE_LIMITS ? (JSON.parse(process.env.FAKE_LIMITS) as FakeLimits) : undefined;
const batches = process.env.FAKE_BATCHES ? (JSON.parse(process.env.FAKE_BATCHES) as FakeBatchOptions) : undefined;
const fake = await startFakeOpenAI({
  ...(limits ? { limits } : {}),
  ...(batches ? { batches } : {}),
  handler: (req: FakeRequest) => {
    const i = n++;
    return every > 0 && refuseAt.has(i % every)
      ? { status: 429, retryAfter, message: 'Rate limit reached for requests' }
      : defaultBrain(req);
  },
});
process.send!({ url: fake.url });
process.on('message', (msg: unknown) => {
  if (msg === 'stats') process.send!({ times: fake.requests.filter((r) => !r.batch).map((r) => r.at), statuses: n });
  if (msg === 'quota') process.send!({ quota: fake.quota?.log ?? [] });
  if (msg === 'batches') process.send!({ batches: fake.batches.stats() });
  if (typeof msg === 'object' && msg !== null && 'limits' in msg) {
    fake.quota?.set((msg as { limits: FakeLimits }).limits);
    process.send!({ limitsSet: true });
  }
  if (typeof msg === 'object' && msg !== null && 'batchFault' in msg) {
    fake.batches.failNext((msg as { batchFault: FakeBatchFault }).batchFault);
    process.send!({ batchFaultSet: true });
  }
  if (typeof msg === 'object' && msg !== null && 'batchDelayMs' in msg) {
    fake.batches.setDelay((msg as { batchDelayMs: number }).batchDelayMs);
    process.send!({ batchDelaySet: true });
  }
});
process.on('disconnect', () => void fake.close().finally(() => process.exit(0)));
