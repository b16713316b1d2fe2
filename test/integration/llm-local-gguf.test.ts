// The local chat model. Always: how schemas become grammars sized to max tokens, and the
// chat-completions protocol of the in-process transport (with a scripted model). With the real
// Gemma 3 270M GGUF (`npm run setup:llm`; CI installs it, and there a missing model fails):
// node-llama-cpp answers under a grammar with real token counts, requests in a row and at once
// share the one context, and one whole run (decompose → retrieve → illustrate → formalize →
// compile on the fake REPL → judge) goes through the real Temporal dev server and workers on the
// provider exactly as `DRIFTLINE_LLM_PROVIDER=local` configures it.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import {
  DEFAULT_GRAMMAR_BOUNDS,
  fitGrammarBounds,
  LocalContextError,
  LocalGgufChat,
  toGrammarSchema,
  type LocalChatReply,
  type LocalChatRequest,
} from '../../engines/llm/local-gguf';
import { localFetch } from '../../engines/llm/local-fetch';
import { toStrictJsonSchema } from '../../engines/llm/strict-json-schema';
import { JudgeReply } from '../../engines/llm/judge-prompt';
import { DecomposeReply } from '../../engines/llm/decompose-prompt';
import { extractLeanStatement, leanStatementGrammar } from '../../engines/llm/formalize-prompt';
import { gbnfRegExp } from '../helpers/gbnf';
import { createLlmClient } from '../../engines/llm/client';
import { loadConfig } from '../../infra/config';
import { closeLocalModels, createConfiguredLlm } from '../../infra/deps';
import { createStack, FIXTURE_CORPUS, FIXTURE_LIBRARY, startTemporal, type TestStack } from '../helpers/stack';

const MODEL = resolve(process.env.DRIFTLINE_LOCAL_LLM_PATH ?? '.tools/models/gemma-3-270m-q4_k_m.gguf');
const haveModel = existsSync(MODEL);

/** The largest value a grammar-bounded schema allows, as the grammar may lay it out at most. */
function largest(schema: Record<string, any>): unknown {
  if (Array.isArray(schema.enum))
    return schema.enum.reduce((a: unknown, b: unknown) => (JSON.stringify(b).length > JSON.stringify(a).length ? b : a));
  switch (schema.type) {
    case 'string':
      return 'x'.repeat(schema.maxLength);
    case 'boolean':
      return false;
    case 'array':
      return Array.from({ length: schema.maxItems }, () => largest(schema.items));
    case 'object':
      return Object.fromEntries(Object.entries(schema.properties).map(([k, v]) => [k, largest(v as Record<string, any>)]));
    default:
      throw new Error(`no largest value for ${JSON.stringify(schema)}`);
  }
}

