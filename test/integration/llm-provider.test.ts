// A real OpenAI-compatible server differs from OpenAI: llama-cpp-python's server refuses
// `json_schema`, never stops a base model unless max_tokens is sent, cuts replies off with
// finish_reason "length", drops system messages, and keeps generating for a client that timed
// out. The fake server reproduces each behaviour; every case must end as described, in seconds.
import { afterEach, describe, expect, it } from 'vitest';
import { createLlmClient, type LlmSettings } from '../../engines/llm/client';
import { DEFAULT_MAX_TOKENS } from '../../common/llm-roles';
import { LLM_FAILURE } from '../../common/failures';
import { EngineError } from '../../engines/errors';
import { decomposeStatement, formalizeStatement, judgeStatement } from '../../engines/llm/stages';
import { foldSystemPrompt } from '../../engines/llm/fold-system';
import type { ProviderStatus } from '../../engines/llm/provider';
import { FAKE_MODELS, fakeTokens, startFakeOpenAI, type FakeOpenAI, type FakeOpenAIOptions } from '../fakes/openai-server';

const fakes: FakeOpenAI[] = [];
afterEach(async () => {
  for (const f of fakes.splice(0)) await f.close();
});

async function server(opts: FakeOpenAIOptions = {}): Promise<FakeOpenAI> {
  const f = await startFakeOpenAI(opts);
  fakes.push(f);
  return f;
}

function settings(fake: FakeOpenAI, over: Partial<LlmSettings> = {}): LlmSettings {
  return { baseURL: fake.url, models: FAKE_MODELS, timeoutMs: 5000, maxReasks: 2, ...over };
}

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

const STATEMENT = 'Every prime number greater than 2 is odd.';
const formalizeInput = { statement: STATEMENT, premises: [], examples: [] };
const formats = (fake: FakeOpenAI) => fake.requests.map((r) => r.response_format?.type ?? 'none');

describe('structured-output modes', () => {
  it('falls back from json_schema to json_object with a schema when the server refuses json_schema with a 500 naming it, and remembers it', async () => {
    const fake = await server({ llamaCpp: { refuseJsonSchema: true } });
    const changes: ProviderStatus[] = [];
    const llm = createLlmClient(settings(fake, { onProviderChange: (s) => changes.push(s) }));

    const subqueries = await decomposeStatement(llm, STATEMENT);
    expect(subqueries.map((q) => q.formal)).toContain('Nat.Prime p');
    expect(formats(fake)).toEqual(['json_schema', 'json_object']);
    // llama.cpp turns the schema into a grammar; the instructions carry it too.
    expect(fake.requests[1]!.response_format?.schema).toMatchObject({ properties: { subqueries: expect.anything() } });
    expect(fake.requests[1]!.messages[0]!.content).toContain('JSON Schema');

    // Remembered for the provider: the next structured call goes straight to json_object.
    await judgeStatement(llm, { statement: STATEMENT, formalStatement: 'theorem t : True := by sorry', compiled: true });
    expect(formats(fake)).toEqual(['json_schema', 'json_object', 'json_object']);
    expect(llm.provider!.status()).toMatchObject({ structuredOutput: 'json_object', source: 'fallback' });
    expect(llm.provider!.status().detail).toContain('json_schema was refused: HTTP 500');
    expect(changes.at(-1)?.structuredOutput).toBe('json_object');
  });

  it('goes on to prompt mode (schema in the instructions, no response_format) when json_object is refused too', async () => {
    const fake = await server({
      handler: (req) =>
        req.response_format
          ? { status: 400, message: `response_format ${req.response_format.type} is not supported` }
          : { content: '{"subqueries": [{"phrase": "p is prime", "formal": "Nat.Prime p"}]}' },
    });
    const llm = createLlmClient(settings(fake));
    await decomposeStatement(llm, STATEMENT);
    expect(formats(fake)).toEqual(['json_schema', 'json_object', 'none']);
    expect(fake.requests[2]!.messages[0]!.content).toContain('JSON Schema');
    expect(llm.provider!.mode).toBe('prompt');
  });

  it('fails for good, naming every mode tried, when no mode is accepted', async () => {
    const fake = await server({ handler: () => ({ status: 500, message: 'response_format json_object: grammar compiler crashed' }) });
    const llm = createLlmClient(settings(fake));
    const f = await failureOf(decomposeStatement(llm, STATEMENT));
    expect(f.type).toBe(LLM_FAILURE.structuredOutputRefused);
    expect(f.nonRetryable).toBe(true);
    expect(f.message).toMatch(/json_schema: HTTP 500.*json_object: HTTP 500.*prompt: HTTP 500/);
    expect(f.message).toContain(fake.url);
    expect(fake.requests).toHaveLength(3);
  });

  it('does not fall back from a configured mode: the refusal is final and names the setting', async () => {
    const fake = await server({ llamaCpp: { refuseJsonSchema: true } });
    const llm = createLlmClient(settings(fake, { structuredOutput: 'json_schema' }));
    const f = await failureOf(decomposeStatement(llm, STATEMENT));
    expect(f.nonRetryable).toBe(true);
    expect(f.message).toContain('DRIFTLINE_LLM_STRUCTURED_OUTPUT');
    expect(f.message).toContain("Input should be 'text' or 'json_object'");
    expect(fake.requests).toHaveLength(1);
  });

  it('a configured json_object mode is used from the first request', async () => {
    const fake = await server({ llamaCpp: { refuseJsonSchema: true } });
    const llm = createLlmClient(settings(fake, { structuredOutput: 'json_object' }));
    await decomposeStatement(llm, STATEMENT);
    expect(formats(fake)).toEqual(['json_object']);
  });

  it('treats a 500 that does not name response_format as temporary, without falling back', async () => {
    const fake = await server({ script: { [FAKE_MODELS.decomposer]: [{ status: 500, message: 'out of memory' }] } });
    const llm = createLlmClient(settings(fake));
    const f = await failureOf(decomposeStatement(llm, STATEMENT));
    expect(f.type).toBe(LLM_FAILURE.unavailable);
    expect(f.nonRetryable).toBe(false);
    expect(llm.provider!.mode).toBe('json_schema');
  });
});

