// Dense and hybrid search in memory: the lexical index plus one vector per premise (and, when
// asked, per theorem), searched by an exact cosine scan (a few thousand declarations take well
// under a millisecond) and fused with BM25 by reciprocal rank fusion. The stores put the same
// semantics behind a disk or a server; this is the in-memory reference that
// `driftline eval retrieval --in-memory` and bench/retrieval-eval.ts tune against (the service,
// and the evaluation by default, search a stored version).
import type { Declaration } from '../corpus';
import { isTheorem } from '../corpus';
import { denseDocumentText, type Embedder } from '../embedder';
import { prefetchLimit, RRF_DEFAULT_K, reciprocalRankFusion } from '../fusion';
import type { Hit, PremiseIndex, SearchOptions } from '../premise-index';
import type { LexicalIndex } from './lexical-index';

export type HybridMode = 'hybrid' | 'dense';

export interface HybridIndexOptions {
  /** `hybrid` (BM25 + dense, RRF) or `dense` only. */
  mode?: HybridMode;
  /** RRF constant (default 60). */
  rrfK?: number;
  /** Weight of the BM25 list in the fusion; the dense list has weight 1. */
  lexicalWeight?: number;
  /** Candidates each side contributes before fusion; default max(4k, 40). */
  prefetch?: (k: number) => number;
  /** Embed theorems too, so example search is dense/hybrid as well (costs a vector each). */
  theorems?: boolean;
  signal?: AbortSignal;
  /** Called after each batch of documents is embedded. */
  onProgress?: (done: number, total: number) => void;
}

interface DenseSide {
  decls: Declaration[];
  /** Row-major [n][dim], rows L2-normalised. */
  matrix: Float32Array;
}

function normalizeInto(dst: Float32Array, offset: number, v: Float32Array): void {
  let norm = 0;
  for (const x of v) norm += x * x;
  norm = Math.sqrt(norm) || 1;
  for (let i = 0; i < v.length; i++) dst[offset + i] = v[i]! / norm;
}

/** Exact cosine top-k over normalised rows. */
export function cosineTopK(
  side: { decls: readonly Declaration[]; matrix: Float32Array },
  dim: number,
  query: Float32Array,
  k: number,
  exclude?: ReadonlySet<string>,
): Hit[] {
  const q = new Float32Array(dim);
  normalizeInto(q, 0, query);
  const scored: { i: number; s: number }[] = [];
  for (let i = 0; i < side.decls.length; i++) {
    if (exclude?.has(side.decls[i]!.name)) continue;
    let s = 0;
    const o = i * dim;
    for (let j = 0; j < dim; j++) s += side.matrix[o + j]! * q[j]!;
    scored.push({ i, s });
  }
  scored.sort((a, b) => b.s - a.s || a.i - b.i);
  return scored.slice(0, Math.max(0, k)).map(({ i, s }) => ({ decl: side.decls[i]!, score: s }));
}

export class HybridIndex implements PremiseIndex {
  readonly kind: string;
  private readonly mode: HybridMode;

  private constructor(
    private readonly lexical: LexicalIndex,
    private readonly embedder: Embedder,
    private readonly premises: DenseSide,
    private readonly theorems: DenseSide | undefined,
    private readonly opts: HybridIndexOptions,
  ) {
    this.mode = opts.mode ?? 'hybrid';
    this.kind =
      this.mode === 'dense'
        ? `dense (${embedder.id}, exact cosine)`
        : `hybrid (dense ${embedder.id} + BM25, RRF k=${opts.rrfK ?? RRF_DEFAULT_K})`;
  }

