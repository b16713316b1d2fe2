// Built indexes on disk, and the registry the activities open them from.
//
// Layout under `dir`:   <library>/<version>.json   one built index per version
//                       <library>/current          the version in use (one line)
// version = <library>-<sha256(corpus) first 12 hex>-<INDEX_SCHEMA_VERSION>, so a changed corpus,
// tokenizer or index format gets a new file and never reuses a stale one. Files are written to
// a temporary name and renamed, so a reader never sees half an index and `current` moves atomically.
import { createHash } from 'node:crypto';
import { createReadStream, existsSync } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { loadCorpus } from './corpus';
import { TOKENIZER_VERSION } from './lean-tokenize';
import { LexicalIndex, type LexicalIndexJson, type PremiseIndex } from './premise-index';

/** Bump when the stored index format or the field set changes. */
export const INDEX_SCHEMA_VERSION = `lex1-tok${TOKENIZER_VERSION}`;

/** The subset of a pino logger used here. */
export interface IndexLog {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

export interface OpenIndexOptions {
  library: string;
  corpusPath: string;
  /** Root directory of stored indexes, e.g. `.driftline/indexes`. */
  dir: string;
  log?: IndexLog;
}

export interface OpenedIndex {
  index: PremiseIndex;
  /** true when this call built (and saved) the index. */
  built: boolean;
  version: string;
}

export async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

function checkLibraryName(library: string): void {
  // The name becomes a directory: no separators, no `..`.
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(library)) {
    throw new Error(`library name "${library}" must be letters, digits, '.', '_' or '-' (it names a directory)`);
  }
}

export async function indexVersion(library: string, corpusPath: string): Promise<string> {
  const digest = await sha256File(corpusPath);
  return `${library}-${digest.slice(0, 12)}-${INDEX_SCHEMA_VERSION}`;
}

async function writeAtomically(path: string, text: string): Promise<void> {
  const tmp = `${path}.${process.pid}.${Date.now()}.tmp`;
  await writeFile(tmp, text);
  await rename(tmp, path);
}

async function loadStored(path: string): Promise<LexicalIndex> {
  return LexicalIndex.fromJSON(JSON.parse(await readFile(path, 'utf8')) as LexicalIndexJson);
}

/** Loads the index of this corpus when it was built before; builds and saves it when not. */
export async function openOrBuildIndex(opts: OpenIndexOptions): Promise<OpenedIndex> {
  const { library, corpusPath, dir, log } = opts;
  checkLibraryName(library);
  const libDir = join(dir, library);
  const currentPath = join(libDir, 'current');

  if (!existsSync(corpusPath)) {
    // Without the corpus, an index built earlier (e.g. on another machine) still serves.
    if (existsSync(currentPath)) {
      const version = (await readFile(currentPath, 'utf8')).trim();
      log?.warn({ library, corpusPath, version }, 'corpus file missing; using the current stored index');
      return { index: await loadStored(join(libDir, `${version}.json`)), built: false, version };
    }
    throw new Error(`corpus for library ${library} not found at ${corpusPath}, and no index is stored under ${libDir}`);
  }

  const version = await indexVersion(library, corpusPath);
  const file = join(libDir, `${version}.json`);
  if (existsSync(file)) {
    try {
      const index = await loadStored(file);
      log?.info({ library, version }, 'index loaded');
      return { index, built: false, version };
    } catch (err) {
      // A damaged file is rebuilt rather than trusted.
      log?.warn({ library, version, err: (err as Error).message }, 'stored index unreadable; rebuilding');
    }
  }

  const started = Date.now();
  const corpus = await loadCorpus(corpusPath);
  if (corpus.warnings.length > 0) {
    log?.warn({ library, count: corpus.warnings.length, first: corpus.warnings.slice(0, 5) }, 'corpus warnings');
  }
  const index = LexicalIndex.build(library, corpus.declarations);
  await mkdir(libDir, { recursive: true });
  await writeAtomically(file, JSON.stringify(index.toJSON()));
  await writeAtomically(currentPath, `${version}\n`);
  log?.info({ library, version, declarations: index.size, ms: Date.now() - started }, 'index built');
  return { index, built: true, version };
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

/** The configured libraries; each index is opened on first use and then kept. */
export class IndexRegistry {
  private readonly specs: Map<string, LibrarySpec>;
  private readonly opened = new Map<string, Promise<OpenedIndex>>();

  constructor(private readonly opts: { libraries: readonly LibrarySpec[]; dir: string; log?: IndexLog }) {
    if (opts.libraries.length === 0) throw new Error('IndexRegistry needs at least one library');
    this.specs = new Map(opts.libraries.map((l) => [l.name, l]));
  }

  get names(): string[] {
    return [...this.specs.keys()];
  }

  /** The first library configured. */
  get defaultLibrary(): string {
    return this.opts.libraries[0]!.name;
  }

  async get(name: string = this.defaultLibrary): Promise<PremiseIndex> {
    return (await this.open(name)).index;
  }

  /** The index with how it was obtained (built or loaded, which version). */
  open(name: string = this.defaultLibrary): Promise<OpenedIndex> {
    const spec = this.specs.get(name);
    if (!spec) return Promise.reject(new UnknownLibraryError(name, this.names));
    let p = this.opened.get(name);
    if (!p) {
      // Concurrent callers share one open; a failed open is forgotten so a later call retries.
      p = openOrBuildIndex({ library: spec.name, corpusPath: spec.corpusPath, dir: this.opts.dir, log: this.opts.log });
      p.catch(() => this.opened.delete(name));
      this.opened.set(name, p);
    }
    return p;
  }

  /** Opens every library (a worker calls this before taking tasks). */
  async ready(): Promise<{ library: string; version: string; built: boolean; size: number }[]> {
    const all = await Promise.all(this.names.map(async (n) => ({ n, o: await this.open(n) })));
    return all.map(({ n, o }) => ({ library: n, version: o.version, built: o.built, size: o.index.size }));
  }
}
