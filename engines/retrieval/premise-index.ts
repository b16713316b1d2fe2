// The index contract the retrieve and illustrate stages use. Premises (what the formalizer
// needs) are the non-theorem declarations: gold dependencies are never theorems. Theorems are
// searched separately: they are the examples of usage.
import type { Declaration } from './corpus';

export interface Hit {
  decl: Declaration;
  score: number;
}

export interface SearchOptions {
  /** Full names never to return. */
  exclude?: readonly string[];
}

/** A searchable library. Asynchronous, because most implementations ask a store (embedded
 * on disk, or Qdrant over HTTP) and an embedder: `StoreIndex` (stores/store-index.ts) on the
 * service path, the in-memory references in eval/ for evaluation and benchmarks. */
export interface PremiseIndex {
  readonly library: string;
  /** Number of declarations. */
  readonly size: number;
  /** `lexical` when no embedder is involved; otherwise a short description (e.g. hybrid …). */
  readonly kind: 'lexical' | string;
  /** Non-theorem declarations most similar to the query, best first. */
  searchPremises(query: string, k: number, opts?: SearchOptions): Promise<Hit[]>;
  /** Theorems most similar to the query, best first. */
  searchTheorems(query: string, k: number, opts?: SearchOptions): Promise<Hit[]>;
  /** Similarity of the query to each named theorem (0 when unknown or not similar at all),
   * so illustration can rank its candidates without searching the whole library. */
  scoreTheorems(query: string, names: readonly string[]): Promise<Map<string, number>>;
  get(name: string): Promise<Declaration | undefined>;
  /** Theorems whose `uses` include at least one of the names, in corpus order. */
  theoremsUsing(names: readonly string[], opts?: SearchOptions): Promise<Declaration[]>;
  /** Names of the theorems declared in the source file (module) of any of the named
   * declarations, in corpus order; a declaration without a module has no file. The `file`
   * leave-out policy (leave-out.ts) hides these. */
  sameFileTheorems(names: readonly string[]): Promise<string[]>;
}
