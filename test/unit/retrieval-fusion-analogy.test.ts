import { describe, expect, it } from 'vitest';
import { AnalogyIndex, analogyScores } from '../../engines/retrieval/analogy';
import { LexicalIndex } from '../../engines/retrieval/eval/lexical-index';
import type { Declaration } from '../../engines/retrieval/corpus';

describe('premises by analogy', () => {
  it('adds β · votes / most votes, each neighbour voting its score over the best', () => {
    const ranked = analogyScores(
      [
        { name: 'A', score: 4 },
        { name: 'B', score: 2 },
      ],
      [
        { score: 10, uses: ['B', 'C', 'thm'] },
        { score: 5, uses: ['C', 'C'] },
      ],
      (n) => n !== 'thm',
      2,
    );
    // votes: B 1, C 1.5 (repeats in one neighbour count once); own: A 1, B 0.5.
    expect(ranked).toEqual([
      { name: 'C', score: 2 },
      { name: 'B', score: 0.5 + 2 / 1.5 },
      { name: 'A', score: 1 },
    ]);
    expect(analogyScores([{ name: 'A', score: 1 }], [], () => true, 2)).toEqual([{ name: 'A', score: 1 }]);
  });

  const d = (name: string, kind: string, signature: string, uses: string[] = []): Declaration => ({ name, kind, signature, uses });
  const LIB: Declaration[] = [
    d('Litter', 'structure', 'structure Litter : Type'),
    d('Tangle', 'structure', 'structure Tangle : Type'),
    d('Support', 'structure', 'structure Support : Type'),
    d('litter_tangle_support', 'theorem', 'theorem litter_tangle_support (L : Litter) : True', ['Litter', 'Support', 'Tangle']),
    d('litter_support', 'theorem', 'theorem litter_support (L : Litter) : True', ['Litter', 'Support']),
    d('the_item', 'theorem', 'theorem the_item (L : Litter) : True', ['Litter', 'Tangle']),
  ];

  it('finds premises the query never names through similar theorems, and never through the excluded item', async () => {
    const lexical = LexicalIndex.build('lib', LIB, { usagePrior: 0 });
    const index = new AnalogyIndex(lexical, { neighbours: 2 });
    expect((await lexical.searchPremises('every litter', 3)).map((h) => h.decl.name)).toEqual(['Litter']);
    const names = (await index.searchPremises('every litter', 3, { exclude: ['the_item'] })).map((h) => h.decl.name);
    expect(names.slice(0, 2).sort()).toEqual(['Litter', 'Support']);
    // Tangle is used by one neighbour only; the excluded item's own use of it does not count.
    expect(names[2]).toBe('Tangle');
    const withItem = new AnalogyIndex(lexical, { neighbours: 3 });
    const all = await withItem.searchPremises('every litter', 3, { exclude: ['Support'] });
    expect(all.map((h) => h.decl.name)).not.toContain('Support');
    expect(index.kind).toMatch(/^lexical \+ analogy \(2 similar theorems vote/);
  });
});