describe('grammars from our schemas', () => {
  it('narrows a strict schema: small integer ranges listed, strings never empty and bounded, arrays bounded', () => {
    const g = toGrammarSchema(toStrictJsonSchema(JudgeReply)) as Record<string, any>;
    expect(g.properties.grade).toEqual({ enum: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10] });
    expect(g.properties.faithful).toEqual({ type: 'boolean' });
    expect(g.properties.explanation).toEqual({ type: 'string', minLength: 1, maxLength: DEFAULT_GRAMMAR_BOUNDS.maxString });
    expect(g.required).toEqual(['grade', 'faithful', 'explanation']);
    expect(g.$schema).toBeUndefined();
    const d = toGrammarSchema(toStrictJsonSchema(DecomposeReply), { maxString: 50, maxItems: 3 }) as Record<string, any>;
    expect(d.properties.subqueries).toMatchObject({ type: 'array', minItems: 1, maxItems: 3 });
    expect(d.properties.subqueries.items.properties.phrase).toEqual({ type: 'string', minLength: 1, maxLength: 50 });
    // A wide integer range is left to zod; a schema's own tighter bounds are kept.
    expect(toGrammarSchema({ type: 'integer', minimum: 0, maximum: 1000 })).toEqual({ type: 'integer' });
    expect(toGrammarSchema({ type: 'string', maxLength: 7 })).toEqual({ type: 'string', minLength: 1, maxLength: 7 });
  });

  it('sizes the bounds so that the largest reply fits in max tokens at one character a token', () => {
    // JSON.stringify with 4 spaces lays a value out as the grammar may at most: a newline and
    // four spaces a level before each member, a space after each colon.
    for (const schema of [toStrictJsonSchema(JudgeReply), toStrictJsonSchema(DecomposeReply)]) {
      for (const maxTokens of [150, 200, 300, 600, 1024, 4096]) {
        const bounds = fitGrammarBounds(schema, maxTokens);
        const widest = JSON.stringify(largest(toGrammarSchema(schema, bounds) as Record<string, any>), null, 4);
        expect(widest.length, `${maxTokens}: ${JSON.stringify(bounds)}`).toBeLessThanOrEqual(maxTokens - 4);
        expect(bounds.maxString).toBeGreaterThanOrEqual(1);
        expect(bounds.maxString).toBeLessThanOrEqual(DEFAULT_GRAMMAR_BOUNDS.maxString);
      }
    }
    // Room enough: the configured bounds, unchanged.
    expect(fitGrammarBounds(toStrictJsonSchema(JudgeReply), 4096)).toEqual(DEFAULT_GRAMMAR_BOUNDS);
  });

  it('gives the formalizer one lean block: definitions, then one sorry theorem, as long as max tokens allow', () => {
    // The grammar's language and length bound are unit-tested (llm-prompts.test.ts); here, its frame.
    const g = leanStatementGrammar(2048);
    expect(g).toContain('root ::= "```lean\\n" definition{0,3} "theorem " statement " := by sorry\\n```"');
    expect(leanStatementGrammar(150)).toContain('root ::= "```lean\\n" "theorem " statement " := by sorry\\n```"');
    expect(leanStatementGrammar(150)).toContain('statement ::= [^`]{1,110}');
    expect(leanStatementGrammar(100_000)).toContain('{1,1500}');
  });
});

/** A scripted stand-in for the model, to test the protocol alone. */
function scripted(reply: Partial<LocalChatReply> = {}) {
  const seen: LocalChatRequest[] = [];
  const chat = {
    id: 'local:scripted.gguf',
    async complete(req: LocalChatRequest): Promise<LocalChatReply> {
      seen.push(req);
      return { content: '{"ok":true}', finishReason: 'stop', usage: { promptTokens: 31, completionTokens: 7 }, ...reply };
    },
  } as unknown as LocalGgufChat;
  return { chat, seen };
}

const post = (f: typeof fetch, body: unknown, path = '/v1/chat/completions') =>
  f(`http://local-gguf.invalid${path}`, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });

describe('the local transport speaks chat completions', () => {
  it('turns response_format and llama.cpp grammar into constraints and reports the model counts as usage', async () => {
    const { chat, seen } = scripted();
    const f = localFetch(chat);
    const schema = { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'], additionalProperties: false };
    const r = await post(f, {
      model: 'm',
      messages: [
        { role: 'developer', content: 'be brief' },
        { role: 'user', content: [{ type: 'text', text: 'hi' }] },
      ],
      max_tokens: 64,
      temperature: 0.5,
      seed: 3,
      response_format: { type: 'json_schema', json_schema: { name: 'x', schema, strict: true } },
    });
    expect(r.status).toBe(200);
    const body = await r.json();
    expect(body.choices[0]).toMatchObject({ message: { role: 'assistant', content: '{"ok":true}' }, finish_reason: 'stop' });
    expect(body.usage).toEqual({ prompt_tokens: 31, completion_tokens: 7, total_tokens: 38 });
    expect(seen[0]).toMatchObject({
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'hi' },
      ],
      jsonSchema: schema,
      maxTokens: 64,
      temperature: 0.5,
      seed: 3,
    });
    await post(f, { model: 'm', messages: [{ role: 'user', content: 'x' }], max_tokens: 9, grammar: 'root ::= "a"' });
    expect(seen[1]).toMatchObject({ grammar: 'root ::= "a"', maxTokens: 9 });
    expect(seen[1]!.jsonSchema).toBeUndefined();
  });

  it('says length when cut off, refuses tools and other paths with the error shape of the API', async () => {
    const f = localFetch(scripted({ finishReason: 'length' }).chat);
    expect((await (await post(f, { model: 'm', messages: [{ role: 'user', content: 'x' }] })).json()).choices[0].finish_reason).toBe(
      'length',
    );
    const tools = await post(f, {
      model: 'm',
      messages: [{ role: 'user', content: 'x' }],
      tools: [{ type: 'function', function: { name: 't' } }],
    });
    expect(tools.status).toBe(400);
    expect((await tools.json()).error.message).toMatch(/cannot call tools/);
    expect((await post(f, {}, '/v1/embeddings')).status).toBe(404);
  });

  it('answers a prompt too long for the context with the 400 a server gives', async () => {
    const chat = {
      id: 'local:scripted.gguf',
      complete: async () => {
        throw new LocalContextError("the prompt (900 tokens) and max_tokens (200) do not fit in the local model's context of 1024 tokens");
      },
    } as unknown as LocalGgufChat;
    const r = await post(localFetch(chat), { model: 'm', messages: [{ role: 'user', content: 'x' }] });
    expect(r.status).toBe(400);
    expect((await r.json()).error).toMatchObject({ code: 'context_length_exceeded', message: expect.stringMatching(/do not fit/) });
  });
});

