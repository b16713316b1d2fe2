import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { Bm25Index, type Bm25Params } from '../../engines/retrieval/bm25';
import { loadCorpus } from '../../engines/retrieval/corpus';
import { LexicalIndex } from '../../engines/retrieval/eval/lexical-index';

const PARAMS: Bm25Params = {
  k1: 1.2,
  fields: { name: { weight: 3, b: 0.5 }, text: { weight: 1, b: 0.75 } },
};

describe('Bm25Index', () => {
  const docs = [
    { name: ['prime'], text: ['number', 'divisor'] },
    { name: ['group'], text: ['prime', 'order'] },
    { name: ['ring'], text: ['number', 'number', 'number'] },
    { name: ['field'], text: ['order'] },
  ];
  const index = Bm25Index.build(docs, PARAMS);

  it('ranks a match in a heavier field above the same match in a lighter one', () => {
    expect(index.search(['prime'], 10).map((h) => h.doc)).toEqual([0, 1]);
  });

  it('ranks a rare term above a common one', () => {
    // "divisor" occurs once in the corpus, "number" in two documents.
    const [best] = index.search(['divisor', 'number'], 1);
    expect(best?.doc).toBe(0);
  });

  it('returns only documents with a positive score, at most k, and honours skip', () => {
    expect(index.search(['nothing'], 5)).toEqual([]);
    expect(index.search(['order'], 1)).toHaveLength(1);
    expect(index.search(['prime'], 10, (d) => d === 0).map((h) => h.doc)).toEqual([1]);
    expect(index.search(['prime'], 0)).toEqual([]);
  });

  it('saturates term frequency (three repeats score less than three times one)', () => {
    const s = index.scores(['number']);
    expect(s[2]!).toBeGreaterThan(0);
    expect(s[2]!).toBeLessThan(3 * s[0]!);
  });

  it('round-trips through JSON with identical scores', () => {
    const copy = Bm25Index.fromJSON(JSON.parse(JSON.stringify(index.toJSON())));
    const q = ['prime', 'order', 'number'];
    expect([...copy.scores(q)]).toEqual([...index.scores(q)]);
    expect(copy.docFreq('number')).toBe(2);
  });
});

describe('LexicalIndex on the fixture corpus', () => {
  let index: LexicalIndex;
  beforeAll(async () => {
    const corpus = await loadCorpus(join(resolve(__dirname, '../fixtures/corpus'), 'mini.jsonl'));
    index = LexicalIndex.build('mini', corpus.declarations);
  });
  const top = async (q: string) => (await index.searchPremises(q, 1))[0]?.decl.name;

  it.each([
    ['a prime number p', 'Nat.Prime'],
    ['Nat.Prime p', 'Nat.Prime'],
    ['a is a primitive root of unity', 'IsPrimitiveRoot'],
    ['the integers modulo p', 'ZMod'],
    ['a : ZMod p', 'ZMod'],
    ['the order of a', 'orderOf'],
    ['the number of elements of a finite set', 'Finset.card'],
    ["Euler's totient function", 'Nat.totient'],
  ])('premise search: %s → %s', async (query, expected) => {
    expect(await top(query)).toBe(expected);
  });

  it('premise search never returns theorems; theorem search only theorems', async () => {
    const premises = await index.searchPremises('prime order ZMod root', 50);
    expect(premises.length).toBeGreaterThan(3);
    expect(premises.every((h) => !['theorem', 'lemma'].includes(h.decl.kind))).toBe(true);
    const theorems = await index.searchTheorems('prime order ZMod root', 50);
    expect(theorems.length).toBeGreaterThan(3);
    expect(theorems.every((h) => ['theorem', 'lemma'].includes(h.decl.kind))).toBe(true);
  });

  it('theorem search finds the statement it paraphrases', async () => {
    expect((await index.searchTheorems('the totient of a prime', 1))[0]?.decl.name).toBe('Nat.totient_prime');
  });

  it('excludes by full name', async () => {
    const hits = await index.searchPremises('a prime number p', 3, { exclude: ['Nat.Prime'] });
    expect(hits.map((h) => h.decl.name)).not.toContain('Nat.Prime');
    expect(hits.length).toBeGreaterThan(0);
  });

  it('maps premises to the theorems using them', async () => {
    expect((await index.theoremsUsing(['Nat.totient'])).map((d) => d.name)).toEqual(['Nat.totient_prime']);
    expect((await index.theoremsUsing(['orderOf'], { exclude: ['IsPrimitiveRoot.orderOf'] })).map((d) => d.name)).toEqual([
      'ZMod.orderOf_dvd_card_sub_one',
      'orderOf_dvd_of_pow_eq_one',
    ]);
    expect(await index.theoremsUsing(['Unknown'])).toEqual([]);
  });

  it('round-trips through JSON', async () => {
    const copy = LexicalIndex.fromJSON(JSON.parse(JSON.stringify(index.toJSON())));
    expect(copy.size).toBe(index.size);
    expect(await copy.searchPremises('the order of a', 3)).toEqual(await index.searchPremises('the order of a', 3));
    expect((await copy.theoremsUsing(['ZMod'])).map((d) => d.name)).toEqual((await index.theoremsUsing(['ZMod'])).map((d) => d.name));
  });
});