describe('the start probe', () => {
  it.each([
    ['an OpenAI-like server', {}, 'json_schema', ['json_schema']],
    ['llama-cpp-python', { llamaCpp: { refuseJsonSchema: true } }, 'json_object', ['json_schema', 'json_object']],
  ] as const)('finds the mode of %s with small requests', async (_name, opts, mode, sent) => {
    const fake = await server(opts as FakeOpenAIOptions);
    const llm = createLlmClient(settings(fake));
    const status = await llm.probe();
    expect(status).toMatchObject({ structuredOutput: mode, source: 'probe' });
    expect(formats(fake)).toEqual(sent);
    for (const r of fake.requests) expect(r.body.max_tokens).toBeLessThanOrEqual(16);
  });

  it('settles on prompt mode for a server that refuses both response formats', async () => {
    const fake = await server({
      handler: (req) => (req.response_format ? { status: 422, message: 'unknown field response_format' } : { content: '{}' }),
    });
    const status = await createLlmClient(settings(fake)).probe();
    expect(status).toMatchObject({ structuredOutput: 'prompt', source: 'probe' });
  });

  it('keeps the default and says why when the provider does not answer the probe', async () => {
    const fake = await server({ apiKey: 'sk-right' });
    const status = await createLlmClient(settings(fake, { apiKey: 'wrong' })).probe();
    expect(status).toMatchObject({ structuredOutput: 'json_schema', source: 'default' });
    expect(status!.detail).toContain('HTTP 401');
  });

  it('structured calls made while the probe runs wait for its answer', async () => {
    const fake = await server({ llamaCpp: { refuseJsonSchema: true } });
    // The probe's json_object request (json_schema is refused before any script) answers slowly.
    fake.script('*', { content: '{"answer": 4}', delayMs: 300 });
    const llm = createLlmClient(settings(fake));
    const probe = llm.probe();
    await decomposeStatement(llm, STATEMENT);
    await probe;
    // probe: json_schema (refused), json_object (slow); then the call: json_object at once.
    expect(formats(fake)).toEqual(['json_schema', 'json_object', 'json_object']);
  });

  it('does not probe when the mode is configured', async () => {
    const fake = await server();
    const status = await createLlmClient(settings(fake, { structuredOutput: 'prompt' })).probe();
    expect(status).toMatchObject({ structuredOutput: 'prompt', source: 'configured' });
    expect(fake.requests).toHaveLength(0);
  });
});

