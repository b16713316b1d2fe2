// Re-ranking wrappers over any PremiseIndex share this delegation. Its own module, importing
// types only, so the wrappers and the lexical index (which uses the prior) import no cycle.
import type { Declaration } from './corpus';
import type { Hit, PremiseIndex, SearchOptions } from './premise-index';

/** Base of the re-ranking wrappers (usage prior, analogy): everything but premise search is
 * the wrapped index's, so a wrapper states only how it re-ranks. */
export abstract class PremiseReranker implements PremiseIndex {
  abstract readonly kind: string;

  constructor(protected readonly inner: PremiseIndex) {}

  get library(): string {
    return this.inner.library;
  }

  get size(): number {
    return this.inner.size;
  }

  abstract searchPremises(query: string, k: number, opts?: SearchOptions): Promise<Hit[]>;

  searchTheorems(query: string, k: number, opts?: SearchOptions): Promise<Hit[]> {
    return this.inner.searchTheorems(query, k, opts);
  }

  scoreTheorems(query: string, names: readonly string[]): Promise<Map<string, number>> {
    return this.inner.scoreTheorems(query, names);
  }

  get(name: string): Promise<Declaration | undefined> {
    return this.inner.get(name);
  }

  theoremsUsing(names: readonly string[], opts?: SearchOptions): Promise<Declaration[]> {
    return this.inner.theoremsUsing(names, opts);
  }

  sameFileTheorems(names: readonly string[]): Promise<string[]> {
    return this.inner.sameFileTheorems(names);
  }
}
