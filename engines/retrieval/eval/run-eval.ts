// Runs dependency retrieval over benchmark items and measures it. Monolithic: the whole
// statement is one query and the ranking is cut at each k. DRIFT: each sub-query's top k
// premises, de-duplicated, form the set measured at k (k = 1 is the paper's DRIFT; the set
// size is dynamic). The item itself is always excluded by full name; under the `file` policy the
// theorems of its source file are hidden too (leave-out.ts).
import type { LeaveOutPolicy, SubQuery } from '../../../common/retrieval-types';
import { leaveOutNames } from '../leave-out';
import type { PremiseIndex } from '../premise-index';
import { retrievePremises, subqueryTexts } from '../retrieve-premises';
import type { BenchmarkItem } from './benchmark';
import { retrievalMetricsAt, type RetrievalCase, type RetrievalMetrics } from './metrics';

export type EvalMode = 'monolithic' | 'drift';

export interface EvalOptions {
  mode: EvalMode;
  ks: readonly number[];
  /** DRIFT sub-queries by item name (required in drift mode). */
  subqueries?: ReadonlyMap<string, SubQuery[]>;
  /** `item` (default): only the item's own declaration is hidden; `file`: every theorem of its
   * source file too (leave-out.ts). */
  leaveOut?: LeaveOutPolicy;
  onProgress?: (done: number, total: number) => void;
}

export interface EvalResult {
  metrics: RetrievalMetrics[];
  /** Retrieval notes of the first item (says lexical / dense / hybrid). */
  notes: string[];
}

export async function evaluateRetrieval(index: PremiseIndex, items: readonly BenchmarkItem[], opts: EvalOptions): Promise<EvalResult> {
  const maxK = Math.max(...opts.ks);
  const byK = new Map<number, RetrievalCase[]>(opts.ks.map((k) => [k, []]));
  let notes: string[] = [];
  let done = 0;
  for (const item of items) {
    const policy = opts.leaveOut ?? 'item';
    if (opts.mode === 'monolithic') {
      const out = await retrievePremises(index, {
        library: index.library,
        statement: item.statement,
        subqueries: [],
        mode: 'monolithic',
        topK: maxK,
        exclude: [item.name],
        leaveOut: policy,
        gold: [],
      });
      if (done === 0) notes = out.notes;
      const ranking = out.premises.map((p) => p.name);
      for (const k of opts.ks) byK.get(k)!.push({ retrieved: ranking.slice(0, k), gold: item.gold });
    } else {
      const subs = opts.subqueries?.get(item.name);
      if (!subs) throw new Error(`no sub-queries for ${item.name}: drift mode needs a decomposition of every item`);
      const queries = subqueryTexts(item.statement, subs);
      const exclude = await leaveOutNames(index, [item.name], policy);
      const lists = [];
      for (const q of queries) lists.push((await index.searchPremises(q, maxK, { exclude })).map((h) => h.decl.name));
      if (done === 0) notes = [`drift: ${queries.length} sub-queries`];
      for (const k of opts.ks) {
        const set = [...new Set(lists.flatMap((l) => l.slice(0, k)))];
        byK.get(k)!.push({ retrieved: set, gold: item.gold });
      }
    }
    opts.onProgress?.(++done, items.length);
  }
  return {
    metrics: opts.ks.map((k) => {
      const m = retrievalMetricsAt(byK.get(k)!, opts.mode === 'drift' ? Infinity : k);
      return { ...m, k };
    }),
    notes,
  };
}
