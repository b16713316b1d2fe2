// The production store: Qdrant. One collection per index version, with a named dense vector
// (`dense`, cosine; only when the version has an embedder) and a named sparse vector (`lexical`,
// with Qdrant's IDF modifier, so stored BM25F weights × idf reproduce BM25F). Payload indexes
// on name, kind, role, library, module and uses keep the filters cheap. Hybrid search is one
// Query API call: a dense and a sparse prefetch fused by RRF. A collection alias per library
// (`driftline-<library>`) is moved by one `updateCollectionAliases` call that deletes and
// creates it, which Qdrant applies atomically. Version records live in the collection's own
// metadata, so the store needs nothing beside Qdrant.
import { QdrantClient } from '@qdrant/js-client-rest';
import type { Declaration } from '../corpus';
import { prefetchLimit, RRF_DEFAULT_K } from '../fusion';
import {
  checkLibraryName,
  pointId,
  roleOf,
  VersionNotFoundError,
  type IndexStore,
  type StoreHit,
  type StorePoint,
  type StoreSearch,
  type TheoremUses,
  type VersionInfo,
} from './store';

const DENSE = 'dense';
const SPARSE = 'lexical';
const SCROLL_PAGE = 1000;

/**
 * The `k` to ask Qdrant's RRF for, so its fused scores equal `reciprocalRankFusion`'s.
 * Qdrant 1.19 (lib/segment/src/common/reciprocal_rank_fusion.rs) adds, per source, a point at
 * 0-based position p with weight w as 1 / ((p + 1) / w + k − 1); with w = 1 that is
 * 1 / (p + k), so its top hit scores 1/k. Ours is 1 / (k + rank) with rank from 1, 1/61 at the
 * top for k = 60. Hence Qdrant's k must be ours + 1. (Qdrant's own default, when no k is sent,
 * is 2 — never rely on it.)
 */
export const QDRANT_RRF_K = RRF_DEFAULT_K + 1;

interface Payload {
  name: string;
  kind: string;
  role: string;
  library: string;
  module?: string;
  ord: number;
  uses: string[];
  decl: Declaration;
}

type Filter = { must?: unknown[]; must_not?: unknown[] };

export interface QdrantStoreOptions {
  url: string;
  apiKey?: string;
  /** Prefix of collection and alias names, so several deployments can share a cluster. */
  prefix?: string;
  timeoutMs?: number;
}

export class QdrantStore implements IndexStore {
  readonly kind = 'qdrant';
  readonly client: QdrantClient;
  private readonly prefix: string;

  constructor(opts: QdrantStoreOptions) {
    this.client = new QdrantClient({ url: opts.url, apiKey: opts.apiKey, timeout: opts.timeoutMs ?? 60_000, checkCompatibility: false });
    this.prefix = opts.prefix ?? 'driftline';
  }

  /** Collection name of a version. */
  collection(version: string): string {
    return `${this.prefix}-${version}`;
  }

  alias(library: string): string {
    checkLibraryName(library);
    return `${this.prefix}-${library}`;
  }

  async createVersion(info: VersionInfo): Promise<void> {
    const name = this.collection(info.version);
    if (!(await this.client.collectionExists(name)).exists) {
      try {
        await this.client.createCollection(name, {
          vectors: info.dimensions > 0 ? { [DENSE]: { size: info.dimensions, distance: 'Cosine' } } : {},
          sparse_vectors: { [SPARSE]: { modifier: 'idf' } },
          metadata: { driftline: info as unknown as Record<string, unknown> },
        });
      } catch (err) {
        // Two builders racing: the other one created it.
        if (!(await this.client.collectionExists(name)).exists) throw err;
      }
    }
    for (const [field, schema] of [
      ['name', 'keyword'],
      ['kind', 'keyword'],
      ['role', 'keyword'],
      ['library', 'keyword'],
      ['module', 'keyword'],
      ['uses', 'keyword'],
      ['ord', 'integer'],
    ] as const) {
      await this.client.createPayloadIndex(name, { field_name: field, field_schema: schema, wait: true });
    }
  }

