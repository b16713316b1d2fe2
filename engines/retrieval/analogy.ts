// Premises by analogy: the library's theorems most similar to the query vote for the premises
// their statements use. A statement about near-litters is likely to need what the library's
// other near-litter theorems need. Each neighbour's vote is its score over the best neighbour's;
// a premise's final score is its own (over the best premise) plus β · votes / most votes.
// The excluded names (the item under evaluation) neither vote nor receive votes.
//
// m = 5 neighbours and β = 2 were chosen on the even-numbered half of ConNF dev and checked on
// the odd-numbered half (bench/retrieval-eval.ts). This was the service's monolithic default
// until issue 28; the service now fuses votes scaled by each neighbour's closeness instead
// (premise-fusion.ts), and this index remains as the baseline the benchmarks compare against.
import type { Declaration } from './corpus';
import { isTheorem } from './corpus';
import type { Hit, PremiseIndex, SearchOptions } from './premise-index';
import { PremiseReranker } from './premise-reranker';

export const DEFAULT_ANALOGY = { neighbours: 5, weight: 2, candidates: 50 } as const;

export interface AnalogyOptions {
  /** How many similar theorems vote (m). */
  neighbours?: number;
  /** Weight β of the votes against the premise's own score. */
  weight?: number;
  /** How many premise hits of the inner index are re-scored. */
  candidates?: number;
}

/** Pure scoring: own hits and neighbour theorems (best first) → premise ranking. */
export function analogyScores(
  premiseHits: readonly { name: string; score: number }[],
  neighbours: readonly { score: number; uses: readonly string[] }[],
  isPremise: (name: string) => boolean,
  weight: number,
): { name: string; score: number }[] {
  const scores = new Map<string, number>();
  const best = premiseHits.length > 0 ? Math.max(...premiseHits.map((h) => h.score)) : 0;
  for (const h of premiseHits) scores.set(h.name, best > 0 ? h.score / best : 0);
  const votes = new Map<string, number>();
  const top = neighbours.length > 0 ? Math.max(...neighbours.map((n) => n.score)) : 0;
  for (const n of neighbours) {
    for (const u of new Set(n.uses)) {
      if (!isPremise(u)) continue;
      votes.set(u, (votes.get(u) ?? 0) + (top > 0 ? n.score / top : 1));
    }
  }
  const maxVotes = Math.max(0, ...votes.values());
  if (maxVotes > 0) for (const [name, v] of votes) scores.set(name, (scores.get(name) ?? 0) + (weight * v) / maxVotes);
  const order = new Map(premiseHits.map((h, i) => [h.name, i]));
  return [...scores]
    .map(([name, score]) => ({ name, score }))
    .sort((a, b) => b.score - a.score || (order.get(a.name) ?? Infinity) - (order.get(b.name) ?? Infinity) || a.name.localeCompare(b.name));
}

export class AnalogyIndex extends PremiseReranker {
  readonly kind: string;
  private readonly neighbours: number;
  private readonly weight: number;
  private readonly candidates: number;

  constructor(inner: PremiseIndex, opts: AnalogyOptions = {}) {
    super(inner);
    this.neighbours = opts.neighbours ?? DEFAULT_ANALOGY.neighbours;
    this.weight = opts.weight ?? DEFAULT_ANALOGY.weight;
    this.candidates = opts.candidates ?? DEFAULT_ANALOGY.candidates;
    this.kind = `${inner.kind} + analogy (${this.neighbours} similar theorems vote, β=${this.weight})`;
  }

  async searchPremises(query: string, k: number, opts?: SearchOptions): Promise<Hit[]> {
    if (k <= 0) return [];
    const [hits, theorems] = await Promise.all([
      this.inner.searchPremises(query, Math.max(k, this.candidates), opts),
      this.neighbours > 0 ? this.inner.searchTheorems(query, this.neighbours, opts) : Promise.resolve([]),
    ]);
    const excluded = new Set(opts?.exclude ?? []);
    const decls = new Map<string, Declaration | undefined>(hits.map((h) => [h.decl.name, h.decl]));
    const voted = new Set(theorems.flatMap((t) => t.decl.uses).filter((u) => !decls.has(u) && !excluded.has(u)));
    await Promise.all([...voted].map(async (u) => decls.set(u, await this.inner.get(u))));
    const isPremise = (name: string) => {
      const d = decls.get(name);
      return d !== undefined && !isTheorem(d) && !excluded.has(name);
    };
    return analogyScores(
      hits.map((h) => ({ name: h.decl.name, score: h.score })),
      theorems.map((t) => ({ score: t.score, uses: t.decl.uses })),
      isPremise,
      this.weight,
    )
      .slice(0, k)
      .map((s) => ({ decl: decls.get(s.name)!, score: s.score }));
  }
}
