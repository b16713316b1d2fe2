import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createLlmClient, type LlmClient } from '../../engines/llm/client';
import { LLM_FAILURE } from '../../common/failures';
import { EngineError } from '../../engines/errors';
import { toStrictJsonSchema } from '../../engines/llm/strict-json-schema';
import { askStructured, jsonText, parseJsonReply } from '../../engines/llm/ask-parsed';
import { FAKE_MODELS, startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';

const Verdict = z.object({ grade: z.number().int().min(0).max(10), note: z.string().min(1) });
const ask = [{ role: 'user' as const, content: 'grade it' }];

let fake: FakeOpenAI;
let llm: LlmClient;
beforeAll(async () => {
  fake = await startFakeOpenAI();
  llm = createLlmClient({ baseURL: fake.url, models: FAKE_MODELS, timeoutMs: 2000, maxReasks: 2 });
});
afterAll(() => fake.close());
afterEach(() => {
  fake.requests.length = 0;
});

describe('askStructured', () => {
  it('sends a strict schema the server accepts and returns the validated object', async () => {
    fake.script(FAKE_MODELS.judge, { content: '{"grade": 7, "note": "close"}' });
    const v = await askStructured(llm, 'judge', ask, Verdict, 'verdict');
    expect(v).toEqual({ grade: 7, note: 'close' });
    const format = fake.requests[0]!.response_format!;
    expect(format.json_schema?.name).toBe('verdict');
    expect(format.json_schema?.strict).toBe(true);
  });

  it('tolerates a ```json fence around the object', async () => {
    fake.script(FAKE_MODELS.judge, { content: 'Sure:\n```json\n{"grade": 10, "note": "same"}\n```' });
    expect(await askStructured(llm, 'judge', ask, Verdict, 'verdict')).toEqual({ grade: 10, note: 'same' });
  });

  it('re-asks after malformed JSON, showing the bad reply and what was wrong', async () => {
    fake.script(FAKE_MODELS.judge, { content: '{"grade": 7, "note": ' }, { content: '{"grade": 8, "note": "ok"}' });
    const v = await askStructured(llm, 'judge', ask, Verdict, 'verdict');
    expect(v.grade).toBe(8);
    expect(fake.callsTo(FAKE_MODELS.judge)).toBe(2);
    const second = fake.requests[1]!.messages;
    expect(second).toHaveLength(3);
    expect(second[1]).toEqual({ role: 'assistant', content: '{"grade": 7, "note": ' });
    expect(second[2]!.role).toBe('user');
    expect(second[2]!.content).toContain('not valid JSON');
  });

  it('re-asks when the JSON does not match the schema, naming the bad field', async () => {
    fake.script(FAKE_MODELS.judge, { content: '{"grade": 14, "note": "x"}' }, { content: '{"grade": 4, "note": "x"}' });
    expect((await askStructured(llm, 'judge', ask, Verdict, 'verdict')).grade).toBe(4);
    expect(fake.requests[1]!.messages[2]!.content).toContain('grade');
  });

  it('fails with a non-retryable LlmBadReply after maxReasks re-asks', async () => {
    fake.script(FAKE_MODELS.judge, { content: 'no idea' }, { content: 'still none' }, { content: '{"grade": "high"}' });
    const err = await askStructured(llm, 'judge', ask, Verdict, 'verdict').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EngineError);
    const f = err as EngineError;
    expect(f.type).toBe(LLM_FAILURE.badReply);
    expect(f.nonRetryable).toBe(true);
    expect(f.message).toContain('3 tries');
    expect(f.message).toContain('grade');
    expect(fake.callsTo(FAKE_MODELS.judge)).toBe(3);
  });

  it('honours a per-call maxReasks of 0', async () => {
    fake.script(FAKE_MODELS.judge, { content: 'nope' });
    await expect(askStructured(llm, 'judge', ask, Verdict, 'verdict', { maxReasks: 0 })).rejects.toMatchObject({
      type: LLM_FAILURE.badReply,
    });
    expect(fake.callsTo(FAKE_MODELS.judge)).toBe(1);
  });

  it('lets transport failures through without re-asking', async () => {
    fake.script(FAKE_MODELS.judge, { status: 503 });
    await expect(askStructured(llm, 'judge', ask, Verdict, 'verdict')).rejects.toMatchObject({
      type: LLM_FAILURE.unavailable,
    });
    expect(fake.callsTo(FAKE_MODELS.judge)).toBe(1);
  });
});

describe('toStrictJsonSchema', () => {
  it('closes every object, requires every property and drops keywords strict mode refuses', () => {
    const schema = toStrictJsonSchema(
      z.object({ items: z.array(z.object({ phrase: z.string().min(1) })).min(1), n: z.number().nullable() }),
    );
    expect(schema.$schema).toBeUndefined();
    expect(schema.additionalProperties).toBe(false);
    expect(schema.required).toEqual(['items', 'n']);
    const items = (schema.properties as Record<string, Record<string, unknown>>).items!;
    expect(items.minItems).toBe(1);
    const item = items.items as Record<string, unknown>;
    expect(item.additionalProperties).toBe(false);
    expect(item.required).toEqual(['phrase']);
    expect(JSON.stringify(schema)).not.toContain('minLength');
  });

  it('closes even objects zod leaves open', () => {
    const schema = toStrictJsonSchema(z.looseObject({ a: z.string() }));
    expect(schema.additionalProperties).toBe(false);
  });

  it('keeps a property literally named like a dropped keyword', () => {
    const schema = toStrictJsonSchema(z.object({ default: z.string() }));
    expect(Object.keys(schema.properties as object)).toEqual(['default']);
  });

  it('refuses optional properties, saying to use nullable', () => {
    expect(() => toStrictJsonSchema(z.object({ a: z.string().optional() }))).toThrow(/nullable/);
  });
});

describe('parsing a JSON reply', () => {
  it('finds the object inside prose or a fence', () => {
    expect(jsonText('Here it is: {"a": 1} hope that helps')).toBe('{"a": 1}');
    expect(jsonText('```\n{"a": 1}\n```')).toBe('{"a": 1}');
  });

  it('says when the reply is empty', () => {
    expect(() => parseJsonReply('  ', Verdict)).toThrow(/empty/);
  });
});
