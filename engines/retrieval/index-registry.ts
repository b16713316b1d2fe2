// The registry the activities open indexes from: per library, the version its alias names in
// the configured store (embedded or Qdrant), wrapped as a PremiseIndex. The alias is looked up
// on every `get`, so a promotion (after a durable build) takes effect at the next search, and a
// search sees one version from start to end. A library with no index at all is built here, in
// process, once (what `npm start` relies on); later versions come from `driftline index build`.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Embedder } from './embedder';
import type { PremiseIndex } from './premise-index';
import type { RetrievalUse } from './rerank';
import { buildInProcess, corpusRevision } from './stores/build';
import { EmbeddedStore } from './stores/embedded';
import { checkLibraryName, type IndexStore, type VersionInfo } from './stores/store';
import { StoreIndex } from './stores/store-index';

/** The subset of a pino logger used here. */
export interface IndexLog {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

export interface OpenedIndex {
  index: PremiseIndex;
  /** true when this call built (and promoted) the index. */
  built: boolean;
  version: string;
}

export interface LibrarySpec {
  name: string;
  corpusPath: string;
}

export class UnknownLibraryError extends Error {
  constructor(library: string, known: readonly string[]) {
    super(`unknown library "${library}"; known libraries: ${known.join(', ') || '(none configured)'}`);
    this.name = 'UnknownLibraryError';
  }
}

export interface IndexRegistryOptions {
  libraries: readonly LibrarySpec[];
  /** The store; default: an embedded store under `dir`. */
  store?: IndexStore;
  /** Root of the embedded store when no store is given, e.g. `.driftline/indexes`. */
  dir?: string;
  /** Used for dense queries of versions built with it, and for builds made here. */
  embedder?: Embedder;
  /** Applied to every opened version, per use, e.g. to add re-ranking wrappers (usage prior,
   * analogy: `rerankWrap()` in rerank.ts). Called once per version and use. */
  wrap?: (index: StoreIndex, use: RetrievalUse) => PremiseIndex | Promise<PremiseIndex>;
  log?: IndexLog;
}

/** The configured libraries and their current index versions. */
export class IndexRegistry {
  readonly store: IndexStore;
  readonly embedder?: Embedder;
  private readonly specs: Map<string, LibrarySpec>;
  private readonly indexes = new Map<string, Promise<StoreIndex>>();
  private readonly wrapped = new Map<string, Promise<PremiseIndex>>();
  private readonly builds = new Map<string, Promise<VersionInfo>>();
  private readonly checkedRevision = new Set<string>();

  constructor(private readonly opts: IndexRegistryOptions) {
    for (const l of opts.libraries) checkLibraryName(l.name);
    if (!opts.store && !opts.dir) throw new Error('IndexRegistry needs a store or a directory for the embedded store');
    this.store = opts.store ?? new EmbeddedStore(join(opts.dir!, 'embedded'));
    this.embedder = opts.embedder;
    this.specs = new Map(opts.libraries.map((l) => [l.name, l]));
  }

  get names(): string[] {
    return [...this.specs.keys()];
  }

  /** The first library configured. */
  get defaultLibrary(): string {
    // None: a stack whose default library is not pulled yet; every lookup names the problem.
    if (this.opts.libraries.length === 0) throw new UnknownLibraryError('(default)', []);
    return this.opts.libraries[0]!.name;
  }

  spec(name: string): LibrarySpec {
    const spec = this.specs.get(name);
    if (!spec) throw new UnknownLibraryError(name, this.names);
    return spec;
  }

  /** The library's current index, wrapped for `use` (default monolithic). */
  async get(name: string = this.defaultLibrary, use: RetrievalUse = 'monolithic'): Promise<PremiseIndex> {
    return (await this.open(name, use)).index;
  }

