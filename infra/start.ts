// `npm start`: the whole stack on one machine, in the foreground until Ctrl-C.
// Temporal dev server (history in .driftline/), the index build when none exists, a main worker
// and a Lean worker as child processes (restarted if they die), and the HTTP API.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createReadinessCheck } from '../api/readiness';
import { buildServer } from '../api/server';
import { ConfigError, loadConfig, missingServices, type Config } from './config';
import { connectClient } from './connect';
import { buildRetrieval } from './deps';
import { createLogger } from './logging';
import { requireTemporalCli } from './temporal-cli';
import { startDevServer, type DevServer } from './temporal-server';

const CLI_PATH = fileURLToPath(new URL('../bin/cli.ts', import.meta.url));
const log = createLogger('driftline');

interface ManagedWorker {
  queue: 'main' | 'lean';
  child?: ChildProcess;
  stopping: boolean;
}

function spawnWorker(worker: ManagedWorker, env: NodeJS.ProcessEnv, logFile: string): void {
  const child = spawn(process.execPath, ['--import', 'tsx', CLI_PATH, 'worker', '--queue', worker.queue], {
    env,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  worker.child = child;
  child.on('exit', (code, signal) => {
    if (worker.stopping) return;
    log.warn({ queue: worker.queue, code, signal, logFile }, 'worker exited; restarting in 2 s');
    setTimeout(() => !worker.stopping && spawnWorker(worker, env, logFile), 2000);
  });
}

function stopWorker(worker: ManagedWorker): Promise<void> {
  worker.stopping = true;
  const child = worker.child;
  if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

export async function startStack(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`driftline: ${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
  mkdirSync(config.dataDir, { recursive: true });

  let devServer: DevServer | undefined;
  const env: NodeJS.ProcessEnv = { ...process.env, DRIFTLINE_SUPERVISED: '1' };
  if (!config.temporal.address) {
    log.info('starting the Temporal dev server');
    devServer = await startDevServer({
      cli: requireTemporalCli(),
      port: config.temporal.devServerPort,
      uiPort: config.temporal.uiPort,
      dbFile: join(config.dataDir, 'temporal.db'),
      namespace: config.temporal.namespace,
      logFile: join(config.dataDir, 'temporal.log'),
    });
    env.TEMPORAL_ADDRESS = devServer.address;
    config.temporal.address = devServer.address;
  }

  // Build each library's index now if none exists, so the first run does not wait for it: with
  // the configured embedder and re-ranking, exactly what the main worker will search.
  const { registry: indexes, embedder } = await buildRetrieval(config, log).catch(async (err: Error) => {
    process.stderr.write(`driftline: cannot set up retrieval: ${err.message}\n`);
    await devServer?.stop();
    process.exit(1);
  });
  for (const library of config.libraries) {
    log.info({ library: library.name, corpus: library.corpus, embedder: embedder?.id ?? 'none (lexical)' }, 'opening the premise index (built now if none exists yet)');
    const opened = await indexes.open(library.name);
    log.info({ library: library.name, version: opened.version, declarations: opened.index.size, retrieval: opened.index.kind }, opened.built ? 'built the index (none existed yet)' : 'index ready');
  }

  const workers: ManagedWorker[] = [
    { queue: 'main', stopping: false },
    { queue: 'lean', stopping: false },
  ];
  for (const worker of workers) spawnWorker(worker, env, join(config.dataDir, `worker-${worker.queue}.log`));

  const client = await connectClient(config);
  const missing = missingServices(config);
  const app = await buildServer({
    temporal: client,
    libraries: config.libraries.map((l) => l.name),
    defaultLibrary: config.libraries[0]!.name,
    maxStatementChars: config.api.maxStatementChars,
    readiness: createReadinessCheck({ client, namespace: config.temporal.namespace, indexReady: async () => (await indexes.ready()).length === config.libraries.length, missing }),
    logger: false,
  });
  let apiUrl: string;
  try {
    apiUrl = await app.listen({ host: config.api.host, port: config.api.port });
  } catch (err) {
    process.stderr.write(`driftline: the API cannot listen on ${config.api.host}:${config.api.port} (${(err as Error).message}). Set PORT to a free port.\n`);
    await Promise.all(workers.map(stopWorker));
    await client.connection.close().catch(() => undefined);
    await devServer?.stop();
    process.exit(1);
  }

  const lines = [
    '',
    'driftline is running.',
    `  API          ${apiUrl}   (POST /v1/formalizations, GET /readyz)`,
    devServer ? `  Temporal UI  ${devServer.uiUrl}` : `  Temporal     ${config.temporal.address}`,
    `  Temporal     ${config.temporal.address} (namespace ${config.temporal.namespace})`,
    `  libraries    ${config.libraries.map((l) => l.name).join(', ')} (default ${config.libraries[0]!.name})`,
    ...missing.map((m) => `  not configured: ${m}`),
    '  Try: npx driftline formalize "Every prime greater than 2 is odd."',
    '  Ctrl-C stops everything.',
    '',
  ];
  process.stdout.write(lines.join('\n') + '\n');

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'stopping');
    await app.close().catch(() => undefined);
    await Promise.all(workers.map(stopWorker));
    await client.connection.close().catch(() => undefined);
    await devServer?.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await startStack();
}
