// One contract for every index store: always run against the embedded store, and against Qdrant
// whenever QDRANT_URL is set (the same cases, the same expectations).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isTheorem, loadCorpus, type Declaration } from '../../engines/retrieval/corpus';
import { denseDocumentText } from '../../engines/retrieval/embedder';
import { LexicalIndex } from '../../engines/retrieval/eval/lexical-index';
import { buildInProcess, planBuild, promoteVersion, storeRange } from '../../engines/retrieval/stores/build';
import { EmbeddedStore } from '../../engines/retrieval/stores/embedded';
import { QdrantStore } from '../../engines/retrieval/stores/qdrant';
import { sparseQuery } from '../../engines/retrieval/stores/sparse';
import { pointId, STORE_SCHEMA_VERSION, versionName, type IndexStore, type VersionInfo } from '../../engines/retrieval/stores/store';
import { EmbedderMismatchError, StoreIndex } from '../../engines/retrieval/stores/store-index';
import { HashEmbedder } from '../helpers/hash-embedder';
import { ConceptEmbedder } from '../helpers/concept-embedder';
import { prefetchLimit, reciprocalRankFusion } from '../../engines/retrieval/fusion';

/** Scores agree to the precision of a 32-bit float (Qdrant returns fused scores as float32):
 * a relative error of a few units in the last place of a 24-bit mantissa. */
function expectSameScore(actual: number, expected: number): void {
  expect(Math.abs(actual - expected)).toBeLessThanOrEqual(4 * 2 ** -24 * Math.abs(expected));
}

const MINI = join(resolve(__dirname, '../fixtures/corpus'), 'mini.jsonl');

describe('version names and point ids', () => {
  it('name a version from library, revision, embedder and schema', () => {
    const lexical = versionName('mini', 'abcdef012345', undefined);
    expect(lexical).toBe(`mini-abcdef012345-lexical-${STORE_SCHEMA_VERSION}`);
    const dense = versionName('mini', 'abcdef012345', 'openai:text-embedding-3-small');
    expect(dense).toMatch(/^mini-abcdef012345-openai_text_embedding_3_small_[0-9a-f]{6}-s\d+t\d+$/);
    expect(versionName('mini', 'abcdef012346', undefined)).not.toBe(lexical);
    // ids that differ only in punctuation still get different versions
    expect(versionName('mini', 'abcdef012345', 'a:b')).not.toBe(versionName('mini', 'abcdef012345', 'a/b'));
    expect(() => versionName('../x', 'abcdef012345', undefined)).toThrow(/library name/);
  });

  it('derive point ids from version and name, as UUIDs', () => {
    const a = pointId('v1', 'Nat.Prime');
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(pointId('v1', 'Nat.Prime')).toBe(a);
    expect(pointId('v2', 'Nat.Prime')).not.toBe(a);
    expect(pointId('v1', "Nat.Prime'")).not.toBe(a);
  });
});

interface StoreCase {
  name: string;
  enabled: boolean;
  make(): Promise<{ store: IndexStore; cleanup(): Promise<void> }>;
}

const CASES: StoreCase[] = [
  {
    name: 'embedded (LanceDB)',
    enabled: true,
    async make() {
      const root = await mkdtemp(join(tmpdir(), 'driftline-store-'));
      const store = new EmbeddedStore(root);
      return {
        store,
        cleanup: async () => {
          await store.close();
          await rm(root, { recursive: true, force: true });
        },
      };
    },
  },
  {
    name: 'qdrant',
    enabled: Boolean(process.env.QDRANT_URL),
    async make() {
      const store = new QdrantStore({
        url: process.env.QDRANT_URL!,
        apiKey: process.env.QDRANT_API_KEY,
        prefix: `dltest${process.pid}${Date.now() % 100000}`,
      });
      return {
        store,
        async cleanup() {
          const { aliases } = await store.client.getAliases();
          for (const a of aliases)
            if (a.alias_name.startsWith(store.alias('x').slice(0, -2)))
              await store.client.deleteCollection(a.collection_name).catch(() => undefined);
          for (const v of await store.listVersions()) await store.client.deleteCollection(store.collection(v.version));
        },
      };
    },
  },
];

