// How a declaration becomes a BM25F document (its fields and their weights): one definition
// for the store's sparse vectors (stores/sparse.ts) and the in-memory lexical index.
import type { Bm25Document, Bm25Params } from './bm25';
import type { Declaration } from './corpus';
import { tokenize, tokenizeName } from './lean-tokenize';

/** Field weights, chosen by a small grid search on the ConNF development split
 * (bench/retrieval-eval.ts; F1@5 27.5 with all weights 1 and k1 = 1.2, 29.8 with these).
 * The name decides most: a query mentioning `ConNF.cloud` or "near-litter" should find it;
 * generated informal text and long signatures mention many other constants, so they count less.
 * A higher k1 lets repeated query terms keep adding, which long statements need. */
export const DEFAULT_PREMISE_PARAMS: Bm25Params = {
  k1: 2,
  fields: {
    name: { weight: 6, b: 0.75 },
    signature: { weight: 0.5, b: 0.75 },
    docstring: { weight: 0.5, b: 0.75 },
    informal: { weight: 0.5, b: 0.75 },
  },
};
export const DEFAULT_THEOREM_PARAMS: Bm25Params = DEFAULT_PREMISE_PARAMS;

export function declarationDocument(d: Declaration): Bm25Document {
  return {
    name: tokenizeName(d.name),
    signature: tokenize(d.signature),
    docstring: d.docstring ? tokenize(d.docstring) : [],
    informal: d.informal ? tokenize(d.informal) : [],
  };
}
