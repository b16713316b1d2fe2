import { describe, expect, it } from 'vitest';
import { applyUsagePrior, UsagePriorIndex, UsageTable } from '../../engines/retrieval/usage-prior';
import { isTheorem } from '../../engines/retrieval/corpus';
import { LexicalIndex } from '../../engines/retrieval/eval/lexical-index';
import type { Declaration } from '../../engines/retrieval/corpus';

describe('library-usage prior', () => {
  it('adds α·log1p(uses)/log1p(max uses) to the score scaled by the best one', () => {
    const hits = [
      { name: 'rare', score: 10 },
      { name: 'common', score: 8 },
    ];
    const uses = (n: string) => (n === 'common' ? 99 : 0);
    expect(applyUsagePrior(hits, uses, 99, 0).map((h) => h.name)).toEqual(['rare', 'common']);
    const ranked = applyUsagePrior(hits, uses, 99, 1);
    expect(ranked.map((h) => h.name)).toEqual(['common', 'rare']);
    expect(ranked[0]!.score).toBeCloseTo(0.8 + 1, 10);
    expect(ranked[1]!.score).toBeCloseTo(1, 10);
    expect(applyUsagePrior([], uses, 1, 1)).toEqual([]);
  });

  const d = (name: string, kind: string, signature: string, uses: string[] = []): Declaration => ({ name, kind, signature, uses });
  const LIB: Declaration[] = [
    d('Litter', 'structure', 'structure Litter : Type'),
    d('NearLitter', 'structure', 'structure NearLitter : Type'),
    d('t1', 'theorem', 'theorem t1 : True', ['NearLitter']),
    d('t2', 'theorem', 'theorem t2 : True', ['NearLitter']),
    d('t3', 'theorem', 'theorem t3 : True', ['NearLitter']),
  ];

  it('lets widely used premises win lexical near-ties, without counting excluded theorems', async () => {
    const withPrior = LexicalIndex.build('lib', LIB, { usagePrior: 1.2 });
    const without = LexicalIndex.build('lib', LIB, { usagePrior: 0 });
    const q = 'a litter';
    expect((await without.searchPremises(q, 2)).map((h) => h.decl.name)).toEqual(['Litter', 'NearLitter']);
    expect((await withPrior.searchPremises(q, 2)).map((h) => h.decl.name)).toEqual(['NearLitter', 'Litter']);
    // With every user of NearLitter excluded, its prior is gone.
    expect((await withPrior.searchPremises(q, 2, { exclude: ['t1', 't2', 't3'] })).map((h) => h.decl.name)).toEqual([
      'Litter',
      'NearLitter',
    ]);
    // The setting survives serialisation.
    expect(LexicalIndex.fromJSON(JSON.parse(JSON.stringify(without.toJSON()))).usagePrior).toBe(0);
  });

  it('UsagePriorIndex gives any index the same ranking as the built-in prior', async () => {
    const wrapped = new UsagePriorIndex(LexicalIndex.build('lib', LIB, { usagePrior: 0 }), new UsageTable(LIB, isTheorem), 1.2);
    const builtIn = LexicalIndex.build('lib', LIB, { usagePrior: 1.2 });
    for (const exclude of [[], ['t1', 't2', 't3'], ['t1']]) {
      const a = (await wrapped.searchPremises('a litter', 2, { exclude })).map((h) => [h.decl.name, h.score]);
      const b = (await builtIn.searchPremises('a litter', 2, { exclude })).map((h) => [h.decl.name, h.score]);
      expect(a).toEqual(b);
    }
    expect(wrapped.kind).toBe('lexical + usage prior α=1.2');
    expect(new UsageTable(LIB, isTheorem).uses('NearLitter', ['t2'])).toBe(2);
  });
});