for (const c of CASES) {
  describe.runIf(c.enabled)(`index store contract: ${c.name}`, () => {
    let store: IndexStore;
    let cleanup: () => Promise<void>;
    let decls: Declaration[];
    let lexical: VersionInfo;
    let hybrid: VersionInfo;
    let concepts: VersionInfo;
    const embedder = new HashEmbedder();
    const conceptEmbedder = new ConceptEmbedder();

    beforeAll(async () => {
      ({ store, cleanup } = await c.make());
      decls = (await loadCorpus(MINI)).declarations;
      lexical = await buildInProcess({ library: 'mini', corpusPath: MINI, store, batchSize: 5 });
      hybrid = await buildInProcess({ library: 'mini', corpusPath: MINI, store, embedder, batchSize: 7 });
      concepts = await buildInProcess({ library: 'mini', corpusPath: MINI, store, embedder: conceptEmbedder, batchSize: 7 });
    });
    afterAll(async () => {
      await cleanup?.();
    });

    it('records versions with their info, and lists them per library', async () => {
      expect(lexical.version).not.toBe(hybrid.version);
      const listed = await store.listVersions('mini');
      expect(listed.map((v) => v.version).sort()).toEqual([lexical.version, hybrid.version, concepts.version].sort());
      expect(await store.listVersions('other')).toEqual([]);
      const info = await store.getVersion(hybrid.version);
      expect(info).toMatchObject({ library: 'mini', embedder: embedder.id, dimensions: 64, expected: 21, schema: STORE_SCHEMA_VERSION });
      expect(info?.completedAt).toBeTruthy();
      expect(await store.getVersion('mini-000000000000-lexical-nope')).toBeUndefined();
    });

    it('counts one point per declaration, and upserting a batch again adds none', async () => {
      expect(await store.count(lexical.version)).toBe(decls.length);
      await storeRange(store, undefined, { version: lexical.version, corpusPath: MINI, from: 0, to: 10, stats: lexical.stats });
      await storeRange(store, undefined, { version: lexical.version, corpusPath: MINI, from: 5, to: 21, stats: lexical.stats });
      expect(await store.count(lexical.version)).toBe(decls.length);
    });

    it('rejects dense vectors of the wrong size', async () => {
      const wrong = {
        search: async () => [],
        id: embedder.id,
        dimensions: 8,
        embed: async (t: string[]) => t.map(() => new Float32Array(8)),
      };
      await expect(
        storeRange(store, wrong, { version: hybrid.version, corpusPath: MINI, from: 0, to: 2, stats: hybrid.stats }),
      ).rejects.toThrow(/dimensions/);
    });

    it('lexical search ranks like the in-memory BM25 index, per role', async () => {
      const index = new StoreIndex(store, lexical);
      expect(index.kind).toBe('lexical');
      const reference = LexicalIndex.build('mini', decls);
      for (const q of ['a prime number p', 'the order of a', 'the integers modulo p', "Euler's totient function", 'a : ZMod p']) {
        expect((await index.searchPremises(q, 1))[0]?.decl.name, q).toBe((await reference.searchPremises(q, 1))[0]?.decl.name);
      }
      const premises = await index.searchPremises('prime order ZMod root', 50);
      expect(premises.length).toBeGreaterThan(3);
      expect(premises.every((h) => !['theorem', 'lemma'].includes(h.decl.kind))).toBe(true);
      const theorems = await index.searchTheorems('prime order ZMod root', 50);
      expect(theorems.length).toBeGreaterThan(3);
      expect(theorems.every((h) => ['theorem', 'lemma'].includes(h.decl.kind))).toBe(true);
      expect((await index.searchTheorems('the totient of a prime', 1))[0]?.decl.name).toBe('Nat.totient_prime');
      const scores = premises.map((h) => h.score);
      expect(scores).toEqual([...scores].sort((a, b) => b - a));
    });

    it('excludes names, and restricts to names', async () => {
      const index = new StoreIndex(store, lexical);
      const hits = await index.searchPremises('a prime number p', 3, { exclude: ['Nat.Prime'] });
      expect(hits.length).toBeGreaterThan(0);
      expect(hits.map((h) => h.decl.name)).not.toContain('Nat.Prime');
      const only = await store.search(lexical.version, {
        role: 'premise',
        k: 10,
        sparse: sparseQuery('prime ZMod'),
        only: ['ZMod', 'Monoid'],
      });
      expect(only.map((h) => h.decl.name)).toEqual(['ZMod']);
      const scored = await index.scoreTheorems('the totient of a prime', ['Nat.totient_prime', 'ZMod.card', 'NoSuch']);
      expect(scored.get('Nat.totient_prime')).toBeGreaterThan(scored.get('ZMod.card') ?? 0);
      expect(scored.get('NoSuch')).toBe(0);
    });

    it('gets declarations by name and finds the theorems using premises, in corpus order', async () => {
      const index = new StoreIndex(store, lexical);
      expect(await index.get('Nat.Prime')).toMatchObject({ name: 'Nat.Prime', kind: 'def', module: 'Mathlib.Data.Nat.Prime.Defs' });
      expect(await index.get('NoSuchThing')).toBeUndefined();
      const reference = LexicalIndex.build('mini', decls);
      for (const names of [['Nat.totient'], ['ZMod'], ['orderOf', 'ZMod'], ['Unknown']]) {
        expect((await index.theoremsUsing(names)).map((d) => d.name)).toEqual((await reference.theoremsUsing(names)).map((d) => d.name));
      }
      expect((await index.theoremsUsing(['orderOf'], { exclude: ['IsPrimitiveRoot.orderOf'] })).map((d) => d.name)).not.toContain(
        'IsPrimitiveRoot.orderOf',
      );
    });

    it("lists every theorem's uses in corpus order (the usage prior's table)", async () => {
      const expected = decls
        .filter((d) => isTheorem(d))
        .map((d) => ({ name: d.name, uses: d.uses, ...(d.module ? { module: d.module } : {}) }));
      expect(expected.length).toBeGreaterThan(2);
      expect(expected.some((t) => t.module)).toBe(true);
      expect(await store.theoremUses(lexical.version)).toEqual(expected);
      expect(await store.theoremUses(hybrid.version)).toEqual(expected);
    });

    it("lists the theorems of a declaration's source file, as the in-memory index does (the file leave-out)", async () => {
      const index = new StoreIndex(store, lexical);
      const reference = LexicalIndex.build('mini', decls);
      const sameFile = ['ZMod.pow_card_sub_one_eq_one', 'ZMod.orderOf_dvd_card_sub_one'];
      expect(await index.sameFileTheorems(['ZMod.pow_card_sub_one_eq_one'])).toEqual(sameFile);
      for (const names of [['ZMod.pow_card_sub_one_eq_one'], ['Nat.Prime'], ['Nat.Prime.two_le'], ['Unknown'], []]) {
        expect(await index.sameFileTheorems(names), names.join()).toEqual(await reference.sameFileTheorems(names));
      }
    });

    it('hybrid search fuses dense and sparse rankings (RRF), and filters by role', async () => {
      const index = new StoreIndex(store, hybrid, embedder);
      expect(index.kind).toMatch(/^hybrid/);
      const hits = await index.searchPremises('a prime number p', 5);
      expect(hits[0]?.decl.name).toBe('Nat.Prime');
      expect(hits.every((h) => !['theorem', 'lemma'].includes(h.decl.kind))).toBe(true);
      // RRF scores: at most 2 / (60 + 1), descending
      expect(hits[0]!.score).toBeLessThanOrEqual((2 / 61) * (1 + 2 ** -22)); // to float32 precision
      // a dense-only query for a declaration's own text finds it first
      const target = decls.find((d) => d.name === 'IsPrimitiveRoot')!;
      const [dense] = await embedder.embed([denseDocumentText(target)]);
      const denseHits = await store.search(hybrid.version, { role: 'premise', k: 1, dense });
      expect(denseHits[0]?.decl.name).toBe('IsPrimitiveRoot');
      const ex = await index.searchPremises('a prime number p', 5, { exclude: ['Nat.Prime'] });
      expect(ex.map((h) => h.decl.name)).not.toContain('Nat.Prime');
    });

    it('fuses by rank a dense side that ranks differently: what only the dense side finds comes back', async () => {
      // "cardinality" is no token of the corpus; the concept embedder knows it as a synonym of
      // card and "number of elements". "monoid" is found by both sides.
      const query = 'cardinality of a monoid';
      const k = 5;
      const [dense] = await conceptEmbedder.embed([query], { kind: 'query' });
      const sparse = sparseQuery(query);
      const sparseOnly = await store.search(concepts.version, { role: 'premise', k: prefetchLimit(k), sparse });
      const denseOnly = await store.search(concepts.version, { role: 'premise', k: prefetchLimit(k), dense });
      expect(sparseOnly.map((h) => h.decl.name)).not.toContain('Finset.card');
      expect(denseOnly[0]?.decl.name).toBe('Finset.card');

      const fused = await store.search(concepts.version, { role: 'premise', k, sparse, dense });
      const expected = reciprocalRankFusion([{ ids: denseOnly.map((h) => h.decl.name) }, { ids: sparseOnly.map((h) => h.decl.name) }], {
        limit: k,
      });
      expect(fused.map((h) => h.decl.name)).toEqual(expected.map((e) => e.id));
      fused.forEach((h, i) => expectSameScore(h.score, expected[i]!.score));
      expect(fused.map((h) => h.decl.name)).toContain('Finset.card');
      // The same through the index the service searches with.
      const hits = await new StoreIndex(store, concepts, conceptEmbedder).searchPremises(query, k);
      expect(hits.map((h) => h.decl.name)).toEqual(expected.map((e) => e.id));
    });

    it('never mixes embedders: a dense version needs its own embedder for queries', () => {
      expect(() => new StoreIndex(store, hybrid)).toThrow(EmbedderMismatchError);
      expect(() => new StoreIndex(store, hybrid, new HashEmbedder(64, 'test:other'))).toThrow(/holds vectors of embedder/);
    });

    it('moves the alias between versions, refusing other libraries and incomplete versions', async () => {
      await promoteVersion(store, 'mini', lexical.version);
      expect(await store.getAlias('mini')).toBe(lexical.version);
      await store.setAlias('mini', hybrid.version);
      expect(await store.getAlias('mini')).toBe(hybrid.version);
      expect(await store.getAlias('nothing-here')).toBeUndefined();
      await expect(store.setAlias('other', lexical.version)).rejects.toThrow(/belongs to library mini/);
      const partial = { ...(await planBuild({ library: 'mini', corpusPath: MINI, embedder: new HashEmbedder(16) })) };
      await store.createVersion(partial);
      await expect(promoteVersion(store, 'mini', partial.version)).rejects.toThrow(/not complete/);
      expect(await store.getAlias('mini')).toBe(hybrid.version);
    });

    it('deletes versions, but never the current one', async () => {
      await store.setAlias('mini', lexical.version);
      await expect(store.deleteVersion(lexical.version)).rejects.toThrow(/current/);
      const partial = (await store.listVersions('mini')).find((v) => v.dimensions === 16)!;
      await store.deleteVersion(partial.version);
      expect((await store.listVersions('mini')).map((v) => v.version)).not.toContain(partial.version);
      expect(await store.count(lexical.version)).toBe(decls.length);
    });
  });
}
