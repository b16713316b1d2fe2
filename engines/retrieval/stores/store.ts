// The store contract: where built index versions live, however they are stored (embedded on
// disk, or Qdrant). A version is one collection of points, one point per declaration, with its
// payload, a sparse (lexical BM25F) vector and, when an embedder was used, a dense vector. A
// stable alias per library names the version in use and moves atomically. Point IDs are
// derived from version + name, so upserting a batch twice (a resumed build) never duplicates.
import { createHash } from 'node:crypto';
import { isTheorem, type Declaration } from '../corpus';
import { TOKENIZER_VERSION } from '../lean-tokenize';
import type { CorpusStats, SparseVector } from './sparse';

/** Bump when the stored point layout, the sparse encoding or the field weights change. */
export const STORE_SCHEMA_VERSION = `s1t${TOKENIZER_VERSION}`;

export type Role = 'premise' | 'theorem';

export function roleOf(decl: Pick<Declaration, 'kind'>): Role {
  return isTheorem(decl) ? 'theorem' : 'premise';
}

export interface VersionInfo {
  version: string;
  library: string;
  /** Corpus revision: the first 12 hex digits of the corpus file's SHA-256. */
  revision: string;
  /** Embedder id, or `lexical`. */
  embedder: string;
  /** Dense vector size; 0 when lexical only. */
  dimensions: number;
  schema: string;
  /** Declarations the corpus holds: a build is complete when the store counts this many. */
  expected: number;
  stats: CorpusStats;
  createdAt: string;
  /** Set once every point is stored and counted. */
  completedAt?: string;
  /** An approximate dense index the store built at completion (embedded store, large versions). */
  denseIndex?: { kind: 'ivf_flat'; partitions: number; nprobes: number };
}

export interface StorePoint {
  decl: Declaration;
  /** Position in the corpus (theoremsUsing answers in corpus order). */
  ord: number;
  sparse: SparseVector;
  dense?: Float32Array;
}

export interface StoreSearch {
  role: Role;
  k: number;
  sparse?: SparseVector;
  /** With `sparse`: both searched and fused by RRF; alone: dense only. */
  dense?: Float32Array;
  /** Full names never to return. */
  exclude?: readonly string[];
  /** Only these names may be returned (ranking a known candidate set). */
  only?: readonly string[];
}

export interface StoreHit {
  decl: Declaration;
  score: number;
}

export interface TheoremUses {
  name: string;
  uses: readonly string[];
  /** The theorem's module (source file), where the corpus has it. */
  module?: string;
}

export interface IndexStore {
  readonly kind: 'embedded' | 'qdrant';
  /** Creates the version's collection and records its info; a no-op when it exists. */
  createVersion(info: VersionInfo): Promise<void>;
  getVersion(version: string): Promise<VersionInfo | undefined>;
  /** Versions of one library (or all), oldest first. */
  listVersions(library?: string): Promise<VersionInfo[]>;
  /** Records that a build finished (sets completedAt). */
  markComplete(version: string): Promise<void>;
  deleteVersion(version: string): Promise<void>;
  /** Inserts or replaces points by their deterministic IDs. */
  upsert(version: string, points: readonly StorePoint[]): Promise<void>;
  count(version: string): Promise<number>;
  search(version: string, req: StoreSearch): Promise<StoreHit[]>;
  /** Declarations by full name; unknown names are absent from the map. */
  get(version: string, names: readonly string[]): Promise<Map<string, Declaration>>;
  /** Theorems whose `uses` meet the names, in corpus order, without the excluded names. */
  theoremsUsing(version: string, names: readonly string[], exclude?: readonly string[]): Promise<Declaration[]>;
  /** Every theorem's name and uses, in corpus order (what the usage prior counts). */
  theoremUses(version: string): Promise<TheoremUses[]>;
  getAlias(library: string): Promise<string | undefined>;
  /** Points the library's alias at the version, atomically: readers see the old or the new. */
  setAlias(library: string, version: string): Promise<void>;
  close(): Promise<void>;
}

/** A UUID (version 5 layout) from version + name: the same point always gets the same ID. */
export function pointId(version: string, name: string): string {
  const h = createHash('sha1').update(`driftline-point\u0000${version}\u0000${name}`).digest();
  h[6] = (h[6]! & 0x0f) | 0x50;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20, 32)}`;
}

export function checkLibraryName(library: string): void {
  // The name becomes part of directory, table and collection names: no separators, no `..`.
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(library)) {
    throw new Error(`library name "${library}" must be letters, digits, '.', '_' or '-' (it names collections and directories)`);
  }
}

/** `lexical`, or a readable slug of the embedder id plus a short hash of it (ids differing only
 * in punctuation never collide). */
export function embedderSlug(embedderId: string | undefined): string {
  if (!embedderId) return 'lexical';
  const readable = embedderId
    .replace(/[^A-Za-z0-9]+/g, '_')
    .replace(/^_|_$/g, '')
    .slice(0, 40);
  return `${readable}_${createHash('sha256').update(embedderId).digest('hex').slice(0, 6)}`;
}

/** `<library>-<revision>-<embedder>-<schema>`: a changed corpus, embedder or layout never
 * reuses (or mixes into) another version's collection. */
export function versionName(library: string, revision: string, embedderId: string | undefined): string {
  checkLibraryName(library);
  if (!/^[0-9a-f]{12}$/.test(revision)) throw new Error(`revision must be 12 hex digits, got "${revision}"`);
  return `${library}-${revision}-${embedderSlug(embedderId)}-${STORE_SCHEMA_VERSION}`;
}

export class VersionNotFoundError extends Error {
  constructor(version: string) {
    super(`index version ${version} does not exist; list versions with \`driftline index list\``);
    this.name = 'VersionNotFoundError';
  }
}
