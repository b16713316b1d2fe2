import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../infra/config';
import { evalRetrieval, type EvalRetrievalOptions } from '../../bin/eval-command';
import { startFakeOpenAI, FAKE_MODELS, type FakeOpenAI } from '../fakes/openai-server';

const CORPUS = resolve('test/fixtures/corpus/mini.jsonl');
const ITEMS = [
  // Found at rank 1 by its words.
  { full_name: 'Demo.a', informal_stmt: 'Every prime number p is at least two.', mathlib_dependencies: ['Nat.Prime'] },
  // The gold premise is the item itself: it must be excluded, so nothing can be found.
  { full_name: 'ZMod', informal_stmt: 'The integers modulo n.', mathlib_dependencies: ['ZMod'] },
  {
    full_name: 'Demo.c',
    informal_stmt: 'If a is a primitive root modulo a prime p then its order is p - 1.',
    mathlib_dependencies: ['IsPrimitiveRoot', 'Nat.Prime', 'orderOf', 'ZMod'],
  },
];

let dir: string;
let benchmark: string;
let fake: FakeOpenAI;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'driftline-eval-'));
  benchmark = join(dir, 'bench.jsonl');
  writeFileSync(benchmark, ITEMS.map((i) => JSON.stringify(i)).join('\n') + '\n');
  fake = await startFakeOpenAI();
});
afterAll(async () => {
  await fake.close();
  rmSync(dir, { recursive: true, force: true });
});

function cfg(extra: Record<string, string> = {}, dataDir = join(dir, 'data')) {
  return loadConfig({ env: { DRIFTLINE_LIBRARIES: `mini=${CORPUS}`, DRIFTLINE_DATA_DIR: dataDir, ...extra } });
}

const opts = (o: Partial<EvalRetrievalOptions> = {}): EvalRetrievalOptions => ({
  benchmark,
  library: 'mini',
  k: '1,3',
  mode: 'monolithic',
  retriever: 'auto',
  json: true,
  ...o,
});

interface Row {
  k: number;
  precision: number;
  recall: number;
  f1: number;
  microF1: number;
}
const parse = (s: string) => JSON.parse(s) as { results: Row[] };

