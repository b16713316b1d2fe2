// The dense side of retrieval: anything that turns text into vectors. Implementations: an
// OpenAI-compatible `/v1/embeddings` endpoint, or a local model loaded from files on disk.
import type { Declaration } from './corpus';

export type EmbedKind = 'query' | 'document';

export interface Embedder {
  /** Stable identity, part of an index's version name so vectors of different models never
   * mix, e.g. `openai:text-embedding-3-small` or `local:bge-small-en-v1.5`. */
  readonly id: string;
  readonly dimensions: number;
  /** One vector per text, in order. Queries and documents may be embedded differently. */
  embed(texts: string[], opts?: { kind?: EmbedKind; signal?: AbortSignal }): Promise<Float32Array[]>;
}

/** The text a dense embedder sees for a declaration (name, statement, docstring, description):
 * the same for index builds in a store and for the in-memory hybrid index. */
export function denseDocumentText(decl: Pick<Declaration, 'name' | 'signature' | 'docstring' | 'informal'>): string {
  const parts = [decl.name, decl.signature];
  if (decl.docstring) parts.push(decl.docstring);
  if (decl.informal) parts.push(decl.informal);
  return parts.join('\n').slice(0, 4000);
}
