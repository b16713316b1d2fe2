// A library-usage prior for premise search: definitions that many of the library's theorems
// use are more likely to be what a new statement needs (in ConNF a few, like `ConNF.Params` or
// `ConNF.TypeIndex`, appear in most statements). The lexical score, scaled by the query's best
// score, is added to α · log(1 + uses) / log(1 + most uses), so α means the same on any library.
// Uses by excluded theorems (the item under evaluation) do not count.
//
// α = 1.2 was chosen on the even-numbered half of the ConNF development split and checked on
// the odd-numbered half (bench/retrieval-eval.ts): F1@3 33.0 → 53.3, F1@5 29.4 → 49.7 there.
// The service applies it to DRIFT retrieval (top 1 per sub-query); monolithic retrieval fuses
// other evidence and leaves it at 0 (premise-fusion.ts, rerank.ts).

import type { Hit, PremiseIndex, SearchOptions } from './premise-index';
import { PremiseReranker } from './premise-reranker';

export const DEFAULT_USAGE_PRIOR = 1.2;

export interface Scored {
  name: string;
  score: number;
}

/**
 * Re-ranks lexical hits (positive scores, any order) by score/best + α·log1p(uses)/log1p(maxUses).
 * `uses(name)` is the number of theorems using the premise, exclusions already subtracted.
 */
export function applyUsagePrior<T extends Scored>(
  hits: readonly T[],
  uses: (name: string) => number,
  maxUses: number,
  alpha: number,
): (T & { prior: number })[] {
  if (hits.length === 0) return [];
  const best = Math.max(...hits.map((h) => h.score));
  const denom = Math.log1p(Math.max(1, maxUses));
  return hits
    .map((h, i) => ({ h, i, s: (best > 0 ? h.score / best : 0) + (alpha * Math.log1p(Math.max(0, uses(h.name)))) / denom }))
    .sort((a, b) => b.s - a.s || a.i - b.i)
    .map(({ h, s }) => ({ ...h, score: s, prior: s }));
}

/** Premise → how many theorems use it, and theorem → its uses (to subtract exclusions). */
export class UsageTable {
  private readonly count = new Map<string, number>();
  private readonly usesOf = new Map<string, readonly string[]>();
  readonly maxUses: number;

  constructor(
    declarations: readonly { name: string; kind: string; uses: readonly string[] }[],
    isTheorem: (d: { kind: string }) => boolean,
  ) {
    for (const d of declarations) {
      if (!isTheorem(d)) continue;
      this.usesOf.set(d.name, d.uses);
      for (const u of new Set(d.uses)) this.count.set(u, (this.count.get(u) ?? 0) + 1);
    }
    this.maxUses = Math.max(0, ...this.count.values());
  }

  /** Uses of `name`, not counting the excluded theorems. */
  uses(name: string, exclude?: readonly string[]): number {
    let n = this.count.get(name) ?? 0;
    for (const t of exclude ?? []) if (this.usesOf.get(t)?.includes(name)) n--;
    return n;
  }

  /** Premises by count, most used first (built on first need). */
  private byCount?: [string, number][];

  /** The most uses of any premise, not counting the excluded theorems: the prior's scale, which
   * must not depend on the hidden theorems either. Walks the premises from the most used down
   * and stops once no later one can do better (exclusions only lower counts). */
  maxUsesWithout(exclude?: readonly string[]): number {
    if (!exclude?.length) return this.maxUses;
    this.byCount ??= [...this.count].sort((a, b) => b[1] - a[1]);
    let best = 0;
    for (const [name, n] of this.byCount) {
      if (n <= best) break;
      best = Math.max(best, this.uses(name, exclude));
    }
    return best;
  }
}

/** Premise hits the prior re-ranks over an index that does not apply it itself. The in-memory
 * `LexicalIndex` re-ranks every lexical match; 200 cost the store path 0.9 points of F1@3 on
 * ConNF (387 premises: a heavily used premise that the words match weakly never got its
 * chance). 1000 covers a con-nf-sized library whole and bounds the work on Mathlib. */
export const DEFAULT_PRIOR_CANDIDATES = 1000;

/** Re-ranks the first `candidates` premise hits of any PremiseIndex with the usage prior
 * (for indexes that do not apply it themselves, such as the store-backed ones). */
export class UsagePriorIndex extends PremiseReranker {
  readonly kind: string;

  constructor(
    inner: PremiseIndex,
    private readonly table: UsageTable,
    private readonly alpha = DEFAULT_USAGE_PRIOR,
    private readonly candidates = DEFAULT_PRIOR_CANDIDATES,
  ) {
    super(inner);
    this.kind = `${inner.kind} + usage prior α=${alpha}`;
  }

  async searchPremises(query: string, k: number, opts?: SearchOptions): Promise<Hit[]> {
    if (k <= 0) return [];
    const hits = await this.inner.searchPremises(query, Math.max(k, this.candidates), opts);
    const ranked = applyUsagePrior(
      hits.map((h) => ({ ...h, name: h.decl.name })),
      (n) => this.table.uses(n, opts?.exclude),
      this.table.maxUsesWithout(opts?.exclude),
      this.alpha,
    );
    return ranked.slice(0, k).map((h) => ({ decl: h.decl, score: h.score }));
  }
}