describe('driftline eval retrieval', () => {
  it('prints exactly {results: [{k, precision, recall, f1, microF1}]} in percent, excluding each item itself', async () => {
    // Plain BM25, so the figures follow from the words alone.
    const out = parse(await evalRetrieval(cfg(), opts({ limit: 2, usagePrior: false, analogy: false })));
    expect(Object.keys(out)).toEqual(['results']);
    expect(out.results.map((r) => Object.keys(r))).toEqual([
      ['k', 'precision', 'recall', 'f1', 'microF1'],
      ['k', 'precision', 'recall', 'f1', 'microF1'],
    ]);
    const [at1] = out.results;
    // Item 1 is a hit at rank 1 (F1 100); item 2 can only be found by retrieving itself (F1 0).
    expect(at1).toMatchObject({ k: 1, precision: 50, recall: 50, f1: 50 });
    // Item 2 retrieves nothing once it is excluded: 1 hit of 1 retrieved, of 2 gold.
    expect(at1!.microF1).toBeCloseTo((100 * 2 * 1 * 0.5) / 1.5, 10);
  });

  it('prints a Markdown table that says the retrieval was lexical', async () => {
    const text = await evalRetrieval(cfg(), opts({ json: false }));
    expect(text).toMatch(/\| k \| precision \| recall \| F1 \| micro F1 \|/);
    expect(text).toMatch(/^\| 3 \| /m);
    // The note names every re-ranking wrapper the service applied.
    expect(text).toMatch(/lexical \(BM25\) only, no embedder configured; definitions γ=1 \+ analogy \(5 similar theorems vote/);
    const plain = await evalRetrieval(cfg(), opts({ json: false, analogy: false, usagePrior: false, definitions: false }));
    expect(plain).toMatch(/no embedder configured\n?$/m);
    expect(plain).not.toMatch(/analogy|usage prior|definitions/);
    // The query-only configuration: BM25F and the definitions' votes.
    const queryOnly = await evalRetrieval(cfg(), opts({ json: false, analogy: false }));
    expect(queryOnly).toMatch(/no embedder configured; definitions γ=1\n?$/m);
  });

  it("evaluates the service's store: builds the library's index version there once, and names it", async () => {
    const data = join(dir, 'store-data');
    const first = await evalRetrieval(cfg({}, data), opts({ json: false }));
    expect(first).toMatch(/note: built index version mini-[0-9a-f]{12}-lexical-s\d+t\d+ and made it current/);
    const again = await evalRetrieval(cfg({}, data), opts({ json: false }));
    expect(again).not.toMatch(/built index version/);
    // The registry the service uses sees the same version.
    expect(readdirSync(join(data, 'indexes', 'embedded', 'aliases'))).toEqual(['mini.json']);
    // Same figures as the in-memory reference on this library (idf per role in both).
    for (const o of [{}, { analogy: false }, { analogy: false, usagePrior: false }]) {
      const viaStore = parse(await evalRetrieval(cfg({}, data), opts(o)));
      const inMemory = parse(await evalRetrieval(cfg({}, data), opts({ ...o, inMemory: true })));
      expect(viaStore, JSON.stringify(o)).toEqual(inMemory);
    }
    await expect(evalRetrieval(cfg({}, data), opts({ lexicalWeight: 2 }))).rejects.toThrow(/--in-memory/);
  });

  it('refuses dense retrieval without an embedder, saying how to configure one', async () => {
    await expect(evalRetrieval(cfg(), opts({ retriever: 'dense' }))).rejects.toThrow(/DRIFTLINE_EMBEDDER=local/);
  });

  it('runs dense and hybrid retrieval through an OpenAI-compatible embedder, embedding each text once', async () => {
    const env = {
      DRIFTLINE_EMBEDDER: 'openai',
      DRIFTLINE_EMBEDDING_MODEL: 'fake-embed',
      DRIFTLINE_EMBEDDING_DIMENSIONS: '32',
      OPENAI_BASE_URL: fake.url,
    };
    const data = join(dir, 'dense-data');
    const dense = parse(await evalRetrieval(cfg(env, data), opts({ retriever: 'dense' })));
    expect(dense.results).toHaveLength(2);
    const asked = fake.embeddingRequests.length;
    expect(asked).toBeGreaterThan(0);
    const hybrid = await evalRetrieval(cfg(env, data), opts({ json: false }));
    expect(hybrid).toMatch(/monolithic, hybrid \(dense openai:fake-embed@32 \+ BM25, RRF k=60\)/);
    // Premises and statements were all cached by the first run.
    expect(fake.embeddingRequests.length).toBe(asked);
  });

  it('drift mode decomposes with the configured LLM once, then reads the cache', async () => {
    const data = join(dir, 'drift-data');
    const env = { OPENAI_BASE_URL: fake.url, DRIFTLINE_MODEL_DECOMPOSER: FAKE_MODELS.decomposer };
    const first = parse(await evalRetrieval(cfg(env, data), opts({ mode: 'drift', k: '1' })));
    expect(fake.callsTo(FAKE_MODELS.decomposer)).toBe(ITEMS.length);
    // Item 3's sub-queries (prime; primitive root; order) find Nat.Prime, IsPrimitiveRoot, orderOf.
    expect(first.results[0]!.recall).toBeGreaterThan(0);
    const again = parse(await evalRetrieval(cfg(env, data), opts({ mode: 'drift', k: '1' })));
    expect(fake.callsTo(FAKE_MODELS.decomposer)).toBe(ITEMS.length);
    expect(again).toEqual(first);
    // Without an LLM, the cache alone is enough when it covers every item.
    const offline = { DRIFTLINE_MODEL_DECOMPOSER: FAKE_MODELS.decomposer };
    expect(parse(await evalRetrieval(cfg(offline, data), opts({ mode: 'drift', k: '1' })))).toEqual(first);
  });

  it('drift mode without an LLM and without cached decompositions fails with a clear message', async () => {
    await expect(evalRetrieval(cfg({}, join(dir, 'empty-data')), opts({ mode: 'drift' }))).rejects.toThrow(
      /--mode drift needs .*OPENAI_BASE_URL/,
    );
  });

  it('works from the command line, printing only the JSON on stdout', () => {
    const run = spawnSync(
      process.execPath,
      ['bin/driftline.js', 'eval', 'retrieval', '--benchmark', benchmark, '--library', 'mini', '--k', '1,3', '--json'],
      {
        encoding: 'utf8',
        env: {
          ...process.env,
          DRIFTLINE_LIBRARIES: `mini=${CORPUS}`,
          DRIFTLINE_DATA_DIR: join(dir, 'cli-data'),
          DRIFTLINE_EMBEDDER: 'none',
          OPENAI_BASE_URL: '',
        },
        timeout: 60_000,
      },
    );
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(parse(run.stdout).results.map((r) => r.k)).toEqual([1, 3]);
    const bad = spawnSync(
      process.execPath,
      ['bin/driftline.js', 'eval', 'retrieval', '--benchmark', join(dir, 'missing.jsonl'), '--library', 'mini'],
      {
        encoding: 'utf8',
        env: { ...process.env, DRIFTLINE_LIBRARIES: `mini=${CORPUS}`, DRIFTLINE_DATA_DIR: join(dir, 'cli-data') },
        timeout: 60_000,
      },
    );
    expect(bad.status).toBe(1);
    expect(bad.stderr).toMatch(/cannot read benchmark .*missing\.jsonl/);
  });
});
