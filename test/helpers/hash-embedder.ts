// A tiny deterministic embedder for tests and benchmarks: hashed bag of Lean tokens in 64
// dimensions, L2-normalised. Texts sharing tokens get similar vectors, so dense search behaves
// plausibly, with no model and no network.
import type { EmbedKind, Embedder } from '../../engines/retrieval/embedder';
import { tokenize } from '../../engines/retrieval/lean-tokenize';
import { tokenHash } from '../../engines/retrieval/stores/sparse';

export class HashEmbedder implements Embedder {
  readonly id: string;
  calls = 0;
  texts = 0;
  constructor(
    readonly dimensions = 64,
    id?: string,
  ) {
    this.id = id ?? `test:hash-bag-${dimensions}`;
  }

  vector(text: string): Float32Array {
    const v = new Float32Array(this.dimensions);
    for (const t of tokenize(text)) {
      const h = tokenHash(t);
      v[h % this.dimensions]! += h & 0x10000 ? 1 : -1;
    }
    let norm = 0;
    for (const x of v) norm += x * x;
    norm = Math.sqrt(norm) || 1;
    for (let i = 0; i < v.length; i++) v[i]! /= norm;
    return v;
  }

  async embed(texts: string[], _opts?: { kind?: EmbedKind; signal?: AbortSignal }): Promise<Float32Array[]> {
    this.calls++;
    this.texts += texts.length;
    return texts.map((t) => this.vector(t));
  }
}
