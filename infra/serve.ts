// `driftline serve`: the HTTP API (and the web page) alone, against an existing Temporal cluster,
// for deployments where workers run elsewhere (infra/compose.yaml). `npm start` serves the same
// API in-process beside the dev server and workers.
import type { FastifyInstance } from 'fastify';
import { registryCatalog } from '../api/library-catalog';
import { createReadinessCheck } from '../api/readiness';
import { llmTaskQueue } from '../common/run-config-schema';
import { buildServer } from '../api/server';
import { apiListenHost, missingServices, runLlmSettings, temporalUiUrl, type Config } from './config';
import { connectClient } from './connect';
import { buildRetrieval, createIndexStore, defaultProviderURL, providerStatusPath } from './deps';
import { readProviderStatus } from '../engines/llm/provider-status-file';
import { createLogger } from './logging';
import { openResults } from './results';
import { PROJECT_ROOT } from './temporal-cli';
import { sharedDataDir } from '../engines/sweeps/sweep-file';

const log = createLogger('driftline-api');

export async function serveApi(config: Config): Promise<FastifyInstance> {
  const client = await connectClient(config);
  // Indexes are built and opened by the main workers; the API only asks the store whether every
  // library has a current version.
  const store = createIndexStore(config);
  // Library listing and premise search read the same indexes as the workers.
  const { registry } = await buildRetrieval(config, log);
  // Sweeps are recorded in the results database the workers write to (PostgreSQL when they run
  // on other machines).
  const results = await openResults(config);
  const app = await buildServer({
    temporal: client,
    libraries: config.libraries.map((l) => l.name),
    defaultLibrary: config.libraries[0]!.name,
    maxStatementChars: config.api.maxStatementChars,
    // Every run's LLM activity timeouts follow the workers' LLM settings (common/llm-budget.ts).
    llm: runLlmSettings(config),
    providerNames: Object.keys(config.llm.providers),
    readiness: createReadinessCheck({
      client,
      namespace: config.temporal.namespace,
      unbuiltIndexes: async () => {
        const aliases = await Promise.all(config.libraries.map((l) => store.getAlias(l.name)));
        return config.libraries.filter((_, i) => !aliases[i]).map((l) => l.name);
      },
      missing: missingServices(config),
      llmQueues: Object.keys(config.llm.providers).map(llmTaskQueue),
      // Shown when the workers share this data directory (they write the provider's status there).
      llm: () => {
        const url = defaultProviderURL(config);
        return url ? readProviderStatus(providerStatusPath(config), url) : undefined;
      },
    }),
    catalog: registryCatalog(registry),
    apiKeys: config.api.keys,
    rateLimit: { max: config.api.rateLimitPerMinute, timeWindowMs: 60_000 },
    temporalUiUrl: temporalUiUrl(config),
    namespace: config.temporal.namespace,
    sweeps: { results, dataDir: sharedDataDir(PROJECT_ROOT), currentIndexVersion: (library: string) => store.getAlias(library) },
    logger: false,
  });
  app.addHook('onClose', async () => {
    await store.close();
    await registry.close();
    await results.close();
    await client.connection.close();
  });
  // Without API keys, loopback only (as `npm start`): a deployment sets DRIFTLINE_API_KEYS.
  const listen = apiListenHost(config);
  if (listen.host !== config.api.host) log.warn({ host: config.api.host }, 'no API keys configured (DRIFTLINE_API_KEYS): the API listens on loopback only');
  const url = await app.listen({ host: listen.host, port: config.api.port });
  log.info({ url, temporal: config.temporal.address }, 'API listening');
  const stop = async () => {
    await app.close();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
  return app;
}
