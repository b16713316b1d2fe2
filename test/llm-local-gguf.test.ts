// The local chat model: pure schema handling always; the real Gemma 3 270M GGUF (installed by
// `npm run setup:llm`, which CI runs) through node-llama-cpp when the file is there. In CI a
// missing model is a failure, not a skip.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LocalGgufChat, toGbnfSchema } from '../engines/llm/local-gguf';
import { toStrictJsonSchema } from '../engines/llm/strict-schema';
import { JudgeReply } from '../engines/llm/judge-prompt';

const MODEL = resolve(process.env.DRIFTLINE_LOCAL_LLM_PATH ?? '.tools/models/gemma-3-270m-q4_k_m.gguf');
const haveModel = existsSync(MODEL);

describe('toGbnfSchema', () => {
  it('drops what a grammar cannot enforce and bounds arrays and strings', () => {
    const g = toGbnfSchema({
      type: 'object',
      $schema: 'x',
      properties: { n: { type: 'integer', minimum: 0, maximum: 10 }, xs: { type: 'array', items: { type: 'string' } } },
      required: ['n', 'xs'],
      additionalProperties: false,
    }) as Record<string, any>;
    expect(g.$schema).toBeUndefined();
    expect(g.properties.n).toEqual({ type: 'integer' });
    expect(g.properties.xs.maxItems).toBe(12);
    expect(g.properties.xs.items.maxLength).toBe(400);
    expect(g.required).toEqual(['n', 'xs']);
  });
});

if (!haveModel && process.env.CI) {
  it('has the local GGUF model installed (DRIFTLINE_INSTALL_LOCAL_LLM=1 npm run setup)', () => {
    expect(existsSync(MODEL), `no model at ${MODEL}`).toBe(true);
  });
}
if (!haveModel && !process.env.CI) console.warn(`[llm-local-gguf] skipping the real-model tests: no model at ${MODEL} (run \`npm run setup:llm\`)`);

describe.skipIf(!haveModel)(`LocalGgufChat on ${MODEL}`, () => {
  const chat = new LocalGgufChat({ modelPath: MODEL, contextSize: 2048 });
  afterAll(() => chat.close());

  it('answers a structured request with JSON of the schema, and counts tokens', async () => {
    const reply = await chat.complete({
      messages: [
        { role: 'system', content: 'You grade translations of mathematics into Lean. Answer in JSON.' },
        { role: 'user', content: 'Informal: every prime greater than 2 is odd.\nLean: theorem t (p : ℕ) (hp : p.Prime) (h : 2 < p) : Odd p := by sorry\nGrade it.' },
      ],
      jsonSchema: toStrictJsonSchema(JudgeReply),
      maxTokens: 220,
      temperature: 0,
      seed: 1,
    });
    expect(reply.finishReason).toBe('stop');
    const parsed = JSON.parse(reply.content);
    expect(Object.keys(parsed).sort()).toEqual(['explanation', 'faithful', 'grade']);
    expect(Number.isInteger(parsed.grade)).toBe(true);
    expect(typeof parsed.faithful).toBe('boolean');
    expect(reply.usage.promptTokens).toBeGreaterThan(20);
    expect(reply.usage.completionTokens).toBeGreaterThan(3);
  }, 240_000);

  it('says `length` when the reply is cut off at max tokens', async () => {
    const reply = await chat.complete({ messages: [{ role: 'user', content: 'Count from one to one hundred in words.' }], maxTokens: 4, temperature: 0 });
    expect(reply.finishReason).toBe('length');
    expect(reply.usage.completionTokens).toBe(4);
  }, 120_000);
});
