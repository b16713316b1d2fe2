// The lexical side of a stored index: BM25F as sparse vectors, so any store with sparse vectors
// and an IDF modifier (Qdrant's `modifier: "idf"`, or the embedded store's own postings) ranks
// exactly like BM25F. A document's vector holds, per token, the saturated field-weighted term
// frequency tf̃ / (k1 + tf̃) (the same quantity `Bm25Index` precomputes, from the same functions
// in bm25.ts); the store multiplies by `idf` (bm25.ts) at query time, over the whole version. A query's
// vector holds the count of each token. Tokens become indices by a 32-bit FNV-1a hash.
//
// tf̃ needs each field's average length over the corpus, which a batched build cannot see from
// one batch: `corpusStats` computes them first (one pass), and every batch uses them.
import { averageFieldLengths, saturate, weightedTermFrequencies, type Bm25Params } from '../bm25';
import { isTheorem, type Declaration } from '../corpus';
import { tokenize } from '../lean-tokenize';
import { declarationDocument, DEFAULT_PREMISE_PARAMS, DEFAULT_THEOREM_PARAMS } from '../bm25-fields';

export interface SparseVector {
  /** Unique, ascending. */
  indices: number[];
  values: number[];
}

/** Average field lengths per side (premises, theorems), as LexicalIndex keeps them apart. */
export interface CorpusStats {
  premises: Record<string, number>;
  theorems: Record<string, number>;
}

export function tokenHash(token: string): number {
  let h = 0x811c9dc5;
  for (const byte of Buffer.from(token, 'utf8')) {
    h ^= byte;
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

function paramsFor(decl: Declaration): Bm25Params {
  return isTheorem(decl) ? DEFAULT_THEOREM_PARAMS : DEFAULT_PREMISE_PARAMS;
}

export function corpusStats(declarations: readonly Declaration[]): CorpusStats {
  // Documents are made one at a time, so a large corpus never holds all its tokens at once.
  function* documents(theorems: boolean) {
    for (const d of declarations) if (isTheorem(d) === theorems) yield declarationDocument(d);
  }
  return {
    premises: averageFieldLengths(documents(false), Object.keys(DEFAULT_PREMISE_PARAMS.fields)),
    theorems: averageFieldLengths(documents(true), Object.keys(DEFAULT_THEOREM_PARAMS.fields)),
  };
}

function fromMap(m: Map<number, number>): SparseVector {
  const indices = [...m.keys()].sort((a, b) => a - b);
  return { indices, values: indices.map((i) => m.get(i)!) };
}

/** The document side: BM25F weights before idf. */
export function sparseDocument(decl: Declaration, stats: CorpusStats): SparseVector {
  const params = paramsFor(decl);
  const avgs = isTheorem(decl) ? stats.theorems : stats.premises;
  const tf = new Map<number, number>();
  // Tokens whose hashes collide share one index: their frequencies add up before saturation.
  for (const [t, v] of weightedTermFrequencies(declarationDocument(decl), params, avgs)) {
    const i = tokenHash(t);
    tf.set(i, (tf.get(i) ?? 0) + v);
  }
  for (const [i, v] of tf) tf.set(i, saturate(v, params.k1));
  return fromMap(tf);
}

/** The query side: token counts. */
export function sparseQuery(text: string): SparseVector {
  const m = new Map<number, number>();
  for (const t of tokenize(text)) {
    const i = tokenHash(t);
    m.set(i, (m.get(i) ?? 0) + 1);
  }
  return fromMap(m);
}
