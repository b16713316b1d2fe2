// The names of each library's declarations, read once from its corpus file (the JSONL the
// extraction program writes), for name resolution on the Lean queue. The Lean worker reads the
// corpus itself rather than asking the main worker, so it needs no network hop to resolve a name.
import { loadCorpus } from '../retrieval/corpus';

export interface NameLibrary {
  name: string;
  corpusPath: string;
}

export class NameDirectory {
  private readonly loaded = new Map<string, Promise<string[]>>();
  private readonly specs: Map<string, NameLibrary>;

  constructor(libraries: readonly NameLibrary[]) {
    this.specs = new Map(libraries.map((l) => [l.name, l]));
  }

  get libraries(): string[] {
    return [...this.specs.keys()];
  }

  /** Every declaration name of the library. */
  names(library: string): Promise<string[]> {
    const spec = this.specs.get(library);
    if (!spec) return Promise.reject(new Error(`unknown library "${library}"; known: ${this.libraries.join(', ') || '(none)'}`));
    let names = this.loaded.get(library);
    if (!names) {
      names = loadCorpus(spec.corpusPath, { skipBadLines: true }).then((c) => c.declarations.map((d) => d.name));
      names.catch(() => this.loaded.delete(library));
      this.loaded.set(library, names);
    }
    return names;
  }
}
