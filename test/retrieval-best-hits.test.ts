// The embedded store's top-k selection: the same hits, in the same order, as sorting them all.
import { describe, expect, it } from 'vitest';
import { bestHits } from '../engines/retrieval/stores/embedded';

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 4294967296);
}

describe('bestHits', () => {
  it('equals a full sort (higher score first, then lower index) cut at the limit, ties included', () => {
    const r = rng(7);
    for (const n of [0, 1, 5, 100, 2000]) {
      // Few distinct scores, so many ties must be broken by index.
      const hits = Array.from({ length: n }, (_, i) => ({ i: (i * 7919) % (n || 1), score: Math.floor(r() * 20) / 4 }));
      for (const limit of [0, 1, 3, 40, n + 5]) {
        const sorted = [...hits].sort((a, b) => b.score - a.score || a.i - b.i).slice(0, Math.max(0, limit));
        expect(bestHits(hits, limit), `n=${n} limit=${limit}`).toEqual(sorted);
      }
    }
  });
});
