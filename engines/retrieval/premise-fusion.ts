// Premise ranking as a weighted sum of evidence, each part scaled to [0, 1] per query:
//
//   score(p) = lexical(p) / best lexical
//            + γ · definitions(p)      what the best-matching definitions are built from
//            + β · analogy(p)          what similar theorems of the library use
//            + α · prior(p)            how many theorems of the library use it (query-blind)
//
// definitions(p): the r best lexical hits vote, each with (its score / the best)², for the
// premises its own declaration uses (a statement about `ConNF.cloud` must supply what `cloud`
// takes: `ConNF.Params`, `ConNF.TypeIndex`, …), divided by the most votes. It reads only the
// definitions' own declarations, never a theorem, so no leave-out policy can change it.
//
// analogy(p): the m theorems most similar to the query vote for the premises they use, each
// with (the share of the query's distinct tokens found in the theorem)², averaged over the
// neighbours. Unlike a vote scaled by the best neighbour, this one is only as strong as the
// neighbours are close: near-copies of the statement (a theorem of the same file) count fully,
// loose matches from elsewhere in the library little. Excluded theorems (the leave-out
// policy's) neither vote nor are voted for.
//
// prior(p): log(1 + uses) / log(1 + most uses), uses by excluded theorems not counted in
// either (usage-prior.ts).
//
// γ = 1 (r = 20), β = 3 (m = 5) and α = 0 for monolithic retrieval were chosen on the even-numbered
// items of ConNF dev under `--leave-out file`, keeping `--leave-out item` within half a point of
// the previous default there, and checked on the odd-numbered items (docs/retrieval-evaluation.md;
// bench/retrieval-explore.ts searched the grid).
import type { Declaration } from './corpus';
import { isTheorem } from './corpus';
import { declarationDocument } from './bm25-fields';
import { tokenize } from './lean-tokenize';
import type { Hit, PremiseIndex, SearchOptions } from './premise-index';
import { PremiseReranker } from './premise-reranker';
import type { UsageTable } from './usage-prior';

export interface FusionWeights {
  /** γ: votes of the best-matching definitions for what they use. */
  definitions: number;
  /** β: votes of similar theorems for what they use. */
  analogy: number;
  /** α: the query-blind library-usage prior. */
  usagePrior: number;
}

export interface FusionOptions {
  /** r: how many of the best lexical hits vote with their own uses. */
  expandFrom?: number;
  /** m: how many similar theorems vote. */
  neighbours?: number;
  /** How many premise hits of the inner index are scored. */
  candidates?: number;
}

export const DEFAULT_FUSION = { definitions: 1, analogy: 3, usagePrior: 0, expandFrom: 20, neighbours: 5, candidates: 1000 } as const;

// A declaration's tokens, kept while the declaration object lives (a store hands out the same
// objects for a loaded version, so a theorem that is a neighbour again is not tokenized again).
const tokensOf = new WeakMap<Declaration, ReadonlySet<string>>();

function documentTokens(decl: Declaration): ReadonlySet<string> {
  let tokens = tokensOf.get(decl);
  if (!tokens) tokensOf.set(decl, (tokens = new Set(Object.values(declarationDocument(decl)).flat())));
  return tokens;
}

/** Share of the query's distinct tokens that occur in the declaration (name, signature,
 * docstring, informal text): how close a theorem is to the statement, in [0, 1]. */
export function queryCoverage(queryTokens: ReadonlySet<string>, decl: Declaration): number {
  if (queryTokens.size === 0) return 0;
  const doc = documentTokens(decl);
  let found = 0;
  for (const t of queryTokens) if (doc.has(t)) found++;
  return found / queryTokens.size;
}

export interface FusionInput {
  /** The inner index's premise hits, best first, with what each declaration uses. */
  hits: readonly { name: string; score: number; uses: readonly string[] }[];
  /** Similar theorems: their closeness to the query in [0, 1] and their uses. */
  neighbours: readonly { closeness: number; uses: readonly string[] }[];
  /** Whether a name is a premise that may be returned (not a theorem, not excluded). */
  isPremise: (name: string) => boolean;
  /** Prior in [0, 1] of a premise (only called when α > 0). */
  prior?: (name: string) => number;
  weights: FusionWeights;
  expandFrom: number;
}

/** Pure scoring: every premise that any part of the evidence names, best first (ties: the
 * inner index's order, then name). */
