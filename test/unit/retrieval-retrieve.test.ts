import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { RetrieveInput } from '../../common/retrieval-types';
import { loadCorpus } from '../../engines/retrieval/corpus';
import { LexicalIndex } from '../../engines/retrieval/eval/lexical-index';
import { retrievePremises } from '../../engines/retrieval/retrieve-premises';

let index: LexicalIndex;
beforeAll(async () => {
  const corpus = await loadCorpus(join(resolve(__dirname, '../fixtures/corpus'), 'mini.jsonl'));
  index = LexicalIndex.build('mini', corpus.declarations);
});

const STATEMENT = 'Let p be a prime. Show that a is a primitive root modulo p iff the order of a in ZMod p is p - 1.';
const input = (over: Partial<RetrieveInput>): RetrieveInput => ({
  library: 'mini',
  statement: STATEMENT,
  subqueries: [
    { phrase: 'a prime p', formal: 'Nat.Prime p' },
    { phrase: 'residues modulo p', formal: 'a : ZMod p' },
    { phrase: 'p is prime', formal: '[Fact (Nat.Prime p)]' },
    { phrase: 'order of a', formal: 'orderOf a' },
  ],
  mode: 'drift',
  topK: 3,
  exclude: [],
  gold: ['Nat.Prime', 'ZMod', 'orderOf'],
  ...over,
});
const names = (out: { premises: { name: string }[] }) => out.premises.map((p) => p.name);
const LEXICAL_NOTE = 'retrieval: lexical (BM25) only, no embedder configured';

describe('retrievePremises', () => {
  it('drift: the top premise per sub-query, de-duplicated, with the sub-query that found it', async () => {
    const out = await retrievePremises(index, input({}));
    expect(out.premises.map((p) => [p.name, p.subquery])).toEqual([
      ['Nat.Prime', 0],
      ['ZMod', 1],
      ['orderOf', 3],
    ]);
    expect(out.notes).toContain(LEXICAL_NOTE);
  });

  it('maps declarations to premises with signature, source and module', async () => {
    const [prime] = (await retrievePremises(index, input({}))).premises;
    expect(prime).toMatchObject({
      name: 'Nat.Prime',
      kind: 'def',
      declaration: 'def Nat.Prime (p : ℕ) : Prop',
      module: 'Mathlib.Data.Nat.Prime.Defs',
      subquery: 0,
    });
    expect(prime?.source).toContain('Irreducible');
    expect(prime?.score).toBeGreaterThan(0);
  });

  it('drift without sub-queries uses the statement as the only query', async () => {
    const out = await retrievePremises(index, input({ subqueries: [] }));
    expect(out.premises).toHaveLength(1);
    expect(out.notes.join('\n')).toMatch(/no sub-queries/);
  });

  it('monolithic: the whole statement, top-k', async () => {
    const out = await retrievePremises(index, input({ mode: 'monolithic', topK: 3 }));
    expect(out.premises).toHaveLength(3);
    expect(names(out)).toEqual(expect.arrayContaining(['IsPrimitiveRoot', 'ZMod']));
    expect(out.premises.every((p) => p.subquery === undefined)).toBe(true);
    expect(out.notes).toContain(LEXICAL_NOTE);
  });

  it('oracle: the gold names, noting those the library lacks', async () => {
    const out = await retrievePremises(index, input({ mode: 'oracle', gold: ['ZMod', 'Nat.Prime', 'NoSuchThing', 'ZMod'] }));
    expect(names(out)).toEqual(['ZMod', 'Nat.Prime']);
    expect(out.notes.join('\n')).toMatch(/not in library mini: NoSuchThing/);
  });

  it('none: nothing', async () => {
    const out = await retrievePremises(index, input({ mode: 'none' }));
    expect(out.premises).toEqual([]);
    expect(out.notes.join('\n')).toMatch(/none/);
  });

  describe('exclude is honoured by full name in every mode', () => {
    const exclude = ['Nat.Prime', 'ZMod'];
    it.each(['drift', 'monolithic', 'oracle', 'none'] as const)('%s', async (mode) => {
      const without = await retrievePremises(index, input({ mode, topK: 10 }));
      const out = await retrievePremises(index, input({ mode, topK: 10, exclude }));
      if (mode !== 'none') {
        // The excluded names would have been retrieved otherwise, so the test can fail.
        expect(names(without)).toEqual(expect.arrayContaining(exclude));
      }
      for (const n of exclude) expect(names(out)).not.toContain(n);
    });
  });
});
