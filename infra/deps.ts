// Turns configuration into the clients the activity factories are handed.
import { basename, join } from 'node:path';
import type { Config, ProviderConfig } from './config';
import { createLlmClient, type LlmClient, type LlmRole, type ProviderSettings, type RoleRoute } from '../engines/llm/client';
import { LLM_ROLES } from '../common/llm-roles';
import { meteredFetch, type ReplyLedger } from '../engines/llm/metered-fetch';
import { LocalGgufChat } from '../engines/llm/local-gguf';
import { LOCAL_BASE_URL, localFetch } from '../engines/llm/local-fetch';
import { SqlReplyLedger } from '../engines/results/llm-ledger';
import { SqlBudgetStore } from '../engines/results/llm-budget';
import type { BudgetStore, ProviderLimits } from '../engines/llm/budget';
import { budgetedFetch, type BudgetEvent } from '../engines/llm/budgeted-fetch';
import { batchFetch, type BatchMailbox } from '../engines/llm/batch-fetch';
import { BatchApi } from '../engines/llm/batch-api';
import { SqlBatchStore } from '../engines/results/llm-batches';
import { temporalBatchMailbox } from '../activities/llm-batch-mailbox';
import type { LlmBatchActivityDeps, ProviderBatchApi } from '../activities/llm-batch';
import type { BatcherSettings } from '../common/llm-batch';
import type { Client } from '@temporalio/client';
import { connectClient } from './connect';
import { budgetRequestsPerMinute } from './config';
import { openResults } from './results';
import { IndexRegistry, type IndexLog } from '../engines/retrieval/index-registry';
import type { Embedder } from '../engines/retrieval/embedder';
import { createEmbedder } from '../engines/retrieval/embedders';
import { CachingEmbedder, cacheFileFor } from '../engines/retrieval/embedders/cache';
import { DEFAULT_RERANK, rerankWrap, type RerankSettings } from '../engines/retrieval/rerank';
import { EmbeddedStore } from '../engines/retrieval/stores/embedded';
import { QdrantStore } from '../engines/retrieval/stores/qdrant';
import type { IndexStore } from '../engines/retrieval/stores/store';
import { createLeanRunner } from '../engines/lean/create-runner';
import type { SandboxSettings } from '../engines/lean/sandbox';
import type { RunnerLog } from '../engines/lean/runner-contract';
import type { IntegrityEvent } from '../engines/lean/repl-pool';
import { NameDirectory } from '../engines/lean/name-directory';
import { screenPolicyOf } from './screen-policy';
import { providerStatusFile, writeProviderStatus } from '../engines/llm/provider-status-file';
import type { ProviderStatus } from '../engines/llm/provider';
import type { MainActivityDeps, LeanActivityDeps } from '../activities';

// Re-exported: the entry points that build deps take the screen's policy from here too.
export { screenPolicyOf };

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
  const inner = await createEmbedder({
    ...config.embeddings,
    timeoutMs: config.llm.timeoutMs,
    ...(opts.maxRetries !== undefined ? { maxRetries: opts.maxRetries } : {}),
  });
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
export async function buildRetrieval(
  config: Config,
  log?: IndexLog,
  opts: { rerank?: RerankSettings | false; maxRetries?: number } = {},
): Promise<Retrieval> {
  const embedder = await createConfiguredEmbedder(config, opts.maxRetries !== undefined ? { maxRetries: opts.maxRetries } : {});
  const rerank = opts.rerank === false ? undefined : (opts.rerank ?? DEFAULT_RERANK);
  const registry = createIndexRegistry(config, log, { ...(embedder ? { embedder } : {}), ...(rerank ? { rerank } : {}) });
  return embedder ? { registry, embedder } : { registry };
}

/** Where the main worker records what it learnt about the LLM provider, for /readyz. */
export function providerStatusPath(config: Config): string {
  return providerStatusFile(config.dataDir);
}

/**
 * Probes every provider's structured-output mode and records each one's status where /readyz
 * reads it, also when configuration settled the mode and nothing changed. Returns the statuses
 * by provider name. Never throws.
 */
export async function probeAndRecordProviders(config: Config, llm: LlmClient): Promise<Record<string, ProviderStatus>> {
  await llm.probe();
  const statuses = llm.providerStatuses();
  for (const [provider, status] of Object.entries(statuses)) writeProviderStatus(providerStatusPath(config), provider, status);
  return statuses;
}

/** One loaded local model per file and process: a worker's clients share it. */
const localModels = new Map<string, LocalGgufChat>();