describe('max_tokens and replies cut off at it', () => {
  it('sends a max_tokens per role: the defaults, or the configured ones', async () => {
    const fake = await server();
    await decomposeStatement(createLlmClient(settings(fake)), STATEMENT);
    await formalizeStatement(createLlmClient(settings(fake)), formalizeInput);
    await formalizeStatement(
      createLlmClient(settings(fake, { maxTokens: { decomposer: 100, formalizer: 300, judge: 200 } })),
      formalizeInput,
    );
    expect(fake.requests.map((r) => r.body.max_tokens)).toEqual([DEFAULT_MAX_TOKENS.decomposer, DEFAULT_MAX_TOKENS.formalizer, 300]);
  });

  it("the agent's tool-calling steps carry their max_tokens too, and report a cut-off reply as length", async () => {
    const fake = await server();
    fake.script('*', { content: 'x'.repeat(4000) });
    const llm = createLlmClient(settings(fake, { maxTokens: { agent: 500 } }));
    const reply = await llm.completeWithTools('agent', [{ role: 'user', content: 'go' }], []);
    expect(fake.requests[0]!.body.max_tokens).toBe(500);
    expect(reply.finishReason).toBe('length');
  });

  it('asks again with twice the limit after a reply cut off at max_tokens, and never uses the cut-off reply', async () => {
    const fake = await server();
    fake.script(FAKE_MODELS.formalizer, {
      content:
        '```lean\ntheorem cut (p : ℕ) (hp : Nat.Prime p) : 2 ≤ p := by sorry\n```\n\nNow the last one:\n```lean\ntheorem half (p : ℕ) :',
      finishReason: 'length',
    });
    const statement = await formalizeStatement(createLlmClient(settings(fake)), formalizeInput);
    expect(statement).toContain('theorem fake_formalization');
    expect(fake.requests.map((r) => r.body.max_tokens)).toEqual([2048, 4096]);
    // The same question again, not the cut-off reply with a complaint.
    expect(fake.requests[1]!.messages).toEqual(fake.requests[0]!.messages);
  });

  it('fails clearly, for good, when the larger limit is cut off too: a model that never stops ends in seconds', async () => {
    const fake = await server({ llamaCpp: { neverStops: true } });
    const started = Date.now();
    const f = await failureOf(
      formalizeStatement(
        createLlmClient(settings(fake, { maxTokens: { decomposer: 1024, formalizer: 2000, judge: 1024 } })),
        formalizeInput,
      ),
    );
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(f.type).toBe(LLM_FAILURE.truncated);
    expect(f.nonRetryable).toBe(true);
    expect(f.message).toContain('max_tokens=4000');
    expect(f.message).toContain('finish_reason "length"');
    expect(f.message).toContain('DRIFTLINE_MAX_TOKENS_FORMALIZER');
    expect(f.message).toContain(fake.url);
    expect(fake.requests.map((r) => r.body.max_tokens)).toEqual([2000, 4000]);
  });

  it('without re-asks left, a cut-off reply fails at once', async () => {
    const fake = await server();
    fake.script(FAKE_MODELS.judge, { content: '{"grade": 9, "faithful": tr', finishReason: 'length' });
    const f = await failureOf(
      judgeStatement(createLlmClient(settings(fake, { maxReasks: 0 })), {
        statement: STATEMENT,
        formalStatement: 'theorem t : True := by sorry',
        compiled: true,
      }),
    );
    expect(f.type).toBe(LLM_FAILURE.truncated);
    expect(fake.requests).toHaveLength(1);
  });

  it('the fake model that never stops runs to its context limit when no max_tokens is sent', async () => {
    const fake = await server({ llamaCpp: { neverStops: true, contextTokens: 3000 } });
    const response = await fetch(`${fake.url}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: FAKE_MODELS.formalizer, messages: [{ role: 'user', content: STATEMENT }] }),
    });
    const body = (await response.json()) as { choices: { finish_reason: string; message: { content: string } }[] };
    expect(body.choices[0]!.finish_reason).toBe('length');
    expect(fakeTokens(body.choices[0]!.message.content)).toBeGreaterThan(2900);
  });
});

describe('system prompts and chat templates that drop them', () => {
  it('folds the system prompt into the first user message', () => {
    expect(
      foldSystemPrompt([
        { role: 'system', content: 'Rules.' },
        { role: 'user', content: 'Question?' },
        { role: 'assistant', content: 'Answer.' },
        { role: 'user', content: 'Again?' },
      ]),
    ).toEqual([
      { role: 'user', content: 'Rules.\n\nQuestion?' },
      { role: 'assistant', content: 'Answer.' },
      { role: 'user', content: 'Again?' },
    ]);
  });

  it('with a template that drops system messages the model never sees its instructions; folding fixes it', async () => {
    const fake = await server({ llamaCpp: { dropSystem: true } });
    const lost = await failureOf(decomposeStatement(createLlmClient(settings(fake)), STATEMENT));
    expect(lost.type).toBe(LLM_FAILURE.badReply);

    fake.requests.length = 0;
    const subqueries = await decomposeStatement(createLlmClient(settings(fake, { foldSystemPrompt: true })), STATEMENT);
    expect(subqueries.length).toBeGreaterThan(0);
    expect(fake.requests[0]!.messages.map((m) => m.role)).toEqual(['user']);
    expect(fake.requests[0]!.messages[0]!.content).toMatch(/^You prepare mathematical statements/);
  });
});

describe('a provider still busy after a timeout', () => {
  it('backs off after a timeout, fails calls meanwhile without sending them, and says the provider was still busy', async () => {
    const fake = await server();
    const llm = createLlmClient(settings(fake, { timeoutMs: 300, busyBackoffMs: 400 }));
    fake.script(FAKE_MODELS.formalizer, { content: 'late', delayMs: 1500 }, { content: 'late again', delayMs: 1500 });

    const first = await failureOf(llm.complete('formalizer', [{ role: 'user', content: 'hi' }]));
    expect(first.type).toBe(LLM_FAILURE.unavailable);
    expect(first.nonRetryable).toBe(false);
    expect(first.message).toContain('timed out after 300 ms');
    expect(first.retryAfterMs).toBe(400);

    // While backing off nothing is sent: the server is still writing the abandoned reply.
    const busy = await failureOf(llm.complete('judge', [{ role: 'user', content: 'hi' }]));
    expect(busy.type).toBe(LLM_FAILURE.unavailable);
    expect(busy.nonRetryable).toBe(false);
    expect(busy.message).toContain('still busy with an earlier request');
    expect(busy.message).toContain('fake-judge');
    expect(Number(busy.retryAfterMs)).toBeGreaterThan(0);
    expect(Number(busy.retryAfterMs)).toBeLessThanOrEqual(400);
    expect(fake.requests).toHaveLength(1);
    expect(llm.provider!.status().busyUntil).toBeDefined();

    // After the pause a second timeout in a row says what the first one probably caused, and
    // the pause doubles.
    await new Promise((r) => setTimeout(r, 450));
    const second = await failureOf(llm.complete('formalizer', [{ role: 'user', content: 'hi' }]));
    expect(second.message).toContain('probably still busy with an earlier request that timed out at');
    expect(second.retryAfterMs).toBe(800);

    // The agent's tool-calling steps keep to the same back-off.
    const agentBusy = await failureOf(llm.completeWithTools('agent', [{ role: 'user', content: 'hi' }], []));
    expect(agentBusy.message).toContain('still busy with an earlier request');
    expect(fake.requests).toHaveLength(2);

    // An answer ends the back-off.
    await new Promise((r) => setTimeout(r, 850));
    expect(await llm.complete('judge', [{ role: 'user', content: 'hi' }])).toBeTruthy();
    expect(llm.provider!.busyForMs()).toBe(0);
    expect(llm.provider!.status().busyUntil).toBeUndefined();
  });
});
