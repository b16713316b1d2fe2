// The dense side of retrieval: anything that turns text into vectors. Implementations: an
// OpenAI-compatible `/v1/embeddings` endpoint, or a local model loaded from files on disk.

export type EmbedKind = 'query' | 'document';

export interface Embedder {
  /** Stable identity, part of an index's version name so vectors of different models never
   * mix, e.g. `openai:text-embedding-3-small` or `local:bge-small-en-v1.5`. */
  readonly id: string;
  readonly dimensions: number;
  /** One vector per text, in order. Queries and documents may be embedded differently. */
  embed(texts: string[], opts?: { kind?: EmbedKind; signal?: AbortSignal }): Promise<Float32Array[]>;
}
