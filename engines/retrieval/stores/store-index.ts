// A PremiseIndex over one stored version: the query becomes a sparse (BM25F) vector and, when the
// version was built with an embedder, a dense one too; the store searches and fuses them (RRF).
import type { Declaration } from '../corpus';
import type { Embedder } from '../embedder';
import { RRF_DEFAULT_K } from '../fusion';
import type { Hit, PremiseIndex, SearchOptions } from '../premise-index';
import { sparseQuery } from './sparse';
import type { IndexStore, Role, StoreSearch, TheoremUses, VersionInfo } from './store';

export class EmbedderMismatchError extends Error {
  constructor(info: VersionInfo, configured: string | undefined) {
    super(
      `index version ${info.version} holds vectors of embedder ${info.embedder}, but ${configured ? `embedder ${configured} is` : 'no embedder is'} configured; ` +
        `configure ${info.embedder}, or build and promote a version for the configured embedder (driftline index build)`,
    );
    this.name = 'EmbedderMismatchError';
  }
}

/** Which side(s) of a version a StoreIndex searches: both where the version has vectors
 * (`hybrid`, the default), or one of them (ablations: `lexical` works on any version). */
export type StoreSearchMode = 'hybrid' | 'dense' | 'lexical';

export class StoreIndex implements PremiseIndex {
  readonly library: string;
  readonly version: string;
  readonly kind: string;
  private readonly embedder?: Embedder;
  private readonly sparse: boolean;
  private modules?: Promise<Map<string, string[]>>;

  constructor(
    private readonly store: IndexStore,
    readonly info: VersionInfo,
    embedder?: Embedder,
    opts: { search?: StoreSearchMode } = {},
  ) {
    this.library = info.library;
    this.version = info.version;
    const mode = opts.search ?? (info.dimensions > 0 ? 'hybrid' : 'lexical');
    this.sparse = mode !== 'dense';
    if (mode !== 'lexical') {
      if (info.dimensions === 0)
        throw new Error(
          `index version ${info.version} has no dense vectors (built without an embedder); ${mode} search needs a version built with one`,
        );
      // Vectors of two models never meet: the query must be embedded by the version's model.
      if (!embedder || embedder.id !== info.embedder) throw new EmbedderMismatchError(info, embedder?.id);
      this.embedder = embedder;
      this.kind =
        mode === 'dense'
          ? `dense (${embedder.id}) in the ${store.kind} store`
          : `hybrid (dense ${embedder.id} + BM25, RRF k=${RRF_DEFAULT_K}) in the ${store.kind} store`;
    } else {
      // Only a version built without an embedder is plain `lexical` (the run notes then say that
      // no embedder is configured).
      this.kind = info.dimensions > 0 ? `lexical (BM25 side of ${info.embedder} version)` : 'lexical';
    }
  }

  /** Every theorem's name and uses in this version (the usage prior's table). */
  theoremUses(): Promise<TheoremUses[]> {
    return this.store.theoremUses(this.version);
  }

  get size(): number {
    return this.info.expected;
  }

  private async request(
    role: Role,
    query: string,
    k: number,
    opts: SearchOptions & { only?: readonly string[] } = {},
  ): Promise<StoreSearch> {
    const req: StoreSearch = { role, k };
    if (this.sparse) req.sparse = sparseQuery(query);
    if (opts.exclude?.length) req.exclude = opts.exclude;
    if (opts.only) req.only = opts.only;
    if (this.embedder && query.trim() !== '') [req.dense] = await this.embedder.embed([query], { kind: 'query' });
    return req;
  }

  private async run(req: StoreSearch): Promise<Hit[]> {
    // Dense only, with an empty query: nothing to search with.
    if (!req.sparse && !req.dense) return [];
    return this.store.search(this.version, req);
  }

  async searchPremises(query: string, k: number, opts?: SearchOptions): Promise<Hit[]> {
    return this.run(await this.request('premise', query, k, opts));
  }

  async searchTheorems(query: string, k: number, opts?: SearchOptions): Promise<Hit[]> {
    return this.run(await this.request('theorem', query, k, opts));
  }

  async scoreTheorems(query: string, names: readonly string[]): Promise<Map<string, number>> {
    const out = new Map<string, number>(names.map((n) => [n, 0]));
    if (names.length === 0) return out;
    const hits = await this.run(await this.request('theorem', query, names.length, { only: names }));
    for (const h of hits) out.set(h.decl.name, h.score);
    return out;
  }

  async get(name: string): Promise<Declaration | undefined> {
    return (await this.store.get(this.version, [name])).get(name);
  }

  async theoremsUsing(names: readonly string[], opts?: SearchOptions): Promise<Declaration[]> {
    return this.store.theoremsUsing(this.version, names, opts?.exclude ?? []);
  }

  async sameFileTheorems(names: readonly string[]): Promise<string[]> {
    const decls = await this.store.get(this.version, names);
    const modules = new Set([...decls.values()].map((d) => d.module).filter((m): m is string => m !== undefined));
    if (modules.size === 0) return [];
    const byModule = await this.theoremsByModule();
    return [...modules].flatMap((m) => byModule.get(m) ?? []);
  }

  /** Module → its theorems' names in corpus order, read once from the version's points (a
   * complete version never changes). */
  private theoremsByModule(): Promise<Map<string, string[]>> {
    if (!this.modules) {
      this.modules = this.store.theoremUses(this.version).then((theorems) => {
        const out = new Map<string, string[]>();
        for (const t of theorems) {
          if (t.module === undefined) continue;
          const list = out.get(t.module);
          if (list) list.push(t.name);
          else out.set(t.module, [t.name]);
        }
        return out;
      });
      this.modules.catch(() => (this.modules = undefined));
    }
    return this.modules;
  }
}
