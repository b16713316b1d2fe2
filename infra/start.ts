// `npm start`: the whole stack on one machine, in the foreground until Ctrl-C.
// Temporal dev server (history in .driftline/), the index build when none exists, a main worker
// and a Lean worker as child processes (restarted if they die), and the HTTP API.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import type { Client } from '@temporalio/client';
import { buildServer } from '../api/server';
import { registryCatalog } from '../client/library-catalog';
import { apiOptionsFor, readinessFor } from './api-options';
import { apiListenHost, ConfigError, loadConfig, missingServices, type Config } from './config';
import { connectClient } from './connect';
import { buildRetrieval, leanSandboxSettings } from './deps';
import { sandboxCommand, SandboxUnavailableError } from '../engines/lean/sandbox';
import { createLogger } from './logging';
import { requireTemporalCli } from './temporal-cli';
import { openResults } from './results';
import type { ResultsDb } from '../engines/results/results-db';
import { startDevServer, type DevServer } from './temporal-server';
import { writeWorkflowBundle } from './workers';
import { dieWithParent } from './child-guard';
import { watchRuns, type RunWatcher } from './run-log';
import { cleanUpAfterDeadStack, removeStackPids, writeStackPids } from './stack-pids';
import { watchTemporalLoad, type TemporalLoadWatch } from './temporal-load';

// The `driftline` launcher: the compiled CLI while it is current, else the TypeScript sources.
const CLI_PATH = fileURLToPath(new URL('../bin/driftline.js', import.meta.url));
const log = createLogger('driftline');

interface ManagedWorker {
  queue: 'main' | 'lean';
  child?: ChildProcess;
  stopping: boolean;
  /** Exits in a row without a minute of uptime in between: sets the restart delay. */
  quickExits: number;
}

// A worker that keeps dying at once (say, a setting it cannot use) is restarted ever more
// slowly, 1 s doubling to 30 s; one that ran for a minute starts the count again.
const HEALTHY_UPTIME_MS = 60_000;
const MAX_RESTART_DELAY_MS = 30_000;

