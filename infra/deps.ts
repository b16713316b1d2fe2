// Turns configuration into the clients the activity factories are handed.
import { join } from 'node:path';
import type { Config } from './config';
import { createLlmClient } from '../engines/llm/client';
import { meteredFetch, type ReplyLedger } from '../engines/llm/metered-fetch';
import { LocalGgufChat } from '../engines/llm/local-gguf';
import { LOCAL_BASE_URL, localFetch } from '../engines/llm/local-fetch';
import { SqlReplyLedger } from '../engines/results/llm-ledger';
import { openResults } from './results';
import { IndexRegistry, type IndexLog } from '../engines/retrieval/index-registry';
import type { Embedder } from '../engines/retrieval/embedder';
import { createEmbedder } from '../engines/retrieval/embedders';
import { CachingEmbedder, cacheFileFor } from '../engines/retrieval/embedders/cache';
import { DEFAULT_RERANK, rerankWrap, type RerankSettings } from '../engines/retrieval/rerank';
import { EmbeddedStore } from '../engines/retrieval/stores/embedded';
import { QdrantStore } from '../engines/retrieval/stores/qdrant';
import type { IndexStore } from '../engines/retrieval/stores/store';
import { createLeanRunner } from '../engines/lean/lean-runner';
import type { RunnerLog } from '../engines/lean/runner';
import { NameDirectory } from '../engines/lean/name-directory';
import { DEFAULT_SAFETY_POLICY } from '../engines/lean/statement-safety';
import { writeProviderStatus } from '../engines/llm/provider-status-file';
import type { ProviderStatus } from '../engines/llm/provider';
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

export interface IndexRegistryExtras {
  embedder?: Embedder;
  /** Re-ranking over every opened version (rerank.ts); absent: the store's ranking as is. */
  rerank?: RerankSettings;
}

export function createIndexRegistry(config: Config, log?: IndexLog, extras: IndexRegistryExtras = {}): IndexRegistry {
  return new IndexRegistry({
    libraries: config.libraries.map((l) => ({ name: l.name, corpusPath: l.corpus })),
    store: createIndexStore(config),
    ...(extras.embedder ? { embedder: extras.embedder } : {}),
    ...(extras.rerank ? { wrap: rerankWrap(extras.rerank) } : {}),
    ...(log ? { log } : {}),
  });
}

/** The configured embedder (undefined: lexical only), behind the vector cache under
 * `<dataDir>/cache/embeddings`, so a restarted worker or a rerun evaluation re-embeds nothing.
 * `maxRetries`: client-side retries of an HTTP embedder (0 where Temporal retries). */
export async function createConfiguredEmbedder(config: Config, opts: { maxRetries?: number } = {}): Promise<Embedder | undefined> {
  const inner = await createEmbedder({ ...config.embeddings, timeoutMs: config.llm.timeoutMs, ...(opts.maxRetries !== undefined ? { maxRetries: opts.maxRetries } : {}) });
  if (!inner) return undefined;
  return new CachingEmbedder(inner, cacheFileFor(join(config.dataDir, 'cache', 'embeddings'), inner.id));
}

export interface Retrieval {
  registry: IndexRegistry;
  embedder?: Embedder;
}

/** What the service retrieves with: the configured store and embedder, and the default
 * re-ranking (usage prior, plus analogy for monolithic retrieval; rerank.ts). The worker, `npm
 * start`, the index commands and `driftline eval retrieval` all build it here, so the figures the
 * evaluation reports are those of the service. */
export async function buildRetrieval(config: Config, log?: IndexLog, opts: { rerank?: RerankSettings | false; maxRetries?: number } = {}): Promise<Retrieval> {
  const embedder = await createConfiguredEmbedder(config, opts.maxRetries !== undefined ? { maxRetries: opts.maxRetries } : {});
  const rerank = opts.rerank === false ? undefined : (opts.rerank ?? DEFAULT_RERANK);
  const registry = createIndexRegistry(config, log, { ...(embedder ? { embedder } : {}), ...(rerank ? { rerank } : {}) });
  return embedder ? { registry, embedder } : { registry };
}

