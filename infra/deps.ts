// Turns configuration into the clients the activity factories are handed.
import { join } from 'node:path';
import type { Config } from './config';
import { createLlmClient } from '../activities/llm/client';
import { IndexRegistry, type IndexLog } from '../activities/retrieval/index-store';
import type { Embedder } from '../activities/retrieval/embedder';
import { EmbeddedStore } from '../activities/retrieval/stores/embedded';
import { QdrantStore } from '../activities/retrieval/stores/qdrant';
import type { IndexStore } from '../activities/retrieval/stores/store';
import { createLeanRunner, type RunnerLog } from '../activities/lean/lean-runner';
import { NameDirectory } from '../activities/lean/name-directory';
import { DEFAULT_SAFETY_POLICY } from '../activities/lean/statement-safety';
import type { MainActivityDeps, LeanActivityDeps } from '../activities';

export function indexDir(config: Config): string {
  return join(config.dataDir, 'indexes');
}

/** The configured index store: embedded under `<dataDir>/indexes/embedded`, or Qdrant. */
export function createIndexStore(config: Config): IndexStore {
  if (config.store.kind === 'qdrant') {
    return new QdrantStore({ url: config.store.qdrantUrl!, apiKey: config.store.qdrantApiKey });
  }
  return new EmbeddedStore(join(indexDir(config), 'embedded'));
}

export function createIndexRegistry(config: Config, log?: IndexLog, embedder?: Embedder): IndexRegistry {
  return new IndexRegistry({
    libraries: config.libraries.map((l) => ({ name: l.name, corpusPath: l.corpus })),
    store: createIndexStore(config),
    embedder,
    log,
  });
}

export function buildMainDeps(config: Config): MainActivityDeps {
  return {
    llm: createLlmClient(config.llm.baseURL ? { ...config.llm, baseURL: config.llm.baseURL } : null),
    indexes: createIndexRegistry(config),
  };
}

export function buildLeanDeps(config: Config, log?: RunnerLog): LeanActivityDeps {
  const lean = config.lean;
  return {
    lean: createLeanRunner({
      replCmd: lean.replCmd,
      cwd: lean.replCwd,
      header: lean.header,
      timeoutMs: lean.timeoutMs,
      headerTimeoutMs: lean.headerTimeoutMs,
      size: lean.poolSize,
      maxUses: lean.maxUses,
      maxRssMb: lean.maxRssMb || undefined,
      sandbox: { noNetwork: lean.noNetwork, maxAddressSpaceMb: lean.maxAddressSpaceMb },
      log,
    }),
    timeoutMs: lean.timeoutMs,
    names: new NameDirectory(config.libraries.map((l) => ({ name: l.name, corpusPath: l.corpus }))),
    policy: { ...DEFAULT_SAFETY_POLICY, allowedImports: lean.allowedImports },
    equivalenceTimeoutMs: lean.equivalenceTimeoutMs,
  };
}

/** Activities the Lean worker runs at once: one check per REPL process, plus room for name
 * lookups and equivalence checks waiting on the pool (they queue inside it, heartbeating). */
export function leanWorkerConcurrency(config: Config): number {
  return config.lean.poolSize + 2;
}