  /** Embeds the library's premises (and theorems if asked) and keeps the vectors in memory. */
  static async build(
    lexical: LexicalIndex,
    declarations: readonly Declaration[],
    embedder: Embedder,
    opts: HybridIndexOptions = {},
  ): Promise<HybridIndex> {
    const premiseDecls = declarations.filter((d) => !isTheorem(d));
    const theoremDecls = opts.theorems ? declarations.filter((d) => isTheorem(d)) : [];
    const total = premiseDecls.length + theoremDecls.length;
    let done = 0;
    const embedSide = async (decls: Declaration[]): Promise<DenseSide> => {
      const dim = embedder.dimensions;
      const matrix = new Float32Array(decls.length * dim);
      const batch = 32;
      for (let i = 0; i < decls.length; i += batch) {
        const slice = decls.slice(i, i + batch);
        const vecs = await embedder.embed(slice.map(denseDocumentText), {
          kind: 'document',
          ...(opts.signal ? { signal: opts.signal } : {}),
        });
        vecs.forEach((v, j) => {
          if (v.length !== dim) throw new Error(`embedder ${embedder.id} returned ${v.length} dimensions, expected ${dim}`);
          normalizeInto(matrix, (i + j) * dim, v);
        });
        done += slice.length;
        opts.onProgress?.(done, total);
      }
      return { decls, matrix };
    };
    const premises = await embedSide(premiseDecls);
    const theorems = opts.theorems ? await embedSide(theoremDecls) : undefined;
    return new HybridIndex(lexical, embedder, premises, theorems, opts);
  }

  get library(): string {
    return this.lexical.library;
  }

  get size(): number {
    return this.lexical.size;
  }

  private async search(
    side: DenseSide,
    lexicalSearch: (q: string, k: number, o?: SearchOptions) => Promise<Hit[]>,
    query: string,
    k: number,
    opts?: SearchOptions,
  ): Promise<Hit[]> {
    if (k <= 0) return [];
    const exclude = opts?.exclude?.length ? new Set(opts.exclude) : undefined;
    const n = this.opts.prefetch ? this.opts.prefetch(k) : prefetchLimit(k);
    const [qv] = query.trim() === '' ? [undefined] : await this.embedder.embed([query], { kind: 'query' });
    const dense = qv ? cosineTopK(side, this.embedder.dimensions, qv, this.mode === 'dense' ? k : n, exclude) : [];
    if (this.mode === 'dense') return dense;
    const lexical = await lexicalSearch(query, n, opts);
    const byName = new Map<string, Declaration>();
    for (const h of [...dense, ...lexical]) byName.set(h.decl.name, h.decl);
    return reciprocalRankFusion(
      [{ ids: lexical.map((h) => h.decl.name), weight: this.opts.lexicalWeight ?? 1 }, { ids: dense.map((h) => h.decl.name) }],
      { k: this.opts.rrfK ?? RRF_DEFAULT_K, limit: k },
    ).map((f) => ({ decl: byName.get(f.id)!, score: f.score }));
  }

  searchPremises(query: string, k: number, opts?: SearchOptions): Promise<Hit[]> {
    return this.search(this.premises, (q, n, o) => this.lexical.searchPremises(q, n, o), query, k, opts);
  }

  searchTheorems(query: string, k: number, opts?: SearchOptions): Promise<Hit[]> {
    // Without theorem vectors, example search stays lexical (illustration mostly ranks by
    // premise coverage anyway).
    if (!this.theorems) return this.lexical.searchTheorems(query, k, opts);
    return this.search(this.theorems, (q, n, o) => this.lexical.searchTheorems(q, n, o), query, k, opts);
  }

  scoreTheorems(query: string, names: readonly string[]): Promise<Map<string, number>> {
    return this.lexical.scoreTheorems(query, names);
  }

  get(name: string): Promise<Declaration | undefined> {
    return this.lexical.get(name);
  }

  theoremsUsing(names: readonly string[], opts?: SearchOptions): Promise<Declaration[]> {
    return this.lexical.theoremsUsing(names, opts);
  }

  sameFileTheorems(names: readonly string[]): Promise<string[]> {
    return this.lexical.sameFileTheorems(names);
  }
}
