import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { reciprocalRankFusion } from '../../engines/retrieval/fusion';
import { HybridIndex, cosineTopK } from '../../engines/retrieval/eval/hybrid-index';
import { LexicalIndex } from '../../engines/retrieval/eval/lexical-index';
import { retrievePremises, searchNote } from '../../engines/retrieval/retrieve-premises';
import type { Declaration } from '../../engines/retrieval/corpus';
import type { EmbedKind, Embedder } from '../../engines/retrieval/embedder';
import { CachingEmbedder, cacheFileFor } from '../../engines/retrieval/embedders/cache';

describe('reciprocalRankFusion', () => {
  it('sums 1/(k + rank) over the lists, rank counted from 1', () => {
    const fused = reciprocalRankFusion([{ ids: ['a', 'b', 'c'] }, { ids: ['b', 'd'] }]);
    expect(fused.map((f) => f.id)).toEqual(['b', 'a', 'd', 'c']);
    expect(fused[0]!.score).toBeCloseTo(1 / 62 + 1 / 61, 12);
    expect(fused[1]!.score).toBeCloseTo(1 / 61, 12);
  });

  it('lets a large k reward agreement and a small k reward top ranks', () => {
    const lists = [{ ids: ['a', 'x', 'c'] }, { ids: ['b', 'y', 'c'] }];
    // k = 60: c has 2/63 > 1/61 of a; k = 0: a has 1 > 2/3 of c.
    expect(reciprocalRankFusion(lists, { k: 60 })[0]!.id).toBe('c');
    expect(reciprocalRankFusion(lists, { k: 0 })[0]!.id).toBe('a');
  });

  it('weights lists, ignores repeats within a list, and cuts to the limit', () => {
    const fused = reciprocalRankFusion(
      [
        { ids: ['a', 'a', 'b'], weight: 0.5 },
        { ids: ['c'], weight: 2 },
      ],
      { limit: 2 },
    );
    expect(fused.map((f) => f.id)).toEqual(['c', 'a']);
    expect(fused[1]!.score).toBeCloseTo(0.5 / 61, 12);
  });

  it('breaks ties by best rank, then by list order, deterministically', () => {
    expect(reciprocalRankFusion([{ ids: ['a', 'b'] }, { ids: ['b', 'a'] }]).map((f) => f.id)).toEqual(['a', 'b']);
    expect(reciprocalRankFusion([{ ids: ['x'] }, { ids: ['y'] }]).map((f) => f.id)).toEqual(['x', 'y']);
  });

  it('handles no lists and empty lists, and refuses a negative k', () => {
    expect(reciprocalRankFusion([])).toEqual([]);
    expect(reciprocalRankFusion([{ ids: [] }])).toEqual([]);
    expect(() => reciprocalRankFusion([{ ids: ['a'] }], { k: -1 })).toThrow(/k must be/);
  });
});

// An embedder whose vectors are chosen by hand: a text maps to the axis of the first concept it
// mentions, so "dense" search can find what the words do not say.
const CONCEPTS = ['prime', 'group', 'continuous', 'order'];
class ConceptEmbedder implements Embedder {
  readonly id = 'test:concepts';
  readonly dimensions = CONCEPTS.length + 1;
  calls: { texts: string[]; kind?: EmbedKind }[] = [];
  async embed(texts: string[], opts?: { kind?: EmbedKind }): Promise<Float32Array[]> {
    this.calls.push({ texts, ...(opts?.kind ? { kind: opts.kind } : {}) });
    return texts.map((t) => {
      const v = new Float32Array(this.dimensions);
      const lower = t.toLowerCase();
      const synonyms: Record<string, string> = { irreducible: 'prime', cyclic: 'group', multiplicative: 'order' };
      let axis = CONCEPTS.findIndex((c) => lower.includes(c));
      for (const [word, c] of Object.entries(synonyms)) if (axis < 0 && lower.includes(word)) axis = CONCEPTS.indexOf(c);
      v[axis < 0 ? CONCEPTS.length : axis] = 1;
      return v;
    });
  }
}

const decl = (name: string, kind: string, signature: string, informal?: string, uses: string[] = []): Declaration => ({
  name,
  kind,
  signature,
  uses,
  ...(informal ? { informal } : {}),
});

const LIBRARY: Declaration[] = [
  decl('Nat.Prime', 'def', 'def Nat.Prime (p : ℕ) : Prop', 'A natural number is prime if it has exactly two divisors'),
  decl('Group', 'class', 'class Group (G : Type u)', 'A group'),
  decl('Continuous', 'structure', 'structure Continuous (f : α → β) : Prop', 'A continuous map'),
  decl('orderOf', 'def', 'def orderOf (x : G) : ℕ', 'The order of an element'),
  decl('ZMod', 'def', 'def ZMod : ℕ → Type', 'Integers modulo n'),
  decl('Nat.Prime.two_le', 'theorem', 'theorem Nat.Prime.two_le {p : ℕ} (hp : p.Prime) : 2 ≤ p', undefined, ['Nat.Prime']),
];