  async getVersion(version: string): Promise<VersionInfo | undefined> {
    const name = this.collection(version);
    if (!(await this.client.collectionExists(name)).exists) return undefined;
    const c = await this.client.getCollection(name);
    return (c.config.metadata as { driftline?: VersionInfo } | null | undefined)?.driftline;
  }

  async listVersions(library?: string): Promise<VersionInfo[]> {
    const { collections } = await this.client.getCollections();
    const infos: VersionInfo[] = [];
    for (const c of collections) {
      if (!c.name.startsWith(`${this.prefix}-`)) continue;
      const info = await this.getVersion(c.name.slice(this.prefix.length + 1));
      if (info && (!library || info.library === library)) infos.push(info);
    }
    return infos.sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.version.localeCompare(b.version));
  }

  async markComplete(version: string): Promise<void> {
    const info = await this.getVersion(version);
    if (!info) throw new VersionNotFoundError(version);
    if (info.completedAt) return;
    await this.client.updateCollection(this.collection(version), {
      metadata: { driftline: { ...info, completedAt: new Date().toISOString() } as unknown as Record<string, unknown> },
    });
  }

  async deleteVersion(version: string): Promise<void> {
    const info = await this.getVersion(version);
    if (info && (await this.getAlias(info.library)) === version) {
      throw new Error(`version ${version} is the current one of library ${info.library}; promote another first`);
    }
    await this.client.deleteCollection(this.collection(version));
  }

  async upsert(version: string, points: readonly StorePoint[]): Promise<void> {
    if (points.length === 0) return;
    const info = await this.getVersion(version);
    if (!info) throw new VersionNotFoundError(version);
    await this.client.upsert(this.collection(version), {
      wait: true,
      points: points.map((p) => {
        const vector: Record<string, unknown> = { [SPARSE]: { indices: p.sparse.indices, values: p.sparse.values } };
        if (info.dimensions > 0) {
          if (p.dense?.length !== info.dimensions) {
            throw new Error(
              `point ${p.decl.name}: dense vector of ${p.dense?.length ?? 0} dimensions, version ${version} has ${info.dimensions}`,
            );
          }
          vector[DENSE] = Array.from(p.dense);
        }
        const payload: Payload = {
          name: p.decl.name,
          kind: p.decl.kind,
          role: roleOf(p.decl),
          library: info.library,
          ord: p.ord,
          uses: p.decl.uses,
          decl: p.decl,
        };
        if (p.decl.module) payload.module = p.decl.module;
        return { id: pointId(version, p.decl.name), vector: vector as never, payload: payload as unknown as Record<string, unknown> };
      }),
    });
  }

  async count(version: string): Promise<number> {
    return (await this.client.count(this.collection(version), { exact: true })).count;
  }

  private filter(req: StoreSearch): Filter {
    const must: unknown[] = [{ key: 'role', match: { value: req.role } }];
    if (req.only) must.push({ key: 'name', match: { any: [...req.only] } });
    const f: Filter = { must };
    if (req.exclude?.length) f.must_not = [{ key: 'name', match: { any: [...req.exclude] } }];
    return f;
  }

  async search(version: string, req: StoreSearch): Promise<StoreHit[]> {
    if (req.k <= 0) return [];
    if (req.only && req.only.length === 0) return [];
    if (!req.sparse && !req.dense) throw new Error('a search needs a sparse or a dense query vector');
    const filter = this.filter(req);
    const sparse = req.sparse ? { indices: req.sparse.indices, values: req.sparse.values } : undefined;
    const dense = req.dense ? Array.from(req.dense) : undefined;
    let res;
    if (sparse && dense) {
      const limit = prefetchLimit(req.k);
      res = await this.client.query(this.collection(version), {
        prefetch: [
          { query: dense, using: DENSE, filter, limit },
          { query: sparse, using: SPARSE, filter, limit },
        ],
        // Equal weights, so no `weights` are sent; see QDRANT_RRF_K for the constant.
        query: { rrf: { k: QDRANT_RRF_K } },
        limit: req.k,
        with_payload: true,
      });
    } else {
      res = await this.client.query(this.collection(version), {
        query: (dense ?? sparse)!,
        using: dense ? DENSE : SPARSE,
        filter,
        limit: req.k,
        with_payload: true,
      });
    }
    return (
      res.points
        .map((p) => ({ decl: (p.payload as unknown as Payload).decl, score: p.score, ord: (p.payload as unknown as Payload).ord }))
        // Sparse matches score > 0 by construction; a dense-only search keeps negative cosines,
        // as the embedded store does (top-k by similarity, whatever its sign).
        .filter((h) => dense !== undefined || h.score > 0)
        .sort((a, b) => b.score - a.score || a.ord - b.ord)
        .map(({ decl, score }) => ({ decl, score }))
    );
  }

  async get(version: string, names: readonly string[]): Promise<Map<string, Declaration>> {
    const out = new Map<string, Declaration>();
    if (names.length === 0) return out;
    const points = await this.client.retrieve(this.collection(version), {
      ids: names.map((n) => pointId(version, n)),
      with_payload: true,
      with_vector: false,
    });
    for (const p of points) {
      const decl = (p.payload as unknown as Payload).decl;
      out.set(decl.name, decl);
    }
    return out;
  }

  async theoremsUsing(version: string, names: readonly string[], exclude: readonly string[] = []): Promise<Declaration[]> {
    if (names.length === 0) return [];
    const filter: Filter = {
      must: [
        { key: 'role', match: { value: 'theorem' } },
        { key: 'uses', match: { any: [...names] } },
      ],
    };
    if (exclude.length) filter.must_not = [{ key: 'name', match: { any: [...exclude] } }];
    const found: Payload[] = [];
    let offset: string | number | undefined;
    for (;;) {
      const page = await this.client.scroll(this.collection(version), {
        filter,
        limit: SCROLL_PAGE,
        offset,
        with_payload: true,
        with_vector: false,
      });
      for (const p of page.points) found.push(p.payload as unknown as Payload);
      const next = page.next_page_offset;
      if (next === null || next === undefined || typeof next === 'object') break;
      offset = next;
    }
    return found.sort((a, b) => a.ord - b.ord).map((p) => p.decl);
  }

  async theoremUses(version: string): Promise<TheoremUses[]> {
    const filter: Filter = { must: [{ key: 'role', match: { value: 'theorem' } }] };
    const found: { name: string; uses: string[]; ord: number; module?: string }[] = [];
    let offset: string | number | undefined;
    for (;;) {
      const page = await this.client.scroll(this.collection(version), {
        filter,
        limit: SCROLL_PAGE,
        offset,
        with_payload: { include: ['name', 'uses', 'ord', 'module'] },
        with_vector: false,
      });
      for (const p of page.points) {
        const { name, uses, ord, module } = p.payload as unknown as Pick<Payload, 'name' | 'uses' | 'ord' | 'module'>;
        found.push({ name, uses: uses ?? [], ord, ...(module ? { module } : {}) });
      }
      const next = page.next_page_offset;
      if (next === null || next === undefined || typeof next === 'object') break;
      offset = next;
    }
    return found.sort((a, b) => a.ord - b.ord).map(({ name, uses, module }) => (module ? { name, uses, module } : { name, uses }));
  }

  async getAlias(library: string): Promise<string | undefined> {
    const alias = this.alias(library);
    const { aliases } = await this.client.getAliases();
    const hit = aliases.find((a) => a.alias_name === alias);
    return hit ? hit.collection_name.slice(this.prefix.length + 1) : undefined;
  }

  async setAlias(library: string, version: string): Promise<void> {
    const info = await this.getVersion(version);
    if (!info) throw new VersionNotFoundError(version);
    if (info.library !== library) throw new Error(`version ${version} belongs to library ${info.library}, not ${library}`);
    const alias = this.alias(library);
    // One call, applied atomically: searches through the alias see the old or the new version.
    await this.client.updateCollectionAliases({
      actions: [
        { delete_alias: { alias_name: alias } },
        { create_alias: { alias_name: alias, collection_name: this.collection(version) } },
      ],
    });
  }

  async close(): Promise<void> {
    // The REST client holds no connection that needs closing.
  }
}