/** Where the main worker records what it learnt about the LLM provider, for /readyz. */
export function providerStatusPath(config: Config): string {
  return join(config.dataDir, 'llm-provider.json');
}

/** One loaded local model per file and process: a worker's clients share it. */
const localModels = new Map<string, LocalGgufChat>();

function localModelFor(config: Config): LocalGgufChat {
  const { localModelPath: modelPath, localContextSize: contextSize, localThreads: threads } = config.llm;
  const key = JSON.stringify([modelPath, contextSize, threads]);
  let chat = localModels.get(key);
  if (!chat) localModels.set(key, (chat = new LocalGgufChat({ modelPath, contextSize, threads })));
  return chat;
}

/** Frees the local models this process loaded (at shutdown, and between tests). */
export async function closeLocalModels(): Promise<void> {
  const all = [...localModels.values()];
  localModels.clear();
  await Promise.all(all.map((m) => m.close()));
}

/**
 * The LLM client the configuration asks for. With a ledger, every chat completion goes through
 * the reply cache and is recorded with its tokens and price (metered-fetch.ts). The local
 * provider runs a GGUF model in process behind the same chat-completions protocol
 * (local-fetch.ts), so caching, accounting and reply parsing are the same code for both.
 */
export function createConfiguredLlm(config: Config, ledger?: ReplyLedger) {
  const file = providerStatusPath(config);
  const onProviderChange = (status: ProviderStatus) => writeProviderStatus(file, status);
  if (config.llm.provider === 'local') {
    const chat = localModelFor(config);
    const transport = localFetch(chat);
    return createLlmClient({
      ...config.llm,
      baseURL: LOCAL_BASE_URL,
      // The local transport turns a JSON schema into a grammar: nothing to probe.
      structuredOutput: 'json_schema',
      acceptsGrammar: true,
      onProviderChange,
      fetch: ledger ? meteredFetch({ provider: chat.id, ledger, prices: config.llm.prices, fetch: transport }) : transport,
    });
  }
  if (!config.llm.baseURL) return createLlmClient(null);
  return createLlmClient({
    ...config.llm,
    baseURL: config.llm.baseURL,
    onProviderChange,
    ...(ledger ? { fetch: meteredFetch({ provider: config.llm.baseURL, ledger, prices: config.llm.prices }) } : {}),
  });
}

/** The translator behind the agent's `draft` tool; unconfigured without its base URL. */
function translatorFor(config: Config) {
  const t = config.translator;
  return createLlmClient(
    t.baseURL
      ? {
          baseURL: t.baseURL,
          apiKey: t.apiKey,
          models: { ...config.llm.models, translator: t.model },
          timeoutMs: config.llm.timeoutMs,
          maxReasks: 0,
          maxTokens: { translator: config.llm.maxTokens.translator },
        }
      : null,
  );
}

/** Main-queue deps without an embedder (lexical retrieval, default re-ranking); the worker uses
 * `buildMainWorkerDeps`, which also creates the configured embedder. */
export function buildMainDeps(config: Config): MainActivityDeps {
  return { llm: createConfiguredLlm(config), translator: translatorFor(config), indexes: createIndexRegistry(config, undefined, { rerank: DEFAULT_RERANK }) };
}

/** The main worker's deps: the LLM client and `buildRetrieval`'s registry. */
export async function buildMainWorkerDeps(config: Config, log?: IndexLog): Promise<MainActivityDeps> {
  const { registry } = await buildRetrieval(config, log);
  // The reply cache and the call ledger live in the results database.
  const results = await openResults(config);
  const ledger = new SqlReplyLedger(results.driver);
  return { llm: createConfiguredLlm(config, ledger), translator: translatorFor(config), indexes: registry, ledger };
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
