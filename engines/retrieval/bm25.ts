// BM25F over documents with weighted fields. Each field's term frequency is length-normalised
// against that field's average length and weighted, then the weighted sum goes through BM25's
// saturation once (Robertson & Zaragoza, "The Probabilistic Relevance Framework", §3.6).
// Everything that does not depend on the query is precomputed at build time, so a search is
// one pass over the postings of the query's terms. The index takes tokens, not text: the
// caller owns tokenization, and a loaded index needs no tokenizer to be consistent.
// The weighting (averageFieldLengths, weightedTermFrequencies, saturate, idf) is exported: the
// stores' sparse vectors (stores/sparse.ts) are built from the same functions.

export interface FieldParams {
  /** How much one occurrence in this field counts (name ≫ informal text). */
  weight: number;
  /** Length normalisation, 0 (none) … 1 (full). */
  b: number;
}

export interface Bm25Params {
  k1: number;
  fields: Record<string, FieldParams>;
}

/** A document as the index sees it: tokens per field. Fields missing from `params` are ignored. */
export type Bm25Document = Record<string, readonly string[]>;

export interface Bm25Json {
  format: 'bm25f/1';
  params: Bm25Params;
  size: number;
  /** term → [doc indexes ascending, pseudo-frequencies] */
  postings: Record<string, [number[], number[]]>;
}

export interface Bm25Hit {
  doc: number;
  score: number;
}

interface Posting {
  docs: Uint32Array;
  /** Saturated contribution per doc: tf̃ / (k1 + tf̃), multiplied by idf at query time. */
  weights: Float64Array;
  idf: number;
}

/** Each field's average length (in tokens) over the documents: BM25F's length normalisation. */
export function averageFieldLengths(docs: Iterable<Bm25Document>, fields: readonly string[]): Record<string, number> {
  const totals: Record<string, number> = Object.fromEntries(fields.map((f) => [f, 0]));
  let count = 0;
  for (const d of docs) {
    count++;
    for (const f of fields) totals[f]! += d[f]?.length ?? 0;
  }
  return Object.fromEntries(fields.map((f) => [f, count > 0 ? totals[f]! / count : 0]));
}

/** tf̃(t, d) = Σ_f w_f · tf_f / (1 − b_f + b_f · len_f / avglen_f), per term of the document. */
export function weightedTermFrequencies(
  doc: Bm25Document,
  params: Bm25Params,
  avgLen: Readonly<Record<string, number>>,
): Map<string, number> {
  const tf = new Map<string, number>();
  for (const [f, { weight, b }] of Object.entries(params.fields)) {
    const tokens = doc[f];
    if (!tokens || tokens.length === 0) continue;
    const avg = avgLen[f] || 1;
    const unit = weight / (1 - b + (b * tokens.length) / avg);
    for (const t of tokens) tf.set(t, (tf.get(t) ?? 0) + unit);
  }
  return tf;
}

/** BM25's saturation of a (field-weighted) term frequency. */
export function saturate(tf: number, k1: number): number {
  return tf / (k1 + tf);
}

/** Lucene's "plus one" idf (also Qdrant's IDF modifier): never negative, so very common terms
 * still count a little. */
export function idf(n: number, df: number): number {
  return Math.log(1 + (n - df + 0.5) / (df + 0.5));
}

export class Bm25Index {
  private constructor(
    readonly params: Bm25Params,
    readonly size: number,
    private readonly postings: Map<string, Posting>,
    /** Pseudo-frequencies as built, kept for serialisation. */
    private readonly raw: Map<string, [number[], number[]]>,
  ) {}

  static build(docs: readonly Bm25Document[], params: Bm25Params): Bm25Index {
    const avgLen = averageFieldLengths(docs, Object.keys(params.fields));
    const raw = new Map<string, [number[], number[]]>();
    docs.forEach((doc, i) => {
      for (const [t, v] of weightedTermFrequencies(doc, params, avgLen)) {
        let p = raw.get(t);
        if (!p) raw.set(t, (p = [[], []]));
        p[0].push(i);
        p[1].push(v);
      }
    });
    return new Bm25Index(params, docs.length, compile(raw, docs.length, params.k1), raw);
  }

  static fromJSON(json: Bm25Json): Bm25Index {
    if (json.format !== 'bm25f/1') throw new Error(`unsupported BM25 index format ${String(json.format)}`);
    const raw = new Map(Object.entries(json.postings));
    return new Bm25Index(json.params, json.size, compile(raw, json.size, json.params.k1), raw);
  }

  toJSON(): Bm25Json {
    return { format: 'bm25f/1', params: this.params, size: this.size, postings: Object.fromEntries(this.raw) };
  }

  /** The score of every document for a query; repeated query terms count once per repeat. */
  scores(queryTokens: readonly string[]): Float64Array {
    const out = new Float64Array(this.size);
    const qtf = new Map<string, number>();
    for (const t of queryTokens) qtf.set(t, (qtf.get(t) ?? 0) + 1);
    for (const [t, n] of qtf) {
      const p = this.postings.get(t);
      if (!p) continue;
      const scale = p.idf * n;
      for (let j = 0; j < p.docs.length; j++) out[p.docs[j]!]! += scale * p.weights[j]!;
    }
    return out;
  }

  /** The k best documents with a positive score, best first; ties by document index. */
  search(queryTokens: readonly string[], k: number, skip?: (doc: number) => boolean): Bm25Hit[] {
    if (k <= 0) return [];
    const scores = this.scores(queryTokens);
    const hits: Bm25Hit[] = [];
    for (let i = 0; i < scores.length; i++) {
      const s = scores[i]!;
      if (s > 0 && !(skip && skip(i))) hits.push({ doc: i, score: s });
    }
    hits.sort((a, b) => b.score - a.score || a.doc - b.doc);
    return hits.slice(0, k);
  }

  /** Number of documents containing the term (for tests and diagnostics). */
  docFreq(term: string): number {
    return this.postings.get(term)?.docs.length ?? 0;
  }
}

function compile(raw: Map<string, [number[], number[]]>, n: number, k1: number): Map<string, Posting> {
  const out = new Map<string, Posting>();
  for (const [t, [docs, tfs]] of raw) {
    out.set(t, {
      docs: Uint32Array.from(docs),
      weights: Float64Array.from(tfs, (v) => saturate(v, k1)),
      idf: idf(n, docs.length),
    });
  }
  return out;
}
