// Building a stored index version from a corpus: plan it (revision, version name, field
// statistics), store it batch by batch (sparse vectors, and dense ones when an embedder is
// given), check the count, mark it complete, promote the alias. The durable build (workflow
// `buildIndex`) calls these through activities; `npm start` calls `buildInProcess` when a
// library has no index at all.
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { loadCorpus, type Corpus } from '../corpus';
import { denseDocumentText, type Embedder } from '../embedder';
import { corpusStats, sparseDocument, type CorpusStats } from './sparse';
import { STORE_SCHEMA_VERSION, versionName, type IndexStore, type StorePoint, type VersionInfo } from './store';

export const DEFAULT_BATCH_SIZE = 128;

export async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** The corpus revision: the first 12 hex digits of its SHA-256. */
export async function corpusRevision(path: string): Promise<string> {
  return (await sha256File(path)).slice(0, 12);
}

export async function versionForCorpus(
  library: string,
  corpusPath: string,
  embedderId: string | undefined,
): Promise<{ version: string; revision: string }> {
  const revision = await corpusRevision(corpusPath);
  return { version: versionName(library, revision, embedderId), revision };
}

const corpora = new Map<string, { key: string; corpus: Promise<Corpus> }>();
/** The corpus, parsed once per file content (a build's many batches share one parse). A line
 * that does not parse fails the load (CorpusLineError, naming the line) unless `skipBadLines`. */
export async function loadCorpusCached(path: string, skipBadLines = false): Promise<Corpus> {
  const s = await stat(path);
  const key = `${s.size}:${s.mtimeMs}:${skipBadLines}`;
  const cacheKey = `${path}\u0000${skipBadLines}`;
  const hit = corpora.get(cacheKey);
  if (hit && hit.key === key) return hit.corpus;
  const corpus = loadCorpus(path, { skipBadLines });
  corpora.set(cacheKey, { key, corpus });
  corpus.catch(() => corpora.delete(cacheKey));
  return corpus;
}

export interface PlanInput {
  library: string;
  corpusPath: string;
  embedder?: Pick<Embedder, 'id' | 'dimensions'>;
  skipBadLines?: boolean;
}

/** What a build will produce; computed from the corpus alone, so it is the same every time. */
export async function planBuild(input: PlanInput): Promise<VersionInfo> {
  const { version, revision } = await versionForCorpus(input.library, input.corpusPath, input.embedder?.id);
  const corpus = await loadCorpusCached(input.corpusPath, input.skipBadLines);
  return {
    version,
    library: input.library,
    revision,
    embedder: input.embedder?.id ?? 'lexical',
    dimensions: input.embedder?.dimensions ?? 0,
    schema: STORE_SCHEMA_VERSION,
    expected: corpus.declarations.length,
    stats: corpusStats(corpus.declarations),
    createdAt: new Date().toISOString(),
  };
}

export interface BatchInput {
  version: string;
  corpusPath: string;
  /** Corpus positions [from, to). */
  from: number;
  to: number;
  stats: CorpusStats;
  skipBadLines?: boolean;
}

/** Embeds and upserts declarations [from, to) of the corpus. Idempotent. */
export async function storeRange(
  store: IndexStore,
  embedder: Embedder | undefined,
  input: BatchInput,
  signal?: AbortSignal,
): Promise<number> {
  const corpus = await loadCorpusCached(input.corpusPath, input.skipBadLines);
  const decls = corpus.declarations.slice(input.from, input.to);
  const dense = embedder ? await embedder.embed(decls.map(denseDocumentText), { kind: 'document', signal }) : undefined;
  const points: StorePoint[] = decls.map((decl, i) => {
    const p: StorePoint = { decl, ord: input.from + i, sparse: sparseDocument(decl, input.stats) };
    if (dense) p.dense = dense[i];
    return p;
  });
  await store.upsert(input.version, points);
  return points.length;
}

export class IncompleteBuildError extends Error {
  constructor(version: string, count: number, expected: number) {
    super(`index version ${version} holds ${count} points but its corpus has ${expected} declarations; build it again`);
    this.name = 'IncompleteBuildError';
  }
}

/** Checks the count and records completion. */
export async function completeVersion(store: IndexStore, version: string): Promise<VersionInfo> {
  const info = await store.getVersion(version);
  if (!info) throw new Error(`index version ${version} does not exist`);
  const count = await store.count(version);
  if (count !== info.expected) throw new IncompleteBuildError(version, count, info.expected);
  await store.markComplete(version);
  return (await store.getVersion(version))!;
}

/** Moves the alias, refusing a version that is not complete or belongs to another library. */
export async function promoteVersion(store: IndexStore, library: string, version: string): Promise<void> {
  const info = await store.getVersion(version);
  if (!info) throw new Error(`index version ${version} does not exist; see \`driftline index list\``);
  if (info.library !== library) throw new Error(`version ${version} belongs to library ${info.library}, not ${library}`);
  if (!info.completedAt) throw new Error(`version ${version} is not complete (its build has not finished); it cannot be promoted`);
  await store.setAlias(library, version);
}

export interface InProcessBuild extends PlanInput {
  store: IndexStore;
  embedder?: Embedder;
  batchSize?: number;
  onProgress?: (done: number, total: number) => void;
  /** Point the library's alias at the new version (default true). */
  promote?: boolean;
}

/** The whole build in this process (no workflow): used when a library has no index yet. */
export async function buildInProcess(opts: InProcessBuild): Promise<VersionInfo> {
  const info = await planBuild(opts);
  await opts.store.createVersion(info);
  const size = opts.batchSize ?? DEFAULT_BATCH_SIZE;
  for (let from = 0; from < info.expected; from += size) {
    const to = Math.min(info.expected, from + size);
    await storeRange(opts.store, opts.embedder, { version: info.version, corpusPath: opts.corpusPath, from, to, stats: info.stats });
    opts.onProgress?.(to, info.expected);
  }
  const done = await completeVersion(opts.store, info.version);
  if (opts.promote !== false) await promoteVersion(opts.store, opts.library, info.version);
  return done;
}