export function fusePremiseScores(input: FusionInput): { name: string; score: number }[] {
  const { hits, neighbours, isPremise, weights } = input;
  const scores = new Map<string, number>();
  const best = hits.length > 0 ? Math.max(...hits.map((h) => h.score)) : 0;
  for (const h of hits) if (isPremise(h.name)) scores.set(h.name, best > 0 ? h.score / best : 0);
  const add = (votes: Map<string, number>, weight: number, scale: number) => {
    if (!(weight > 0) || !(scale > 0)) return;
    for (const [name, v] of votes) scores.set(name, (scores.get(name) ?? 0) + (weight * v) / scale);
  };

  if (weights.definitions > 0 && best > 0) {
    const votes = new Map<string, number>();
    for (const h of hits.slice(0, input.expandFrom)) {
      const w = (h.score / best) ** 2;
      for (const u of new Set(h.uses)) if (u !== h.name && isPremise(u)) votes.set(u, (votes.get(u) ?? 0) + w);
    }
    add(votes, weights.definitions, Math.max(0, ...votes.values()));
  }
  if (weights.analogy > 0 && neighbours.length > 0) {
    const votes = new Map<string, number>();
    for (const n of neighbours) for (const u of new Set(n.uses)) if (isPremise(u)) votes.set(u, (votes.get(u) ?? 0) + n.closeness ** 2);
    add(votes, weights.analogy, neighbours.length);
  }
  if (weights.usagePrior > 0 && input.prior) for (const [name, s] of scores) scores.set(name, s + weights.usagePrior * input.prior(name));

  const order = new Map(hits.map((h, i) => [h.name, i]));
  return [...scores]
    .map(([name, score]) => ({ name, score }))
    .sort((a, b) => b.score - a.score || (order.get(a.name) ?? Infinity) - (order.get(b.name) ?? Infinity) || a.name.localeCompare(b.name));
}

/** The fused ranking over any PremiseIndex (the service's stores, the in-memory references). */
export class FusionIndex extends PremiseReranker {
  readonly kind: string;
  private readonly expandFrom: number;
  private readonly neighbours: number;
  private readonly candidates: number;

  constructor(
    inner: PremiseIndex,
    private readonly weights: FusionWeights,
    private readonly table?: UsageTable,
    opts: FusionOptions = {},
  ) {
    super(inner);
    if (weights.usagePrior > 0 && !table) throw new Error('the usage prior needs the usage table of the library');
    this.expandFrom = opts.expandFrom ?? DEFAULT_FUSION.expandFrom;
    this.neighbours = opts.neighbours ?? DEFAULT_FUSION.neighbours;
    this.candidates = opts.candidates ?? DEFAULT_FUSION.candidates;
    const parts: string[] = [];
    if (weights.usagePrior > 0) parts.push(`usage prior α=${weights.usagePrior}`);
    if (weights.definitions > 0) parts.push(`definitions γ=${weights.definitions}`);
    if (weights.analogy > 0) parts.push(`analogy (${this.neighbours} similar theorems vote, β=${weights.analogy})`);
    this.kind = [inner.kind, ...parts].join(' + ');
  }

  async searchPremises(query: string, k: number, opts?: SearchOptions): Promise<Hit[]> {
    if (k <= 0) return [];
    const useAnalogy = this.weights.analogy > 0 && this.neighbours > 0;
    const [hits, theorems] = await Promise.all([
      this.inner.searchPremises(query, Math.max(k, this.candidates), opts),
      useAnalogy ? this.inner.searchTheorems(query, this.neighbours, opts) : Promise.resolve([]),
    ]);
    const excluded = new Set(opts?.exclude ?? []);
    const decls = new Map<string, Declaration | undefined>(hits.map((h) => [h.decl.name, h.decl]));
    // Names the votes point to that the inner ranking did not return: looked up once each.
    const named = new Set<string>();
    if (this.weights.definitions > 0) for (const h of hits.slice(0, this.expandFrom)) for (const u of h.decl.uses) named.add(u);
    for (const t of theorems) for (const u of t.decl.uses) named.add(u);
    await Promise.all([...named].filter((u) => !decls.has(u) && !excluded.has(u)).map(async (u) => decls.set(u, await this.inner.get(u))));
    const isPremise = (name: string) => {
      const d = decls.get(name);
      return d !== undefined && !isTheorem(d) && !excluded.has(name);
    };
    const queryTokens = new Set(tokenize(query));
    const table = this.table;
    const denom = table ? Math.log1p(Math.max(1, table.maxUsesWithout(opts?.exclude))) : 1;
    return fusePremiseScores({
      hits: hits.map((h) => ({ name: h.decl.name, score: h.score, uses: h.decl.uses })),
      neighbours: theorems.map((t) => ({ closeness: queryCoverage(queryTokens, t.decl), uses: t.decl.uses })),
      isPremise,
      ...(table ? { prior: (n: string) => Math.log1p(Math.max(0, table.uses(n, opts?.exclude))) / denom } : {}),
      weights: this.weights,
      expandFrom: this.expandFrom,
    })
      .slice(0, k)
      .map((s) => ({ decl: decls.get(s.name)!, score: s.score }));
  }
}
