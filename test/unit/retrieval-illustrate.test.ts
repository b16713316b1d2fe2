import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadCorpus } from '../../engines/retrieval/corpus';
import { greedyCover, illustrate, rankCandidates, selectExamples } from '../../engines/retrieval/illustrate';
import { LexicalIndex } from '../../engines/retrieval/eval/lexical-index';

describe('greedyCover', () => {
  const P = ['A', 'B', 'C'];

  it('takes the candidate covering two premises before a higher-ranked one covering one', () => {
    const ranked = [
      { name: 'one', uses: ['A'] },
      { name: 'two', uses: ['A', 'B'] },
    ];
    expect(greedyCover(ranked, P, 1)).toEqual([{ name: 'two', covers: ['A', 'B'] }]);
  });

  it('counts only still-uncovered premises (marginal gain)', () => {
    const ranked = [
      { name: 'ab', uses: ['A', 'B'] },
      { name: 'abx', uses: ['A', 'B', 'X'] }, // X is not a retrieved premise
      { name: 'c', uses: ['C'] },
    ];
    expect(greedyCover(ranked, P, 3)).toEqual([
      { name: 'ab', covers: ['A', 'B'] },
      { name: 'c', covers: ['C'] },
    ]);
  });

  it('on equal gain keeps the higher-ranked candidate', () => {
    const ranked = [
      { name: 'first', uses: ['B'] },
      { name: 'second', uses: ['A'] },
    ];
    expect(greedyCover(ranked, P, 1)).toEqual([{ name: 'first', covers: ['B'] }]);
    expect(greedyCover([...ranked].reverse(), P, 1)).toEqual([{ name: 'second', covers: ['A'] }]);
  });

  it('respects m', () => {
    const ranked = [
      { name: 'a', uses: ['A'] },
      { name: 'b', uses: ['B'] },
      { name: 'c', uses: ['C'] },
    ];
    expect(greedyCover(ranked, P, 2).map((c) => c.name)).toEqual(['a', 'b']);
    expect(greedyCover(ranked, P, 0)).toEqual([]);
  });

  it('stops once no candidate adds coverage, even below m', () => {
    const ranked = [
      { name: 'abc', uses: ['A', 'B', 'C'] },
      { name: 'a', uses: ['A'] },
    ];
    expect(greedyCover(ranked, P, 3).map((c) => c.name)).toEqual(['abc']);
    expect(greedyCover([{ name: 'x', uses: ['X'] }], P, 3)).toEqual([]);
  });
});

describe('selectExamples on the fixture corpus', () => {
  let index: LexicalIndex;
  beforeAll(async () => {
    const corpus = await loadCorpus(join(resolve(__dirname, '../fixtures/corpus'), 'mini.jsonl'));
    index = LexicalIndex.build('mini', corpus.declarations);
  });

  it('ranks candidates by similarity to the statement, ties by name', async () => {
    const ranked = await rankCandidates(index, { statement: 'the number of elements of ZMod n', premises: ['ZMod'], m: 3 });
    expect(ranked[0]?.name).toBe('ZMod.card');
    const tied = await rankCandidates(index, { statement: '', premises: ['ZMod'], m: 3 });
    expect(tied.map((c) => c.name)).toEqual(['ZMod.card', 'ZMod.orderOf_dvd_card_sub_one', 'ZMod.pow_card_sub_one_eq_one']);
  });

  it('prefers a theorem covering two premises over a better-ranked one covering one', async () => {
    const input = { statement: 'the number of elements of ZMod n', premises: ['ZMod', 'orderOf'], m: 3 };
    // ZMod.card is the most similar candidate, yet covers only ZMod.
    expect((await rankCandidates(index, input))[0]?.name).toBe('ZMod.card');
    const examples = await selectExamples(index, input);
    expect(examples.map((e) => [e.name, e.covers])).toEqual([['ZMod.orderOf_dvd_card_sub_one', ['ZMod', 'orderOf']]]);
    expect(examples[0]).toMatchObject({
      formal: expect.stringContaining('orderOf a ∣ p - 1'),
      informal: expect.stringContaining('divides p - 1'),
    });
  });

  it('never shows an excluded theorem', async () => {
    const input = { statement: 'order', premises: ['ZMod', 'orderOf'], m: 3, exclude: ['ZMod.orderOf_dvd_card_sub_one'] };
    const examples = await selectExamples(index, input);
    expect(examples.map((e) => e.name)).not.toContain('ZMod.orderOf_dvd_card_sub_one');
    expect(examples.flatMap((e) => e.covers).sort()).toEqual(['ZMod', 'orderOf']);
    expect(examples).toHaveLength(2);
  });

  it('respects m and covers at most the retrieved premises', async () => {
    const premises = ['Nat.totient', 'Finset.card', 'IsPrimitiveRoot', 'Monoid'];
    expect(await selectExamples(index, { statement: '', premises, m: 2 })).toHaveLength(2);
    const all = await selectExamples(index, { statement: '', premises, m: 10 });
    expect(all.flatMap((e) => e.covers).sort()).toEqual([...premises].sort());
    expect(await selectExamples(index, { statement: '', premises: [], m: 3 })).toEqual([]);
  });

  it('illustrate checks that it was given the index of the requested library', async () => {
    const input = { library: 'mini', statement: '', premises: ['Nat.totient'], m: 3, exclude: [] };
    expect((await illustrate(index, input)).map((e) => e.name)).toEqual(['Nat.totient_prime']);
    await expect(illustrate(index, { ...input, library: 'mathlib' })).rejects.toThrow(/mathlib/);
  });
});
