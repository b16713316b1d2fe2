// Types shared by the index-build workflow, its activities and the CLI. No imports: workflow
// code bundles this.

export const INDEX_BUILD_WORKFLOW = 'buildIndex';
export const INDEX_BUILD_PROGRESS_QUERY = 'indexBuildProgress';

/** `index-build/<library>/<version>`: one workflow per version, so starting a build twice
 * attaches to the first instead of building again. */
export function indexBuildWorkflowId(library: string, version: string): string {
  return `index-build/${library}/${version}`;
}

export interface BuildIndexInput {
  library: string;
  /** Path to the corpus, as the workers see it. */
  corpusPath: string;
  /** The version the caller computed from the corpus; the build fails if the file changed since. */
  version: string;
  /** Declarations per activity (default 1000); each heartbeats after every batch inside it. */
  chunkSize?: number;
  /** Declarations per embed + upsert batch (default 128). */
  batchSize?: number;
  /** Move the alias when complete (default true). */
  promote?: boolean;
  /** Heartbeat timeout of the storing activity (default 30 s): how soon a dead worker is noticed. */
  heartbeatTimeoutMs?: number;
  /** Skip corpus lines that do not parse (reported as warnings) instead of failing the build. */
  skipBadLines?: boolean;
}

export interface StoredCorpusStats {
  premises: Record<string, number>;
  theorems: Record<string, number>;
}

export interface PlanIndexBuildResult {
  version: string;
  expected: number;
  /** Points already stored (a build run again after a crash or to completion). */
  stored: number;
  complete: boolean;
  stats: StoredCorpusStats;
}

export interface StoreIndexChunkInput {
  library: string;
  version: string;
  corpusPath: string;
  from: number;
  to: number;
  batchSize: number;
  stats: StoredCorpusStats;
  skipBadLines?: boolean;
}

/** Heartbeat details of the storing activity: where a retry resumes. */
export interface StoreIndexHeartbeat {
  next: number;
  from: number;
  to: number;
}

export type BuildPhase = 'planning' | 'storing' | 'verifying' | 'promoting' | 'done';

export interface IndexBuildProgress {
  library: string;
  version: string;
  phase: BuildPhase;
  /** Declarations stored so far (whole chunks). */
  done: number;
  total: number;
  /** Workflow time when storing started (ms since the epoch). */
  startedAt?: number;
}

export interface BuildIndexResult {
  version: string;
  count: number;
  promoted: boolean;
}

export interface IndexBuildActivities {
  planIndexBuild(input: { library: string; corpusPath: string; version: string; skipBadLines?: boolean }): Promise<PlanIndexBuildResult>;
  storeIndexChunk(input: StoreIndexChunkInput): Promise<{ stored: number }>;
  completeIndexBuild(input: { version: string }): Promise<{ count: number }>;
  promoteIndex(input: { library: string; version: string }): Promise<void>;
}
