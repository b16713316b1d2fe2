// The lexical side of a stored index: BM25F as sparse vectors, so any store with sparse vectors
// and an IDF modifier (Qdrant's `modifier: "idf"`, or the embedded store's own postings) ranks
// exactly like BM25F. A document's vector holds, per token, the saturated field-weighted term
// frequency tf̃ / (k1 + tf̃) (the same quantity `Bm25Index` precomputes); the store multiplies by
// idf = ln(1 + (N − df + 0.5) / (df + 0.5)) at query time, over the whole version. A query's
// vector holds the count of each token. Tokens become indices by a 32-bit FNV-1a hash.
//
// tf̃ needs each field's average length over the corpus, which a batched build cannot see from
// one batch: `corpusStats` computes them first (one pass), and every batch uses them.
import type { Bm25Params } from '../bm25';
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
  const sums = { premises: {} as Record<string, number>, theorems: {} as Record<string, number> };
  const counts = { premises: 0, theorems: 0 };
  for (const d of declarations) {
    const side = isTheorem(d) ? 'theorems' : 'premises';
    counts[side]++;
    const doc = declarationDocument(d);
    for (const f of Object.keys(paramsFor(d).fields)) sums[side][f] = (sums[side][f] ?? 0) + (doc[f]?.length ?? 0);
  }
  const avg = (side: 'premises' | 'theorems') =>
    Object.fromEntries(Object.entries(sums[side]).map(([f, s]) => [f, counts[side] > 0 ? s / counts[side] : 0]));
  return { premises: avg('premises'), theorems: avg('theorems') };
}

function fromMap(m: Map<number, number>): SparseVector {
  const indices = [...m.keys()].sort((a, b) => a - b);
  return { indices, values: indices.map((i) => m.get(i)!) };
}

/** The document side: BM25F weights before idf. */
export function sparseDocument(decl: Declaration, stats: CorpusStats): SparseVector {
  const params = paramsFor(decl);
  const avgs = isTheorem(decl) ? stats.theorems : stats.premises;
  const doc = declarationDocument(decl);
  const tf = new Map<number, number>();
  for (const [f, { weight, b }] of Object.entries(params.fields)) {
    const tokens = doc[f];
    if (!tokens || tokens.length === 0) continue;
    const avg = avgs[f] || 1;
    const unit = weight / (1 - b + (b * tokens.length) / avg);
    for (const t of tokens) {
      const i = tokenHash(t);
      tf.set(i, (tf.get(i) ?? 0) + unit);
    }
  }
  for (const [i, v] of tf) tf.set(i, v / (params.k1 + v));
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

/** Lucene's "plus one" idf, the formula of Qdrant's IDF modifier. */
export function idf(n: number, df: number): number {
  return Math.log(1 + (n - df + 0.5) / (df + 0.5));
}