describe('a free-text grammar in requests', () => {
  it('is sent in the `grammar` field only to a provider that accepts one, and never beside a response_format', async () => {
    const bodies: Record<string, unknown>[] = [];
    const capture: typeof fetch = async (_input, init) => {
      bodies.push(JSON.parse(String(init?.body)));
      const content = bodies.at(-1)!.response_format ? '{"grade": 1, "faithful": false, "explanation": "x"}' : 'ok';
      return new Response(
        JSON.stringify({
          id: 'c',
          object: 'chat.completion',
          created: 0,
          model: 'm',
          choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
        }),
        {
          headers: { 'content-type': 'application/json' },
        },
      );
    };
    const settings = {
      baseURL: 'http://llm.invalid/v1',
      models: { decomposer: 'm', formalizer: 'm', judge: 'm' },
      timeoutMs: 5000,
      maxReasks: 0,
      structuredOutput: 'json_schema' as const,
      fetch: capture,
    };
    const messages = [{ role: 'user' as const, content: 'x' }];
    await createLlmClient({ ...settings, acceptsGrammar: true }).chat('formalizer', messages, { grammar: 'root ::= "ok"' });
    await createLlmClient(settings).chat('formalizer', messages, { grammar: 'root ::= "ok"' });
    await createLlmClient({ ...settings, acceptsGrammar: true }).chat('judge', messages, {
      grammar: 'root ::= "ok"',
      json: { name: 'j', schema: toStrictJsonSchema(JudgeReply) },
    });
    expect(bodies.map((b) => b.grammar)).toEqual(['root ::= "ok"', undefined, undefined]);
  });
});

if (!haveModel && process.env.CI) {
  it('has the local GGUF model installed (DRIFTLINE_INSTALL_LOCAL_LLM=1 npm run setup)', () => {
    expect(existsSync(MODEL), `no model at ${MODEL}`).toBe(true);
  });
}
if (!haveModel && !process.env.CI)
  console.warn(`[llm-local-gguf] skipping the real-model tests: no model at ${MODEL} (run \`npm run setup:llm\`)`);

/** What a measurement ran under: the machine is shared, so figures need their load. */
const load = () => loadavg()[0]!.toFixed(1);

