import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createLlmClient, type LlmSettings } from '../../engines/llm/client';
import { LLM_FAILURE } from '../../common/failures';
import { EngineError } from '../../engines/errors';
import { retryDelayFromHeaders } from '../../engines/llm/api-errors';
import { FAKE_MODELS, startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';

let fake: FakeOpenAI;
beforeAll(async () => {
  fake = await startFakeOpenAI({ apiKey: 'sk-test' });
});
afterAll(() => fake.close());
afterEach(() => {
  fake.requests.length = 0;
});

function settings(over: Partial<LlmSettings> = {}): LlmSettings {
  return { baseURL: fake.url, apiKey: 'sk-test', models: FAKE_MODELS, timeoutMs: 2000, maxReasks: 2, ...over };
}

const hello = [{ role: 'user' as const, content: 'hello' }];

async function failureOf(p: Promise<unknown>): Promise<EngineError> {
  const err = await p.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(EngineError);
  return err as EngineError;
}

describe('LlmClient against an OpenAI-compatible server', () => {
  it("uses the role's model and returns the reply text", async () => {
    fake.script(FAKE_MODELS.formalizer, { content: 'theorem t : True := by sorry' });
    const text = await createLlmClient(settings()).complete('formalizer', hello);
    expect(text).toBe('theorem t : True := by sorry');
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]!.model).toBe('fake-formalizer');
    expect(fake.requests[0]!.authorization).toBe('Bearer sk-test');
  });

  it('asks for strict JSON when a schema is given, and the JSON comes back parseable', async () => {
    fake.script(FAKE_MODELS.judge, { content: '{"grade": 9}' });
    const schema = { type: 'object', properties: { grade: { type: 'integer' } }, required: ['grade'], additionalProperties: false };
    const text = await createLlmClient(settings()).complete('judge', hello, { json: { name: 'verdict', schema } });
    expect(JSON.parse(text)).toEqual({ grade: 9 });
    expect(fake.requests[0]!.response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'verdict', schema, strict: true },
    });
  });

  it('sends the temperature only when one is set', async () => {
    await createLlmClient(settings()).complete('judge', hello);
    await createLlmClient(settings({ temperature: 0.2 })).complete('judge', hello);
    expect('temperature' in fake.requests[0]!.body).toBe(false);
    expect(fake.requests[1]!.body.temperature).toBe(0.2);
  });

  it('maps 429 with Retry-After seconds to a retryable failure with that delay', async () => {
    fake.script(FAKE_MODELS.decomposer, { status: 429, retryAfter: 7 });
    const f = await failureOf(createLlmClient(settings()).complete('decomposer', hello));
    expect(f.type).toBe(LLM_FAILURE.unavailable);
    expect(f.nonRetryable).toBe(false);
    expect(f.retryAfterMs).toBe(7000);
    expect(fake.callsTo(FAKE_MODELS.decomposer)).toBe(1); // the SDK itself must not retry
  });

  it('prefers retry-after-ms, and reads Retry-After given as an HTTP date', async () => {
    fake.script(FAKE_MODELS.decomposer, { status: 429, retryAfter: 30, retryAfterMs: 1500 });
    const f1 = await failureOf(createLlmClient(settings()).complete('decomposer', hello));
    expect(f1.retryAfterMs).toBe(1500);

    fake.script(FAKE_MODELS.decomposer, { status: 503, retryAfter: new Date(Date.now() + 60_000).toUTCString() });
    const f2 = await failureOf(createLlmClient(settings()).complete('decomposer', hello));
    expect(f2.nonRetryable).toBe(false);
    expect(Number(f2.retryAfterMs)).toBeGreaterThan(50_000);
    expect(Number(f2.retryAfterMs)).toBeLessThanOrEqual(60_000);
  });

  it('maps 500 to a retryable failure without a forced delay', async () => {
    fake.script(FAKE_MODELS.judge, { status: 500 });
    const f = await failureOf(createLlmClient(settings()).complete('judge', hello));
    expect(f.type).toBe(LLM_FAILURE.unavailable);
    expect(f.nonRetryable).toBe(false);
    expect(f.retryAfterMs ?? undefined).toBeUndefined();
    expect(f.message).toContain('HTTP 500');
  });

  it('maps 401 to a non-retryable failure naming status, model, base URL and the key variable', async () => {
    const f = await failureOf(createLlmClient(settings({ apiKey: 'wrong' })).complete('judge', hello));
    expect(f.nonRetryable).toBe(true);
    expect(f.type).toBe(LLM_FAILURE.unauthorized);
    expect(f.message).toContain('401');
    expect(f.message).toContain('fake-judge');
    expect(f.message).toContain(fake.url);
    expect(f.message).toContain('check OPENAI_API_KEY');
  });

  it.each([
    [400, LLM_FAILURE.badRequest],
    [403, LLM_FAILURE.unauthorized],
    [404, LLM_FAILURE.notFound],
  ])('maps %i to a non-retryable failure', async (status, type) => {
    fake.script(FAKE_MODELS.formalizer, { status });
    const f = await failureOf(createLlmClient(settings()).complete('formalizer', hello));
    expect(f.nonRetryable).toBe(true);
    expect(f.type).toBe(type);
    expect(f.message).toContain(String(status));
    expect(f.message).toContain('fake-formalizer');
  });

  it('maps a timeout to a retryable failure', async () => {
    fake.script(FAKE_MODELS.formalizer, { content: 'late', delayMs: 1000 });
    const f = await failureOf(createLlmClient(settings({ timeoutMs: 150 })).complete('formalizer', hello));
    expect(f.type).toBe(LLM_FAILURE.unavailable);
    expect(f.nonRetryable).toBe(false);
    expect(f.message).toContain('timed out after 150 ms');
  });

  it('maps a dropped connection to a retryable failure', async () => {
    fake.script(FAKE_MODELS.formalizer, { hangUp: true });
    const f = await failureOf(createLlmClient(settings()).complete('formalizer', hello));
    expect(f.type).toBe(LLM_FAILURE.unavailable);
    expect(f.nonRetryable).toBe(false);
  });

  it('maps an unreachable server to a retryable failure', async () => {
    const gone = await startFakeOpenAI();
    const url = gone.url;
    await gone.close();
    const f = await failureOf(createLlmClient(settings({ baseURL: url })).complete('judge', hello));
    expect(f.type).toBe(LLM_FAILURE.unavailable);
    expect(f.message).toContain(url);
  });

  it('gives back the cancellation reason when the call is aborted', async () => {
    fake.script(FAKE_MODELS.formalizer, { content: 'late', delayMs: 1000 });
    const controller = new AbortController();
    const reason = new Error('activity cancelled');
    setTimeout(() => controller.abort(reason), 50);
    await expect(createLlmClient(settings()).complete('formalizer', hello, { signal: controller.signal })).rejects.toBe(reason);
  });
});

