import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { startFakeOpenAI, toyEmbedding, FAKE_EMBEDDING_DIMENSIONS, type FakeOpenAI } from '../fakes/openai-server';
import { EMBEDDER_FAILURE } from '../../common/failures';
import { EngineError } from '../../engines/errors';
import { BGE_QUERY_INSTRUCTION, OpenAIEmbedder, createOpenAIEmbedder, decodeEmbedding } from '../../engines/retrieval/embedders/openai';

let fake: FakeOpenAI;
beforeAll(async () => {
  fake = await startFakeOpenAI({ apiKey: 'sk-test' });
});
afterAll(async () => {
  await fake.close();
});

function embedder(extra: Partial<ConstructorParameters<typeof OpenAIEmbedder>[0]> = {}) {
  return new OpenAIEmbedder({
    baseURL: fake.url,
    apiKey: 'sk-test',
    model: 'fake-embed',
    dimensions: FAKE_EMBEDDING_DIMENSIONS,
    timeoutMs: 2000,
    ...extra,
  });
}

async function failureOf(p: Promise<unknown>): Promise<EngineError> {
  const err = await p.then(
    () => {
      throw new Error('expected a failure');
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(EngineError);
  return err as EngineError;
}

describe('fake /v1/embeddings speaks the OpenAI wire format', () => {
  it('answers the official client (which asks for base64 by default) with decodable vectors', async () => {
    const client = new OpenAI({ baseURL: fake.url, apiKey: 'sk-test', maxRetries: 0 });
    const res = await client.embeddings.create({ model: 'fake-embed', input: ['prime number', 'group'] });
    expect(fake.embeddingRequests.at(-1)!.encoding_format).toBe('base64');
    expect(res.object).toBe('list');
    expect(res.data.map((d) => d.index)).toEqual([0, 1]);
    expect(Array.from(res.data[0]!.embedding)).toEqual(Array.from(toyEmbedding('prime number')));
    expect(res.usage.total_tokens).toBeGreaterThan(0);
  });

  it('sends plain floats when asked for them, and honours `dimensions`', async () => {
    const client = new OpenAI({ baseURL: fake.url, apiKey: 'sk-test', maxRetries: 0 });
    const res = await client.embeddings.create({ model: 'm', input: 'x y', encoding_format: 'float', dimensions: 8 });
    expect(res.data[0]!.embedding).toHaveLength(8);
    expect(typeof res.data[0]!.embedding[0]).toBe('number');
  });
});

describe('OpenAIEmbedder', () => {
  it('returns one vector per text, in order, across batches', async () => {
    const before = fake.embeddingRequests.length;
    const texts = ['alpha beta', 'gamma', 'delta epsilon', 'zeta', 'eta theta'];
    const vectors = await embedder({ batchSize: 2 }).embed(texts);
    expect(fake.embeddingRequests.length - before).toBe(3);
    expect(fake.embeddingRequests.slice(before).map((r) => r.input.length)).toEqual([2, 2, 1]);
    expect(vectors.map((v) => Array.from(v))).toEqual(texts.map((t) => Array.from(toyEmbedding(t))));
    expect(fake.embeddingRequests.at(-1)!.authorization).toBe('Bearer sk-test');
  });

  it('puts the query instruction before queries only, and its identity says so', async () => {
    const e = embedder({ queryPrefix: BGE_QUERY_INSTRUCTION });
    await e.embed(['prime'], { kind: 'query' });
    expect(fake.embeddingRequests.at(-1)!.input).toEqual([`${BGE_QUERY_INSTRUCTION}prime`]);
    await e.embed(['prime'], { kind: 'document' });
    expect(fake.embeddingRequests.at(-1)!.input).toEqual(['prime']);
    expect(e.id).not.toBe(embedder().id);
    expect(embedder().id).toBe(`openai:fake-embed@${FAKE_EMBEDDING_DIMENSIONS}`);
  });

  it('sends no empty strings (servers reject them)', async () => {
    await embedder().embed(['', 'x']);
    expect(fake.embeddingRequests.at(-1)!.input).toEqual([' ', 'x']);
  });

  it('works with servers that only send floats', async () => {
    const [v] = await embedder({ encodingFormat: 'float' }).embed(['lattice']);
    expect(fake.embeddingRequests.at(-1)!.encoding_format).toBe('float');
    expect(Array.from(v!)).toEqual(Array.from(toyEmbedding('lattice')));
  });

  it('probes the vector size of an unknown model once', async () => {
    const e = await createOpenAIEmbedder({ baseURL: fake.url, apiKey: 'sk-test', model: 'unknown-model' });
    expect(e.dimensions).toBe(FAKE_EMBEDDING_DIMENSIONS);
    const known = await createOpenAIEmbedder({ baseURL: fake.url, model: 'text-embedding-3-small' });
    expect(known.dimensions).toBe(1536);
  });

  it('rejects a reply whose vectors have the wrong size, non-retryably', async () => {
    const f = await failureOf(embedder({ dimensions: 7 }).embed(['x']));
    expect(f.type).toBe(EMBEDDER_FAILURE.badReply);
    expect(f.nonRetryable).toBe(true);
    expect(f.message).toMatch(/32 dimensions, expected 7/);
  });

  it('classifies 429 as retryable with the server-given delay', async () => {
    fake.scriptEmbeddings({ status: 429, retryAfter: 3 });
    const f = await failureOf(embedder().embed(['x']));
    expect(f.type).toBe(EMBEDDER_FAILURE.unavailable);
    expect(f.nonRetryable).toBe(false);
    expect(f.retryAfterMs).toBe(3000);
  });

  it('classifies 5xx and a dropped connection as retryable', async () => {
    fake.scriptEmbeddings({ status: 503 }, { hangUp: true });
    expect((await failureOf(embedder().embed(['x']))).nonRetryable).toBe(false);
    const f = await failureOf(embedder().embed(['x']));
    expect(f.type).toBe(EMBEDDER_FAILURE.unavailable);
    expect(f.message).toMatch(/Could not reach/);
  });

  it('classifies a timeout as retryable', async () => {
    fake.scriptEmbeddings({ embed: true, delayMs: 500 });
    const f = await failureOf(embedder({ timeoutMs: 100 }).embed(['x']));
    expect(f.type).toBe(EMBEDDER_FAILURE.unavailable);
    expect(f.message).toMatch(/timed out after 100 ms/);
  });

  it('classifies bad credentials, unknown models and bad requests as final', async () => {
    const unauthorized = await failureOf(embedder({ apiKey: 'wrong' }).embed(['x']));
    expect(unauthorized.type).toBe(EMBEDDER_FAILURE.unauthorized);
    expect(unauthorized.nonRetryable).toBe(true);
    fake.scriptEmbeddings({ status: 404, message: 'model not found' });
    const notFound = await failureOf(embedder().embed(['x']));
    expect(notFound.type).toBe(EMBEDDER_FAILURE.notFound);
    expect(notFound.message).toMatch(/DRIFTLINE_EMBEDDING_MODEL/);
    fake.scriptEmbeddings({ status: 400 });
    expect((await failureOf(embedder().embed(['x']))).type).toBe(EMBEDDER_FAILURE.rejected);
  });

  it('lets cancellation through as cancellation', async () => {
    fake.scriptEmbeddings({ embed: true, delayMs: 1000 });
    const ac = new AbortController();
    const p = embedder().embed(['x'], { signal: ac.signal });
    setTimeout(() => ac.abort(new Error('cancelled by test')), 50);
    await expect(p).rejects.toThrow('cancelled by test');
  });
});

describe('decodeEmbedding', () => {
  it('reads base64 little-endian float32 and plain arrays, and refuses the rest', () => {
    const v = Float32Array.from([1.5, -2, 0.25]);
    expect(Array.from(decodeEmbedding(Buffer.from(v.buffer).toString('base64'))!)).toEqual([1.5, -2, 0.25]);
    expect(Array.from(decodeEmbedding([1, 2])!)).toEqual([1, 2]);
    expect(decodeEmbedding('abc')).toBeUndefined();
    expect(decodeEmbedding({})).toBeUndefined();
  });
});
