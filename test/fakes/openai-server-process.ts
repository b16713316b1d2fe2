// The fake OpenAI-compatible server in a process of its own, for measuring the request rate a
// provider sees: in the test's own process, requests would be timestamped whenever that busy
// event loop (workflows, sweep, Lean) got round to them, bunched together. Started with IPC; it
// sends `{url}` once listening and answers `stats` with the arrival times of chat completions.
// FAKE_REFUSE_EVERY=10 FAKE_REFUSE_AT=2,5,8: requests numbered 2, 5, 8 of every ten get 429 with
// `Retry-After: FAKE_RETRY_AFTER` seconds (default 1).
import { defaultBrain, startFakeOpenAI, type FakeRequest } from './openai-server';

const every = Number(process.env.FAKE_REFUSE_EVERY ?? 0);
const refuseAt = new Set((process.env.FAKE_REFUSE_AT ?? '').split(',').filter(Boolean).map(Number));
const retryAfter = Number(process.env.FAKE_RETRY_AFTER ?? 1);
let n = 0;

const fake = await startFakeOpenAI({
  handler: (req: FakeRequest) => {
    const i = n++;
    return every > 0 && refuseAt.has(i % every)
      ? { status: 429, retryAfter, message: 'Rate limit reached for requests' }
      : defaultBrain(req);
  },
});
process.send!({ url: fake.url });
process.on('message', (msg) => {
  if (msg === 'stats') process.send!({ times: fake.requests.map((r) => r.at), statuses: n });
});
process.on('disconnect', () => void fake.close().finally(() => process.exit(0)));
