// The re-ranking the service puts over every stored index version, and the one
// `driftline eval retrieval` measures by default: the store's BM25F (or hybrid) premise ranking
// fused with the library's evidence (premise-fusion.ts): what the best-matching definitions are
// built from, what similar theorems use and, where asked, the usage prior. The usage table
// comes from the version's own points (every theorem's `uses`), so it always matches the
// version searched, whatever happened to the corpus file since.
//
// The weights depend on how the ranking is used. Monolithic retrieval (top-k for the whole
// statement) gets the fusion tuned on ConNF dev (premise-fusion.ts; docs/retrieval-evaluation.md).
// DRIFT retrieval keeps only the top-1 premise per sub-query and keeps the usage prior alone:
// a short sub-query often matches many definitions equally and the prior prefers the ones the
// library leans on, while the votes of definitions and theorems (what the whole neighbourhood
// uses) could replace the one concept asked for. That cannot be measured without an LLM to
// decompose the benchmark, so DRIFT runs without them until it is (`--drift-analogy` in the
// evaluation turns them on there).
import { isTheorem } from './corpus';
import type { PremiseIndex } from './premise-index';
import { DEFAULT_FUSION, FusionIndex, type FusionWeights } from './premise-fusion';
import type { StoreIndex } from './stores/store-index';
import { DEFAULT_USAGE_PRIOR, UsageTable } from './usage-prior';

/** How the ranking is used: top-k for the whole statement, or top-1 per DRIFT sub-query. */
export type RetrievalUse = 'monolithic' | 'drift';

/** The fusion weights per use (0 turns a part off). */
export type RerankSettings = Record<RetrievalUse, FusionWeights>;

export const DEFAULT_RERANK: RerankSettings = {
  monolithic: { definitions: DEFAULT_FUSION.definitions, analogy: DEFAULT_FUSION.analogy, usagePrior: DEFAULT_FUSION.usagePrior },
  drift: { definitions: 0, analogy: 0, usagePrior: DEFAULT_USAGE_PRIOR },
};

/** The wrapper over `index` for one use (the usage table is needed when α > 0). */
export function rerank(
  index: PremiseIndex,
  table: UsageTable | undefined,
  use: RetrievalUse,
  settings: RerankSettings = DEFAULT_RERANK,
): PremiseIndex {
  const weights = settings[use];
  if (!(weights.definitions > 0) && !(weights.analogy > 0) && !(weights.usagePrior > 0)) return index;
  return new FusionIndex(index, weights, weights.usagePrior > 0 ? table : undefined);
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
    if (settings[use].usagePrior > 0) {
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
