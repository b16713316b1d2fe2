// `driftline serve`: the HTTP API (and the web page) alone, against an existing Temporal cluster,
// for deployments where workers run elsewhere (infra/compose.yaml). `npm start` serves the same
// API in-process beside the dev server and workers.
import type { FastifyInstance } from 'fastify';
import { registryCatalog } from '../client/library-catalog';
import { apiOptionsFor, readinessFor } from './api-options';
import { buildServer } from '../api/server';
import { apiListenHost, type Config } from './config';
import { connectClient } from './connect';
import { buildRetrieval, createIndexStore } from './deps';
import { createLogger } from './logging';
import { openResults } from './results';

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
  const readiness = readinessFor(config, client, {
    unbuiltIndexes: async () => {
      const aliases = await Promise.all(config.libraries.map((l) => store.getAlias(l.name)));
      return config.libraries.filter((_, i) => !aliases[i]).map((l) => l.name);
    },
  });
  const app = await buildServer(
    apiOptionsFor(config, {
      client,
      readiness,
      catalog: registryCatalog(registry),
      results,
      currentIndexVersion: (library: string) => store.getAlias(library),
    }),
  );
  app.addHook('onClose', async () => {
    await store.close();
    await registry.close();
    await results.close();
    await client.connection.close();
  });
  // Without API keys, loopback only (as `npm start`): a deployment sets DRIFTLINE_API_KEYS.
  const listen = apiListenHost(config);
  if (listen.host !== config.api.host)
    log.warn({ host: config.api.host }, 'no API keys configured (DRIFTLINE_API_KEYS): the API listens on loopback only');
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