describe('HybridIndex', () => {
  it('dense mode finds by meaning what BM25 cannot find by words', async () => {
    const lexical = LexicalIndex.build('lib', LIBRARY);
    const embedder = new ConceptEmbedder();
    const dense = await HybridIndex.build(lexical, LIBRARY, embedder, { mode: 'dense' });
    expect(await lexical.searchPremises('irreducible', 3)).toEqual([]);
    const hits = await dense.searchPremises('irreducible', 1);
    expect(hits.map((h) => h.decl.name)).toEqual(['Nat.Prime']);
    expect(hits[0]!.score).toBeCloseTo(1, 6);
    // Documents are embedded as documents, only premises (no theorem vectors were asked for).
    expect(embedder.calls[0]!.kind).toBe('document');
    expect(embedder.calls.flatMap((c) => c.texts).some((t) => t.startsWith('Nat.Prime.two_le'))).toBe(false);
    expect(embedder.calls.at(-1)!.kind).toBe('query');
  });

  it('hybrid mode fuses both lists by RRF and honours exclusions', async () => {
    const lexical = LexicalIndex.build('lib', LIBRARY);
    const hybrid = await HybridIndex.build(lexical, LIBRARY, new ConceptEmbedder());
    // BM25 finds ZMod by its words; the dense side finds orderOf through "multiplicative".
    const names = (await hybrid.searchPremises('multiplicative integers modulo', 2)).map((h) => h.decl.name);
    expect(names.sort()).toEqual(['ZMod', 'orderOf']);
    const excluded = await hybrid.searchPremises('multiplicative integers modulo', 5, { exclude: ['orderOf', 'ZMod'] });
    expect(excluded.map((h) => h.decl.name)).not.toContain('orderOf');
    expect(excluded.map((h) => h.decl.name)).not.toContain('ZMod');
    expect(hybrid.kind).toMatch(/^hybrid \(dense test:concepts \+ BM25, RRF k=60\)/);
  });

  it('keeps theorem search lexical unless theorem vectors were built', async () => {
    const lexical = LexicalIndex.build('lib', LIBRARY);
    const hybrid = await HybridIndex.build(lexical, LIBRARY, new ConceptEmbedder());
    expect(await hybrid.searchTheorems('irreducible', 1)).toEqual([]);
    const withTheorems = await HybridIndex.build(lexical, LIBRARY, new ConceptEmbedder(), { theorems: true });
    expect((await withTheorems.searchTheorems('irreducible', 1)).map((h) => h.decl.name)).toEqual(['Nat.Prime.two_le']);
    expect((await hybrid.theoremsUsing(['Nat.Prime'])).map((d) => d.name)).toEqual(['Nat.Prime.two_le']);
  });

  it('says in the run notes what kind of retrieval ran', async () => {
    const lexical = LexicalIndex.build('lib', LIBRARY);
    const hybrid = await HybridIndex.build(lexical, LIBRARY, new ConceptEmbedder());
    const input = { library: 'lib', statement: 'a prime', subqueries: [], mode: 'monolithic' as const, topK: 2, exclude: [], gold: [] };
    expect((await retrievePremises(lexical, input)).notes[0]).toMatch(/lexical \(BM25\) only, no embedder configured/);
    expect((await retrievePremises(hybrid, input)).notes[0]).toBe(searchNote(hybrid));
    expect(searchNote(hybrid)).toMatch(/hybrid/);
  });

  it('cosineTopK ranks by cosine, whatever the vector lengths', () => {
    const decls = LIBRARY.slice(0, 3);
    const matrix = Float32Array.from([1, 0, 0.6, 0.8, 0, 1]);
    const hits = cosineTopK({ decls, matrix }, 2, Float32Array.from([0, 5]), 2);
    expect(hits.map((h) => h.decl.name)).toEqual(['Continuous', 'Group']);
    expect(hits[0]!.score).toBeCloseTo(1, 6);
  });
});

describe('CachingEmbedder', () => {
  it('embeds each (kind, text) once, persists across instances and survives a torn line', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'driftline-cache-'));
    try {
      const inner = new ConceptEmbedder();
      const file = cacheFileFor(dir, inner.id);
      const a = new CachingEmbedder(inner, file);
      await a.embed(['prime', 'group', 'prime']);
      expect(inner.calls.flatMap((c) => c.texts)).toEqual(['prime', 'group']);
      await a.embed(['prime'], { kind: 'query' });
      expect(inner.calls.length).toBe(2);
      writeFileSync(file, readFileSync(file, 'utf8') + '{"k":"torn', { flag: 'w' });
      const inner2 = new ConceptEmbedder();
      const b = new CachingEmbedder(inner2, file);
      const [v] = await b.embed(['group']);
      expect(inner2.calls).toEqual([]);
      expect(Array.from(v!)).toEqual([0, 1, 0, 0, 0]);
      expect(b.size).toBe(3);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
