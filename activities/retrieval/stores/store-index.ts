// A PremiseIndex over one stored version: the query becomes a sparse (BM25F) vector and, when the
// version was built with an embedder, a dense one too; the store searches and fuses them (RRF).
import type { Declaration } from '../corpus';
import type { Embedder } from '../embedder';
import type { Hit, PremiseIndex, SearchOptions } from '../premise-index';
import { sparseQuery } from './sparse';
import type { IndexStore, Role, StoreSearch, VersionInfo } from './store';

export class EmbedderMismatchError extends Error {
  constructor(info: VersionInfo, configured: string | undefined) {
    super(
      `index version ${info.version} holds vectors of embedder ${info.embedder}, but ${configured ? `embedder ${configured} is` : 'no embedder is'} configured; ` +
        `configure ${info.embedder}, or build and promote a version for the configured embedder (driftline index build)`,
    );
    this.name = 'EmbedderMismatchError';
  }
}

export class StoreIndex implements PremiseIndex {
  readonly library: string;
  readonly version: string;
  readonly kind: string;
  private readonly embedder?: Embedder;

  constructor(
    private readonly store: IndexStore,
    readonly info: VersionInfo,
    embedder?: Embedder,
  ) {
    this.library = info.library;
    this.version = info.version;
    if (info.dimensions > 0) {
      // Vectors of two models never meet: the query must be embedded by the version's model.
      if (!embedder || embedder.id !== info.embedder) throw new EmbedderMismatchError(info, embedder?.id);
      this.embedder = embedder;
      this.kind = `hybrid (dense ${embedder.id} + BM25, RRF) in the ${store.kind} store`;
    } else {
      this.kind = 'lexical';
    }
  }

  get size(): number {
    return this.info.expected;
  }

  private async request(role: Role, query: string, k: number, opts: SearchOptions & { only?: readonly string[] } = {}): Promise<StoreSearch> {
    const req: StoreSearch = { role, k, sparse: sparseQuery(query) };
    if (opts.exclude?.length) req.exclude = opts.exclude;
    if (opts.only) req.only = opts.only;
    if (this.embedder && query.trim() !== '') [req.dense] = await this.embedder.embed([query], { kind: 'query' });
    return req;
  }

  async searchPremises(query: string, k: number, opts?: SearchOptions): Promise<Hit[]> {
    return this.store.search(this.version, await this.request('premise', query, k, opts));
  }

  async searchTheorems(query: string, k: number, opts?: SearchOptions): Promise<Hit[]> {
    return this.store.search(this.version, await this.request('theorem', query, k, opts));
  }

  async scoreTheorems(query: string, names: readonly string[]): Promise<Map<string, number>> {
    const out = new Map<string, number>(names.map((n) => [n, 0]));
    if (names.length === 0) return out;
    const hits = await this.store.search(this.version, await this.request('theorem', query, names.length, { only: names }));
    for (const h of hits) out.set(h.decl.name, h.score);
    return out;
  }

  async get(name: string): Promise<Declaration | undefined> {
    return (await this.store.get(this.version, [name])).get(name);
  }

  async theoremsUsing(names: readonly string[], opts?: SearchOptions): Promise<Declaration[]> {
    return this.store.theoremsUsing(this.version, names, opts?.exclude ?? []);
  }
}
