// What the API server and its readiness check are built from, read from the configuration once
// for both ways of running the API: `npm start` (infra/start.ts, the whole stack) and
// `driftline api` (infra/serve.ts, the API alone beside workers elsewhere).
import { sweepBatchCounts } from '../engines/results/llm-batches';
import { sentBatches } from '../common/llm-batch';
import type { Client } from '@temporalio/client';
import type { ApiOptions } from '../api/server';
import { createReadinessCheck, type ReadinessDeps } from '../api/readiness';
import type { LibraryCatalog } from '../client/library-catalog';
import { llmTaskQueue } from '../common/run-config-schema';
import type { ResultsDb } from '../engines/results/results-db';
import { readProviderStatuses } from '../engines/llm/provider-status-file';
import { leanIntegrityFile, readLeanIntegrity } from '../engines/lean/integrity-status-file';
import { missingServices, noLibraryMessage, publicDataDir, runLlmSettings, sandboxWarnings, temporalUiUrl, type Config } from './config';
import { providerStatusPath, screenPolicyOf } from './deps';
import { quotaViews } from './llm-quota';

/** The readiness check over the configured libraries, services and provider queues; the caller
 * says how to find unbuilt indexes and, when it supervises them, the worker processes. */
export function readinessFor(
  config: Config,
  client: Client,
  extra: Pick<ReadinessDeps, 'unbuiltIndexes'> & Partial<Pick<ReadinessDeps, 'workerIdentities' | 'warnings'>>,
): ReturnType<typeof createReadinessCheck> {
  return createReadinessCheck({
    client,
    namespace: config.temporal.namespace,
    missing: missingServices(config),
    ...(config.libraries.length === 0 ? { noLibrary: noLibraryMessage(config) } : {}),
    llmQueues: Object.keys(config.llm.providers).map(llmTaskQueue),
    // What the main worker learnt about each provider: it writes it to the data directory,
    // which the API shares with it. Entries of providers no longer configured are left out.
    llmProviders: () => {
      const all = readProviderStatuses(providerStatusPath(config));
      return Object.fromEntries(Object.keys(config.llm.providers).flatMap((name) => (all[name] ? [[name, all[name]]] : [])));
    },
    // The Lean workers count each tampering and disagreement in the same data directory.
    leanIntegrity: () => readLeanIntegrity(leanIntegrityFile(config.dataDir)),
    ...extra,
    // A Lean sandbox the operator turned off (or weakened) works, but is listed. The API reads
    // the configuration the Lean worker reads.
    warnings: () => [...sandboxWarnings(config), ...(extra.warnings?.() ?? [])],
  });
}

/** `buildServer`'s options from the configuration and the services the caller opened. */
export function apiOptionsFor(
  config: Config,
  services: {
    client: Client;
    readiness: ApiOptions['readiness'];
    catalog: LibraryCatalog;
    results: ResultsDb;
    currentIndexVersion: (library: string) => Promise<string | undefined>;
    /** The Web UI of the dev server `npm start` runs; default: the configured one. */
    temporalUiUrl?: string;
  },
): ApiOptions {
  return {
    temporal: services.client,
    libraries: config.libraries.map((l) => l.name),
    // No library (the default one not pulled yet): runs are refused, saying how to get it.
    defaultLibrary: config.libraries[0]?.name ?? '',
    maxStatementChars: config.api.maxStatementChars,
    // Every run's LLM activity timeouts follow the workers' LLM settings (common/llm-call-policy.ts).
    llm: runLlmSettings(config),
    providerNames: Object.keys(config.llm.providers),
    screenPolicy: screenPolicyOf(config),
    readiness: services.readiness,
    logger: false,
    catalog: services.catalog,
    apiKeys: config.api.keys,
    rateLimit: { max: config.api.rateLimitPerMinute, timeWindowMs: 60_000 },
    temporalUiUrl: services.temporalUiUrl ?? temporalUiUrl(config),
    namespace: config.temporal.namespace,
    sweeps: {
      results: services.results,
      dataDir: publicDataDir(config),
      currentIndexVersion: services.currentIndexVersion,
      llmQuota: () => quotaViews(config, services.results),
      // Shown for sweeps that sent batches (batch mode).
      batches: async (id) => {
        const b = await sweepBatchCounts(services.results.driver, id);
        return sentBatches(b) ? b : undefined;
      },
    },
  };
}