describe.skipIf(!haveModel)(`the real model, ${MODEL.split('/').pop()}`, () => {
  const chat = new LocalGgufChat({ modelPath: MODEL, contextSize: 2048 });
  beforeAll(async () => {
    // Loaded here, so the timings below are of generation alone.
    const started = Date.now();
    await chat.complete({ messages: [{ role: 'user', content: 'Hi.' }], maxTokens: 1, temperature: 0 });
    console.log(`[llm-local-gguf] model loaded and first token in ${Date.now() - started} ms (load ${load()})`);
  }, 600_000);
  afterAll(() => chat.close());

  it('answers under a JSON-schema grammar with JSON of the schema, and counts tokens', async () => {
    const started = Date.now();
    const reply = await chat.complete({
      messages: [
        { role: 'system', content: 'You grade translations of mathematics into Lean. Answer in JSON.' },
        {
          role: 'user',
          content:
            'Informal: every prime greater than 2 is odd.\nLean: theorem t (p : ℕ) (hp : p.Prime) (h : 2 < p) : Odd p := by sorry\nGrade it.',
        },
      ],
      jsonSchema: toStrictJsonSchema(JudgeReply),
      maxTokens: 120,
      temperature: 0,
      seed: 1,
    });
    const ms = Date.now() - started;
    console.log(
      `[llm-local-gguf] judge-shaped reply: ${reply.usage.promptTokens} prompt + ${reply.usage.completionTokens} completion tokens in ${ms} ms (${((reply.usage.completionTokens / ms) * 1000).toFixed(1)} tokens/s, load ${load()})`,
    );
    expect(reply.finishReason).toBe('stop');
    expect(JudgeReply.parse(JSON.parse(reply.content))).toBeTruthy();
    expect(reply.usage.promptTokens).toBeGreaterThan(30);
    expect(reply.usage.completionTokens).toBeGreaterThan(5);
    expect(reply.usage.completionTokens).toBeLessThanOrEqual(120);
  }, 600_000);

  it('says length at max tokens, and serves requests in a row and at once on its one context', async () => {
    const cut = await chat.complete({
      messages: [{ role: 'user', content: 'Count from one to one hundred in words.' }],
      maxTokens: 4,
      temperature: 0,
    });
    expect(cut.finishReason).toBe('length');
    expect(cut.usage.completionTokens).toBe(4);
    const again = await chat.complete({ messages: [{ role: 'user', content: 'Name a prime.' }], maxTokens: 3, temperature: 0 });
    expect(again.usage.completionTokens).toBe(3);
    const both = await Promise.all(
      [1, 2].map((i) => chat.complete({ messages: [{ role: 'user', content: `Say ${i}.` }], maxTokens: 3, temperature: 0 })),
    );
    expect(both.map((r) => r.usage.completionTokens)).toEqual([3, 3]);
  }, 600_000);

  // node-llama-cpp reads the grammar with its definitions rule, and the model, asked to copy an
  // abbrev and a theorem, writes both within it.
  it('writes a definition and a theorem under the formalizer grammar, which extractLeanStatement reads whole', async () => {
    const code = 'abbrev answer : ℕ := 5\n\ntheorem t : answer = 5';
    const grammar = leanStatementGrammar(300);
    const started = Date.now();
    const reply = await chat.complete({
      messages: [
        { role: 'user', content: `Copy this Lean code exactly, in one lean code block:\n\n\`\`\`lean\n${code} := by sorry\n\`\`\`` },
      ],
      grammar,
      maxTokens: 300,
      temperature: 0,
      seed: 1,
    });
    console.log(
      `[llm-local-gguf] formalizer-grammar reply in ${Date.now() - started} ms (load ${load()}): ${JSON.stringify(reply.content)}`,
    );
    expect(reply.finishReason).toBe('stop');
    expect(gbnfRegExp(grammar).test(reply.content)).toBe(true);
    expect(leanStatementGrammar(300)).toContain('definition{0,1}');
    expect(extractLeanStatement(reply.content)).toMatch(/^abbrev answer : ℕ := 5\s+theorem t : answer = 5 := by sorry$/);
  }, 600_000);

  it('refuses a prompt that does not fit in the context beside max tokens, rather than cutting it', async () => {
    const messages = [
      { role: 'system' as const, content: 'Answer briefly.' },
      { role: 'user' as const, content: 'Is 7 prime?' },
    ];
    await expect(chat.complete({ messages, maxTokens: 2048 })).rejects.toThrow(
      /the prompt \(\d+ tokens\) and max_tokens \(2048\) do not fit in the local model's context of 2048 tokens/,
    );
    // The same prompt with room to answer is served, with the tokens the check counted.
    const ok = await chat.complete({ messages, maxTokens: 2, temperature: 0 });
    expect(ok.usage.promptTokens).toBeGreaterThan(5);
  }, 600_000);
});