function spawnWorker(worker: ManagedWorker, env: NodeJS.ProcessEnv, onSpawn: () => void): void {
  const started = Date.now();
  // SIGTERM when the stack dies, even by SIGKILL: the worker shuts down at once (it also leaves
  // by itself when it sees its parent gone, where pdeathsig is not available).
  const [command, args] = dieWithParent(process.execPath, [CLI_PATH, 'worker', '--queue', worker.queue], 'TERM');
  const child = spawn(command, args, {
    env,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  worker.child = child;
  onSpawn();
  child.on('exit', (code, signal) => {
    if (worker.stopping) return;
    worker.quickExits = Date.now() - started >= HEALTHY_UPTIME_MS ? 0 : worker.quickExits + 1;
    const delayMs = Math.min(MAX_RESTART_DELAY_MS, 1000 * 2 ** Math.max(0, worker.quickExits - 1));
    log.warn({ queue: worker.queue, code, signal, delayMs }, 'worker exited; restarting');
    setTimeout(() => !worker.stopping && spawnWorker(worker, env, onSpawn), delayMs);
  });
}

/** The poller identity of a worker process (the Temporal SDK's default), or null when it is not
 * running. */
function workerIdentity(child: ChildProcess | undefined): string | null {
  if (!child?.pid || child.exitCode !== null || child.signalCode !== null) return null;
  return `${child.pid}@${hostname()}`;
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

  // A stack killed outright (kill -9) may have left its children: stop them before starting.
  const previous = await cleanUpAfterDeadStack(config.dataDir);
  if ('running' in previous) {
    process.stderr.write(
      `driftline: another stack is running on ${config.dataDir} (pid ${previous.running}); stop it first, or set DRIFTLINE_DATA_DIR.\n`,
    );
    process.exit(1);
  }
  if (previous.stopped.length) log.warn({ stopped: previous.stopped }, 'stopped processes left by a stack that was killed');

  // Everything started so far, so that Ctrl-C or a failure at any point stops all of it.
  let devServer: DevServer | undefined;
  let app: FastifyInstance | undefined;
  let client: Client | undefined;
  let results: ResultsDb | undefined;
  const workers: ManagedWorker[] = [];
  let runWatcher: RunWatcher | undefined;
  let loadWatch: TemporalLoadWatch | undefined;
  const recordPids = () =>
    writeStackPids(config.dataDir, {
      stack: process.pid,
      children: [
        ...(devServer?.process.pid ? [{ pid: devServer.process.pid, role: 'temporal dev server' }] : []),
        ...workers.flatMap((w) => (w.child?.pid ? [{ pid: w.child.pid, role: `${w.queue} worker` }] : [])),
      ],
    });
  const stopAll = async () => {
    loadWatch?.stop();
    await runWatcher?.stop();
    await app?.close().catch(() => undefined);
    await results?.close().catch(() => undefined);
    await Promise.all(workers.map(stopWorker));
    await client?.connection.close().catch(() => undefined);
    await devServer?.stop();
    removeStackPids(config.dataDir);
  };
  const abort = async (message: string): Promise<never> => {
    process.stderr.write(`driftline: ${message}\n`);
    await stopAll();
    process.exit(1);
  };
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    // Ctrl-C signals the whole process group, workers included: none of them is restarted now.
    for (const worker of workers) worker.stopping = true;
    log.info({ signal }, 'stopping');
    await stopAll();
    process.stdout.write(`driftline: stopped (${signal}): the API, the workers and the Temporal dev server are down.\n`);
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));

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
    }).catch((err: Error) => abort(err.message));
    env.TEMPORAL_ADDRESS = devServer.address;
    config.temporal.address = devServer.address;
    recordPids();
    const logFile = join(config.dataDir, 'temporal.log');
    loadWatch = watchTemporalLoad(logFile, { onOverload: (message) => log.warn(message) });
  }

  // Build each library's index now if none exists, so the first run does not wait for it: with
  // the configured embedder and re-ranking, exactly what the main worker will search.
  const { registry: indexes, embedder } = await buildRetrieval(config, log).catch((err: Error) =>
    abort(`cannot set up retrieval: ${err.message}`),
  );
  for (const library of config.libraries) {
    log.info(
      { library: library.name, corpus: library.corpus, embedder: embedder?.id ?? 'none (lexical)' },
      'opening the premise index (built now if none exists yet)',
    );
    const opened = await indexes
      .open(library.name)
      .catch((err: Error) => abort(`cannot build the index of library "${library.name}": ${err.message}`));
    log.info(
      { library: library.name, version: opened.version, declarations: opened.index.size, retrieval: opened.index.kind },
      opened.built ? 'built the index (none existed yet)' : 'index ready',
    );
  }

  // The workflows are bundled once, here: the main worker, and every restart of it, loads this
  // bundle instead of bundling again (slow on a busy machine, and a restarted worker is not
  // ready until it is done).
  if (!config.temporal.workflowBundle) {
    env.DRIFTLINE_WORKFLOW_BUNDLE = await writeWorkflowBundle(join(config.dataDir, 'workflow-bundle.js')).catch((err: Error) =>
      abort(`cannot bundle the workflows: ${err.message}`),
    );
  }
  // A Lean worker without its sandbox refuses to start: say so once, now, rather than restart it.
  if (config.lean.replCmd) {
    try {
      sandboxCommand(config.lean.replCmd, leanSandboxSettings(config));
    } catch (err) {
      if (err instanceof SandboxUnavailableError) await abort(err.message);
      throw err;
    }
  }
  workers.push({ queue: 'main', stopping: false, quickExits: 0 }, { queue: 'lean', stopping: false, quickExits: 0 });
  for (const worker of workers) spawnWorker(worker, env, recordPids);

  client = await connectClient(config).catch((err: Error) => abort(err.message));
  // Sweeps are recorded here (and by the main worker, which opens the same database).
  results = await openResults(config).catch((err: Error) => abort(err.message));
  const readiness = readinessFor(config, client, {
    unbuiltIndexes: () => indexes.unbuilt(),
    // Ready means the worker processes running now poll, not ones that died a moment ago.
    workerIdentities: () => Object.fromEntries(workers.map((w) => [w.queue, workerIdentity(w.child)])),
    warnings: () => [loadWatch?.describe()].filter((w): w is string => Boolean(w)),
  });
  app = await buildServer(
    apiOptionsFor(config, {
      client,
      readiness,
      catalog: registryCatalog(indexes),
      results,
      currentIndexVersion: (library: string) => indexes.store.getAlias(library),
      temporalUiUrl: devServer?.uiUrl,
    }),
  );
  // Without API keys anyone who can reach the port could start runs: loopback only then.
  const listen = apiListenHost(config);
  if (listen.host !== config.api.host) {
    log.warn({ host: config.api.host }, 'no API keys configured (DRIFTLINE_API_KEYS): the API listens on loopback only');
  }
  const apiUrl = await app
    .listen({ host: listen.host, port: config.api.port })
    .catch((err: Error) => abort(`the API cannot listen on ${listen.host}:${config.api.port} (${err.message}). Set PORT to a free port.`));

  // The banner says "running" only once it is true: workers polling both queues, indexes open.
  log.info('waiting for the workers to poll Temporal');
  const readyBy = Date.now() + 180_000;
  let report = await readiness();
  // No library (its data not pulled) does not come by waiting: the banner then says so at once.
  const settled = (r: typeof report) => Object.entries(r.checks).every(([name, c]) => c.ok || name === 'library');
  while (!settled(report) && Date.now() < readyBy && !stopping) {
    await new Promise((r) => setTimeout(r, 500));
    report = await readiness();
  }
  if (stopping) return;
  const notReady = Object.entries(report.checks)
    .filter(([, c]) => !c.ok)
    .map(([name, c]) => `  not ready:   ${name}: ${c.detail ?? 'failing'}`);
  runWatcher = watchRuns(client, log);

  const lines = [
    '',
    notReady.length ? 'driftline is started, but not ready yet (GET /readyz says when it is):' : 'driftline is running.',
    ...notReady,
    `  Web page     ${apiUrl}/`,
    `  API          ${apiUrl}   (POST /v1/formalizations, GET /readyz; reference at ${apiUrl}/docs)`,
    config.api.keys.length > 0
      ? `  API keys     ${config.api.keys.length} configured (${config.api.keys.map((k) => k.name).join(', ')}); /v1 needs "Authorization: Bearer <key>"`
      : '  API keys     none configured: listening on loopback only, no key needed (set DRIFTLINE_API_KEYS to open it up)',
    ...(devServer ? [`  Temporal UI  ${devServer.uiUrl}`] : []),
    `  Temporal     ${config.temporal.address} (namespace ${config.temporal.namespace})`,
    config.libraries.length
      ? `  libraries    ${config.libraries.map((l) => l.name).join(', ')} (default ${config.libraries[0]!.name})`
      : '  libraries    none (see "not configured" below)',
    ...missingServices(config).map((m) => `  not configured: ${m}`),
    '  Try: npx driftline formalize "Every prime greater than 2 is odd."',
    '  Ctrl-C (or a SIGTERM to this process) stops everything.',
    '',
  ];
  process.stdout.write(lines.join('\n') + '\n');
}

// Run directly (`npm start`), not when bundled into the CLI (`driftline start` calls startStack).
if (import.meta.url.endsWith('/infra/start.ts') && import.meta.url === `file://${process.argv[1]}`) {
  await startStack();
}
