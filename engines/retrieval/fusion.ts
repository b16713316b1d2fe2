// Reciprocal rank fusion (Cormack, Clarke & Büttcher, SIGIR 2009): every ranked list gives an
// item weight / (k + rank), rank counted from 1; items are ordered by the sum. Scores of the
// lists themselves are ignored, so BM25 scores and cosine similarities need no calibration.
// Pure; the one implementation: the in-memory hybrid index and the embedded store call it, and
// the Qdrant store asks Qdrant for the same thing (k + 1: see QDRANT_RRF_K in stores/qdrant.ts).

export const RRF_DEFAULT_K = 60;

/** How many candidates each side of a hybrid search contributes before fusion. */
export function prefetchLimit(k: number): number {
  return Math.max(4 * k, 40);
}

export interface RankedList {
  /** Item ids, best first. Repeats after the first occurrence are ignored. */
  ids: readonly string[];
  /** How much this list counts (default 1). */
  weight?: number;
}

export interface Fused {
  id: string;
  score: number;
}

/**
 * Fuses ranked lists. Ties (equal fused score) go to the item with the better best rank in any
 * list, then to the earlier list, so the result is deterministic.
 */
export function reciprocalRankFusion(lists: readonly RankedList[], opts: { k?: number; limit?: number } = {}): Fused[] {
  const k = opts.k ?? RRF_DEFAULT_K;
  if (!(k >= 0)) throw new Error(`RRF k must be ≥ 0, got ${k}`);
  const acc = new Map<string, { score: number; bestRank: number; firstList: number }>();
  lists.forEach((list, li) => {
    const weight = list.weight ?? 1;
    const seen = new Set<string>();
    let rank = 0;
    for (const id of list.ids) {
      if (seen.has(id)) continue;
      seen.add(id);
      rank++;
      const e = acc.get(id);
      const add = weight / (k + rank);
      if (e) {
        e.score += add;
        e.bestRank = Math.min(e.bestRank, rank);
      } else acc.set(id, { score: add, bestRank: rank, firstList: li });
    }
  });
  const out = [...acc]
    .map(([id, e]) => ({ id, ...e }))
    .sort((a, b) => b.score - a.score || a.bestRank - b.bestRank || a.firstList - b.firstList)
    .map(({ id, score }) => ({ id, score }));
  return opts.limit !== undefined ? out.slice(0, Math.max(0, opts.limit)) : out;
}
