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

/** The part of an embedder's id that its query and document prefixes contribute: a short hash
 * of each prefix's text (prefixes change the vectors, so two different prefixes must never share
 * an id, a version name or cached vectors). '' without prefixes. */
export function prefixIdSuffix(prefixes: { queryPrefix?: string; documentPrefix?: string }): string {
  const q = prefixes.queryPrefix ? `+q${shortHash(prefixes.queryPrefix)}` : '';
  const d = prefixes.documentPrefix ? `+d${shortHash(prefixes.documentPrefix)}` : '';
  return q + d;
}

/** FNV-1a, 6 hex digits: enough to tell a handful of prefixes apart in an id. */
function shortHash(s: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193) >>> 0;
  return h.toString(16).padStart(8, '0').slice(0, 6);
}
