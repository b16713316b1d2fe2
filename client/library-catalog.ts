// What the libraries routes (and MCP's search_premises) need from retrieval: the configured
// libraries with their index versions and alias, and a premise search over the current version
// ranked for a person (engines/retrieval/interactive-search.ts: name matches first), not the
// run's ranking with its usage prior.
import type { IndexRegistry } from '../engines/retrieval/index-registry';
import { searchInteractive } from '../engines/retrieval/interactive-search';

export interface LibraryInfo {
  name: string;
  default: boolean;
  current?: string;
  versions: { version: string; revision: string; embedder: string; declarations: number; createdAt: string; complete: boolean }[];
}

export interface LibraryHit {
  name: string;
  kind: string;
  signature: string;
  module?: string;
  score: number;
}

export interface LibraryCatalog {
  names(): string[];
  list(): Promise<LibraryInfo[]>;
  /** Premises of the library's current index that best match what a person typed (names first);
   * null when none is built. */
  search(library: string, query: string, k: number): Promise<{ version: string; hits: LibraryHit[] } | null>;
}

export function registryCatalog(registry: IndexRegistry): LibraryCatalog {
  return {
    names: () => registry.names,
    async list() {
      return Promise.all(
        registry.names.map(async (name) => {
          const [current, versions] = await Promise.all([registry.store.getAlias(name), registry.store.listVersions(name)]);
          return {
            name,
            default: name === registry.defaultLibrary,
            ...(current ? { current } : {}),
            versions: versions.map((v) => ({
              version: v.version,
              revision: v.revision,
              embedder: v.embedder,
              declarations: v.expected,
              createdAt: v.createdAt,
              complete: Boolean(v.completedAt),
            })),
          };
        }),
      );
    },
    async search(library, query, k) {
      const version = await registry.store.getAlias(library);
      if (!version) return null;
      // The store's own ranking as the pool (no usage prior), ordered by name match.
      const hits = await searchInteractive(await registry.openVersion(version), query, k);
      return {
        version,
        hits: hits.map((h) => ({
          name: h.decl.name,
          kind: h.decl.kind,
          signature: h.decl.signature,
          ...(h.decl.module ? { module: h.decl.module } : {}),
          score: h.score,
        })),
      };
    },
  };
}