  /** The library's current index; built (and promoted) first when the library has none. */
  async open(name: string = this.defaultLibrary, use: RetrievalUse = 'monolithic'): Promise<OpenedIndex> {
    const spec = this.spec(name);
    let version = await this.store.getAlias(name);
    let built = false;
    if (!version) {
      version = (await this.buildFirst(spec)).version;
      built = true;
    } else {
      await this.warnIfStale(spec, version);
    }
    return { index: await this.wrappedVersion(version, use), built, version };
  }

  /** A version with the registry's wrappers for `use` (cached per version and use). */
  wrappedVersion(version: string, use: RetrievalUse = 'monolithic'): Promise<PremiseIndex> {
    const wrap = this.opts.wrap;
    if (!wrap) return this.openVersion(version);
    const key = `${version}\u0000${use}`;
    let p = this.wrapped.get(key);
    if (!p) {
      p = this.openVersion(version).then((index) => wrap(index, use));
      p.catch(() => this.wrapped.delete(key));
      this.wrapped.set(key, p);
    }
    return p;
  }

  /** A version as a PremiseIndex (cached: a complete version never changes). */
  openVersion(version: string): Promise<StoreIndex> {
    let p = this.indexes.get(version);
    if (!p) {
      p = (async () => {
        const info = await this.store.getVersion(version);
        if (!info) throw new Error(`index version ${version} is missing from the ${this.store.kind} store`);
        return new StoreIndex(this.store, info, this.embedder);
      })();
      p.catch(() => this.indexes.delete(version));
      this.indexes.set(version, p);
    }
    return p;
  }

  private buildFirst(spec: LibrarySpec): Promise<VersionInfo> {
    let p = this.builds.get(spec.name);
    if (!p) {
      // Concurrent callers share one build; a failed build is forgotten so a later call retries.
      p = (async () => {
        if (!existsSync(spec.corpusPath)) {
          throw new Error(
            `corpus for library ${spec.name} not found at ${spec.corpusPath}, and the ${this.store.kind} store has no index for it`,
          );
        }
        const started = Date.now();
        const info = await buildInProcess({ library: spec.name, corpusPath: spec.corpusPath, store: this.store, embedder: this.embedder });
        this.opts.log?.info(
          { library: spec.name, version: info.version, declarations: info.expected, ms: Date.now() - started },
          'index built',
        );
        return info;
      })();
      p.catch(() => this.builds.delete(spec.name));
      this.builds.set(spec.name, p);
    }
    return p;
  }

  private async warnIfStale(spec: LibrarySpec, version: string): Promise<void> {
    if (!this.opts.log || this.checkedRevision.has(`${spec.name}:${version}`)) return;
    this.checkedRevision.add(`${spec.name}:${version}`);
    if (!existsSync(spec.corpusPath)) {
      this.opts.log.warn(
        { library: spec.name, corpusPath: spec.corpusPath, version },
        'corpus file missing; using the current stored index',
      );
      return;
    }
    const info = await this.store.getVersion(version);
    const revision = await corpusRevision(spec.corpusPath);
    if (info && info.revision !== revision) {
      this.opts.log.warn(
        { library: spec.name, version, corpusRevision: revision },
        `the corpus changed since index ${version} was built; run \`driftline index build --library ${spec.name} --corpus ${spec.corpusPath}\` to build and promote a new version`,
      );
    }
  }

  /** Opens every library (a worker calls this before taking tasks). */
  /** Libraries with no complete current version (no alias, or an alias on an unfinished
   * version). Builds and opens nothing: for readiness checks. */
  async unbuilt(): Promise<string[]> {
    const out: string[] = [];
    for (const name of this.names) {
      const version = await this.store.getAlias(name);
      const info = version ? await this.store.getVersion(version) : undefined;
      if (!info?.completedAt) out.push(name);
    }
    return out;
  }

  async ready(): Promise<{ library: string; version: string; built: boolean; size: number }[]> {
    const all = await Promise.all(this.names.map(async (n) => ({ n, o: await this.open(n) })));
    return all.map(({ n, o }) => ({ library: n, version: o.version, built: o.built, size: o.index.size }));
  }

  async close(): Promise<void> {
    await this.store.close();
  }
}