function localModelFor(modelPath: string, contextSize: number, threads: number): LocalGgufChat {
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
/**
 * The LLM client the configuration asks for: every configured provider, each role routed to its
 * own. With a ledger, every chat completion goes through the reply cache and is recorded with its
 * tokens and price (metered-fetch.ts), keyed by the provider it went to. A `local` provider runs
 * a GGUF model in process behind the same chat-completions protocol (local-fetch.ts), so caching,
 * accounting and reply parsing are the same code for every kind.
 */
export function createConfiguredLlm(config: Config, ledger?: ReplyLedger, quota?: LlmQuota, batches?: BatchMailbox): LlmClient {
  const file = providerStatusPath(config);
  const onProviderChange = (status: ProviderStatus, provider: string) => writeProviderStatus(file, provider, status);
  // With no provider the client is unconfigured (runs fail at once saying what to set) but still
  // knows the configured model names, which key cached replies and decompositions.
  const providers = Object.entries(config.llm.providers);
  const roles: Partial<Record<LlmRole, RoleRoute>> = {};
  for (const role of LLM_ROLES) {
    const route = config.llm.roles[role];
    if (route) roles[role] = { provider: route.provider, ...(route.model ? { model: route.model } : {}) };
  }
  return createLlmClient({
    models: config.llm.models,
    timeoutMs: config.llm.timeoutMs,
    maxReasks: config.llm.maxReasks,
    maxTokens: config.llm.maxTokens,
    busyBackoffMs: config.llm.busyBackoffMs,
    onProviderChange,
    roles,
    providers: Object.fromEntries(providers.map(([name, p]) => [name, providerSettings(config, name, p, ledger, quota, batches)])),
  });
}

/** How one configured provider's requests are sent: over HTTP, or to a GGUF model in process. */
function providerSettings(
  config: Config,
  name: string,
  p: ProviderConfig,
  ledger?: ReplyLedger,
  quota?: LlmQuota,
  batches?: BatchMailbox,
): ProviderSettings {
  const {
    kind: _kind,
    modelPath: _path,
    contextSize: _ctx,
    threads: _threads,
    requestsPerSecond: _rps,
    tokensPerMinute: _tpm,
    requestsPerMinute: _rpm,
    maxInFlight: _slots,
    batch: _batch,
    ...common
  } = p;
  if (p.kind === 'local') {
    const chat = localModelFor(
      p.modelPath ?? config.llm.localModelPath,
      p.contextSize ?? config.llm.localContextSize,
      p.threads ?? config.llm.localThreads,
    );
    const transport = localFetch(chat);
    const modelPath = p.modelPath ?? config.llm.localModelPath;
    return {
      ...common,
      baseURL: LOCAL_BASE_URL,
      // Messages and /readyz name the file, not the placeholder URL of the in-process transport;
      // roles that name no model use the file's name rather than a hosted model's default.
      label: `${modelPath} (local, in process)`,
      model: p.model ?? basename(modelPath).replace(/\.gguf$/i, ''),
      // The local transport turns a JSON schema into a grammar: nothing to probe.
      structuredOutput: 'json_schema',
      acceptsGrammar: true,
      fetch: ledger ? meteredFetch({ provider: chat.id, ledger, prices: config.llm.prices, fetch: transport }) : transport,
    };
  }
  // Under the reply cache, so that a cached reply costs no quota.
  const network = quota
    ? budgetedFetch({
        provider: name,
        limits: providerLimits(p),
        store: quota.store,
        maxWaitMs: budgetWaitMs(config),
        callTimeoutMs: config.llm.timeoutMs,
        leaseMs: 2 * config.llm.timeoutMs + 60_000,
        ...(quota.onEvent ? { onEvent: quota.onEvent } : {}),
      })
    : undefined;
  // Batch mode's calls wait for their batch instead (batch-fetch.ts), and cost no synchronous quota.
  const batched =
    p.batch && batches
      ? batchFetch({
          provider: name,
          mailbox: batches,
          pollMs: config.llm.batchReadMs,
          callTimeoutMs: config.llm.timeoutMs + budgetWaitMs(config),
          ...(network ? { fetch: network } : {}),
        })
      : network;
  const transport = ledger
    ? meteredFetch({ provider: p.baseURL!, ledger, prices: config.llm.prices, ...(batched ? { fetch: batched } : {}) })
    : batched;
  return {
    ...common,
    baseURL: p.baseURL!,
    structuredOutput: p.structuredOutput ?? config.llm.structuredOutput,
    foldSystemPrompt: p.foldSystemPrompt ?? config.llm.foldSystemPrompt,
    ...(transport ? { fetch: transport } : {}),
    ...(network ? { budgetWaitMs: budgetWaitMs(config) } : {}),
  };
}

/** The shared LLM budget the main worker's requests pass through (decisions/0016). */
export interface LlmQuota {
  store: BudgetStore;
  /** Told when a request waited for the budget, and of each 429 (for the logs). */
  onEvent?: (event: BudgetEvent) => void;
}

/** A provider's three limits as its budget holds them (the request rate: the lower of the
 * per-second and per-minute settings). */
export function providerLimits(p: ProviderConfig): ProviderLimits {
  const rpm = budgetRequestsPerMinute(p);
  return {
    ...(p.tokensPerMinute !== undefined ? { tokensPerMinute: p.tokensPerMinute } : {}),
    ...(rpm !== undefined ? { requestsPerMinute: rpm } : {}),
    ...(p.maxInFlight !== undefined ? { maxInFlight: p.maxInFlight } : {}),
  };
}

/** How long a request may wait for the budget: one call's time, which the call's own timeout
 * is extended by (the activity's time budget counts several calls; one waits at most this). */
function budgetWaitMs(config: Config): number {
  return config.llm.timeoutMs;
}

/** The translator behind the agent's `draft` tool: the same client, when the translator role has
 * a provider (DRIFTLINE_TRANSLATOR_BASE_URL or DRIFTLINE_ROLE_TRANSLATOR); unconfigured otherwise. */
function translatorFor(config: Config, llm: LlmClient): LlmClient {
  return config.llm.roles.translator ? llm : createLlmClient(null);
}

/** The main worker's deps: its activities', the batchers', and what to close at shutdown. */
export interface MainWorkerDeps extends MainActivityDeps {
  batch: LlmBatchActivityDeps;
  close(): Promise<void>;
}

/** The main worker's deps: the LLM client and `buildRetrieval`'s registry. */
export async function buildMainWorkerDeps(
  config: Config,
  log?: IndexLog,
  onBudgetEvent?: (event: BudgetEvent) => void,
): Promise<MainWorkerDeps> {
  const { registry } = await buildRetrieval(config, log);
  // The reply cache and the call ledger live in the results database.
  const results = await openResults(config);
  const ledger = new SqlReplyLedger(results.driver);
  // Batch mode's requests and answers too; its batchers are signalled through a client of its own.
  const batchStore = new SqlBatchStore(results.driver);
  let client: Promise<Client> | undefined;
  // A connection that failed is tried again at the next call (the activity's retry), not kept.
  const batchClient = () =>
    (client ??= connectClient(config).catch((err: unknown) => {
      client = undefined;
      throw err;
    }));
  const mailbox = temporalBatchMailbox(batchStore, batchClient, batcherSettings(config));
  // Each provider's quota is shared with every other worker process through the same database.
  const llm = createConfiguredLlm(
    config,
    ledger,
    {
      store: new SqlBudgetStore(results.driver),
      ...(onBudgetEvent ? { onEvent: onBudgetEvent } : {}),
    },
    mailbox,
  );
  return {
    llm,
    translator: translatorFor(config, llm),
    indexes: registry,
    ledger,
    batch: { store: batchStore, apis: batchApis(config) },
    close: async () => {
      if (client) await (await client.catch(() => undefined))?.connection.close();
    },
  };
}

/** How the deployment's batchers flush and poll (handed to a batcher when it starts). */
export function batcherSettings(config: Config): BatcherSettings {
  return {
    maxRequests: config.llm.batchMaxRequests,
    maxAgeMs: config.llm.batchMaxAgeMs,
    pollMs: config.llm.batchPollMs,
    idleMs: config.llm.batchIdleMs,
  };
}

/** The Batch API of every batch-capable provider, by name. */
function batchApis(config: Config): Record<string, ProviderBatchApi> {
  const apis: Record<string, ProviderBatchApi> = {};
  for (const [name, p] of Object.entries(config.llm.providers)) {
    if (!p.batch || !p.baseURL) continue;
    apis[name] = new BatchApi({
      baseURL: p.baseURL,
      ...(p.apiKey !== undefined ? { apiKey: p.apiKey } : {}),
      timeoutMs: config.llm.timeoutMs,
    });
  }
  return apis;
}

/** The REPL's sandbox from the LEAN_* settings (engines/lean/sandbox.ts). */
export function leanSandboxSettings(config: Config): SandboxSettings {
  const lean = config.lean;
  return {
    mode: lean.sandbox,
    bwrap: lean.sandboxBwrap,
    noNetwork: lean.noNetwork,
    maxAddressSpaceMb: lean.maxAddressSpaceMb,
    maxProcesses: lean.maxProcesses,
    uid: lean.sandboxUser.uid,
    gid: lean.sandboxUser.gid,
    cwd: lean.replCwd,
    readOnly: lean.sandboxRead,
    writable: lean.sandboxWrite,
    passEnv: lean.sandboxEnv,
    // The results database and everything else of driftline's stays out of sight.
    hidden: [config.dataDir],
  };
}

/** Throws SandboxUnavailableError when the REPL's sandbox cannot be set up. */
export function buildLeanDeps(config: Config, log?: RunnerLog, onIntegrity?: (event: IntegrityEvent) => void): LeanActivityDeps {
  const lean = config.lean;
  const policy = screenPolicyOf(config);
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
      sandbox: leanSandboxSettings(config),
      policy,
      log,
      ...(onIntegrity ? { onIntegrity } : {}),
    }),
    timeoutMs: lean.timeoutMs,
    names: new NameDirectory(config.libraries.map((l) => ({ name: l.name, corpusPath: l.corpus }))),
    policy,
    equivalenceTimeoutMs: lean.equivalenceTimeoutMs,
  };
}

/** Activities the Lean worker runs at once: one check per REPL process, plus room for name
 * lookups and equivalence checks waiting on the pool (they queue inside it, heartbeating). */
export function leanWorkerConcurrency(config: Config): number {
  return config.lean.poolSize + 2;
}