describe.skipIf(!haveModel)('one whole run on the local model', () => {
  let env: TestWorkflowEnvironment;
  let s: TestStack;
  const dataDir = mkdtempSync(join(tmpdir(), 'driftline-local-llm-'));

  beforeAll(async () => {
    env = await startTemporal();
    // The configuration a user writes (docs/llm-providers.md), with small replies and a generous timeout:
    // on two busy cores a reply takes tens of seconds.
    const config = loadConfig({
      env: {
        DRIFTLINE_LLM_PROVIDER: 'local',
        DRIFTLINE_LOCAL_LLM_PATH: MODEL,
        DRIFTLINE_LOCAL_LLM_CONTEXT: '4096',
        DRIFTLINE_LLM_TIMEOUT_MS: '600000',
        DRIFTLINE_MAX_TOKENS_DECOMPOSER: '300',
        DRIFTLINE_MAX_TOKENS_FORMALIZER: '150',
        DRIFTLINE_MAX_TOKENS_JUDGE: '200',
        DRIFTLINE_LIBRARIES: `${FIXTURE_LIBRARY}=${FIXTURE_CORPUS}`,
        DRIFTLINE_DATA_DIR: dataDir,
      },
    });
    s = await createStack(env, { ledger: true, llmClient: (ledger) => createConfiguredLlm(config, ledger) });
  }, 120_000);
  afterAll(async () => {
    await s?.close();
    await closeLocalModels();
    await env?.teardown();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('completes with schema-valid replies from the real model, its tokens counted', async () => {
    const started = Date.now();
    const loadBefore = load();
    const r = await s.withWorkers(async () =>
      s.result(await s.start('If p is a prime number then p is at least 2.', { repairRounds: 0 }, { id: 'local-gguf-run' })),
    );
    const ms = Date.now() - started;
    expect(r.outcome, JSON.stringify(r.notes)).not.toBe('failed');
    expect(r.stages).toEqual(expect.arrayContaining(['decompose', 'retrieve', 'illustrate', 'formalize', 'compile', 'judge']));
    expect(r.subqueries.length).toBeGreaterThan(0);
    expect(r.formalStatement).toMatch(/^theorem [\s\S]+ := by sorry$/);
    expect(r.compiled).toBe(true);
    expect(r.judge).not.toBeNull();
    expect(Number.isInteger(r.judge!.grade)).toBe(true);
    // No request went to the fake endpoint: every reply came from the model.
    expect(s.llm.requests).toHaveLength(0);

    // Every reply as the model gave it: structured ones valid under their schemas.
    const calls = await s.results.driver.all<{ stage: string; prompt_tokens: number; completion_tokens: number; body: string }>(
      'SELECT c.stage, c.prompt_tokens, c.completion_tokens, r.body FROM llm_calls c JOIN llm_replies r ON r.reply_key = c.reply_key WHERE c.run_id = ? ORDER BY c.at',
      ['local-gguf-run'],
    );
    const content = (c: { body: string }) => JSON.parse(c.body).choices[0].message.content as string;
    const byStage = (stage: string) => calls.filter((c) => c.stage === stage);
    expect(byStage('decompose').length).toBeGreaterThan(0);
    for (const c of byStage('decompose')) expect(DecomposeReply.safeParse(JSON.parse(content(c))).success, content(c)).toBe(true);
    expect(byStage('judge').length).toBeGreaterThan(0);
    for (const c of byStage('judge')) expect(JudgeReply.safeParse(JSON.parse(content(c))).success, content(c)).toBe(true);
    expect(content(byStage('formalize').at(-1)!)).toMatch(/^```lean\ntheorem /);
    for (const c of calls) {
      expect(c.prompt_tokens, c.stage).toBeGreaterThan(0);
      expect(c.completion_tokens, c.stage).toBeGreaterThan(0);
    }
    const prompt = calls.reduce((a, c) => a + c.prompt_tokens, 0);
    const completion = calls.reduce((a, c) => a + c.completion_tokens, 0);
    expect(r.usage).toMatchObject({ promptTokens: prompt, completionTokens: completion, totalTokens: prompt + completion });
    expect(r.cache).toEqual({ hits: 0, misses: calls.length });
    console.log(
      `[llm-local-gguf] whole run: ${ms} ms, ${calls.length} calls, ${prompt} prompt + ${completion} completion tokens ` +
        `(${((completion / ms) * 1000).toFixed(1)} completion tokens/s over the run), load ${loadBefore} → ${load()}; stages ms ${JSON.stringify(r.timings)}`,
    );
  }, 1_200_000);
});