describe('an LLM that is not configured', () => {
  it.each([null, { models: FAKE_MODELS, timeoutMs: 1000, maxReasks: 1 }])('fails every call with LlmNotConfigured (%#)', async (s) => {
    const llm = createLlmClient(s);
    expect(llm.configured).toBe(false);
    const f = await failureOf(llm.complete('decomposer', hello));
    expect(f.type).toBe(LLM_FAILURE.notConfigured);
    expect(f.nonRetryable).toBe(true);
    expect(f.message).toContain('OPENAI_BASE_URL');
    expect(f.message).toContain('DRIFTLINE_MODEL_');
  });
});

describe('retryDelayFromHeaders', () => {
  const h = (entries: Record<string, string>) => new Headers(entries);
  it('reads seconds, milliseconds and HTTP dates, and ignores what it cannot read', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(retryDelayFromHeaders(h({ 'retry-after': '2.5' }), now)).toBe(2500);
    expect(retryDelayFromHeaders(h({ 'retry-after-ms': '120', 'retry-after': '9' }), now)).toBe(120);
    expect(retryDelayFromHeaders(h({ 'retry-after': 'Thu, 01 Jan 2026 00:00:10 GMT' }), now)).toBe(10_000);
    expect(retryDelayFromHeaders(h({ 'retry-after': 'Wed, 31 Dec 2025 23:00:00 GMT' }), now)).toBe(0);
    expect(retryDelayFromHeaders(h({ 'retry-after': 'soon' }), now)).toBeUndefined();
    expect(retryDelayFromHeaders(h({ 'retry-after': '-3' }), now)).toBeUndefined();
    expect(retryDelayFromHeaders(h({}), now)).toBeUndefined();
  });
});
