// A dense embedder for tests that ranks differently from the sparse side: it knows synonyms
// the lexical index cannot (a query saying "cardinality" is near `Finset.card`, "indivisible"
// near `Nat.Prime`), and shares neither its tokenizer nor its hash. Each vector is one weight per
// concept whose trigger words occur in the text, plus a faint hash of the text so that no two
// texts tie; L2-normalised.
import { createHash } from 'node:crypto';
import type { EmbedKind, Embedder } from '../../engines/retrieval/embedder';

export const CONCEPTS: Record<string, readonly string[]> = {
  counting: ['cardinality', 'how many', 'number of elements', 'card'],
  primality: ['indivisible', 'prime'],
  order: ['period', 'order'],
  modular: ['residue', 'modulo', 'zmod'],
};

const HASH_DIMS = 8;

export class ConceptEmbedder implements Embedder {
  readonly id = 'test:concepts-v1';
  readonly dimensions = Object.keys(CONCEPTS).length + HASH_DIMS;
  calls = 0;

  vector(text: string): Float32Array {
    const lower = text.toLowerCase();
    const v = new Float32Array(this.dimensions);
    Object.values(CONCEPTS).forEach((triggers, i) => {
      v[i] = triggers.filter((t) => lower.includes(t)).length;
    });
    const digest = createHash('sha256').update(text).digest();
    for (let i = 0; i < HASH_DIMS; i++) v[Object.keys(CONCEPTS).length + i] = (digest[i]! / 255) * 0.05;
    let norm = 0;
    for (const x of v) norm += x * x;
    norm = Math.sqrt(norm) || 1;
    for (let i = 0; i < v.length; i++) v[i]! /= norm;
    return v;
  }

  async embed(texts: string[], _opts?: { kind?: EmbedKind; signal?: AbortSignal }): Promise<Float32Array[]> {
    this.calls++;
    return texts.map((t) => this.vector(t));
  }
}
