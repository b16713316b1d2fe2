// The re-ranking the service puts over every stored index version, and the one
// `driftline eval retrieval` measures by default: the library-usage prior (usage-prior.ts) over
// the store's BM25F (or hybrid) premise ranking, then the votes of similar theorems (analogy.ts).
// The usage table comes from the version's own points (every theorem's `uses`), so it always
// matches the version searched, whatever happened to the corpus file since.
//
// Which wrappers apply depends on how the ranking is used. Monolithic retrieval (top-k for the
// whole statement) gets both: that is what was measured (ConNF dev, bench/retrieval-eval.ts).
// DRIFT retrieval keeps only the top-1 premise per sub-query; the prior helps there too (a
// short sub-query often matches many definitions equally, and the prior prefers the ones the
// library leans on), but the analogy votes come from theorems similar to the *sub-query*, whose
// premises are those of the whole neighbourhood rather than of the one concept asked for, so
// they could replace the concept's own match. That cannot be measured without an LLM to
// decompose the benchmark, so DRIFT runs without analogy until it is (`analogy: 'always'`
// turns it on).
import { AnalogyIndex } from './analogy';
import { isTheorem } from './corpus';
import type { PremiseIndex } from './premise-index';
import type { StoreIndex } from './stores/store-index';
import { DEFAULT_USAGE_PRIOR, UsagePriorIndex, UsageTable } from './usage-prior';

/** How the ranking is used: top-k for the whole statement, or top-1 per DRIFT sub-query. */
export type RetrievalUse = 'monolithic' | 'drift';

export interface RerankSettings {
  /** Weight α of the usage prior; 0 turns it off. */
  usagePrior: number;
  /** Votes of similar theorems: never, for monolithic retrieval only, or for every use. */
  analogy: 'off' | 'monolithic' | 'always';
}

export const DEFAULT_RERANK: RerankSettings = { usagePrior: DEFAULT_USAGE_PRIOR, analogy: 'monolithic' };

/** Whether the analogy votes re-rank a ranking used this way (the rule of the header comment). */
export function analogyApplies(analogy: RerankSettings['analogy'], use: RetrievalUse): boolean {
  return analogy === 'always' || (analogy === 'monolithic' && use === 'monolithic');
}

/** The wrappers over `index` for one use (the usage table is needed when α > 0). */
export function rerank(index: PremiseIndex, table: UsageTable | undefined, use: RetrievalUse, settings: RerankSettings = DEFAULT_RERANK): PremiseIndex {
  let out = index;
  if (settings.usagePrior > 0) {
    if (!table) throw new Error('the usage prior needs the usage table of the library');
    out = new UsagePriorIndex(out, table, settings.usagePrior);
  }
  if (analogyApplies(settings.analogy, use)) out = new AnalogyIndex(out);
  return out;
}

/** The usage table of a stored version, from its own points. */
export async function usageTableOf(index: Pick<StoreIndex, 'theoremUses'>): Promise<UsageTable> {
  const theorems = await index.theoremUses();
  return new UsageTable(
    theorems.map((t) => ({ name: t.name, kind: 'theorem', uses: t.uses })),
    isTheorem,
  );
}

/** An `IndexRegistry` `wrap`: the re-ranking above over every opened version, one usage table
 * per version (read once, shared by both uses). */
export function rerankWrap(settings: RerankSettings = DEFAULT_RERANK): (index: StoreIndex, use: RetrievalUse) => Promise<PremiseIndex> {
  const tables = new Map<string, Promise<UsageTable>>();
  return async (index, use) => {
    let table: Promise<UsageTable> | undefined;
    if (settings.usagePrior > 0) {
      table = tables.get(index.version);
      if (!table) {
        table = usageTableOf(index);
        table.catch(() => tables.delete(index.version));
        tables.set(index.version, table);
      }
    }
    return rerank(index, table ? await table : undefined, use, settings);
  };
}
