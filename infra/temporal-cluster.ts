// A Temporal cluster on PostgreSQL, on this machine: the frontend, history, matching and
// internal-worker services as four processes of the real server (built by
// temporal-cluster-tools.ts), each started from infra/temporal/config.yaml (the one template
// compose and DEPLOY.md use too) and restarted when it dies, the Temporal UI server beside them,
// the persistence and visibility schemas set up or upgraded, the namespace and driftline's
// search attributes registered. PostgreSQL is one given by URL or one of its own in the folder.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { dieWithParent } from './child-guard';
import { DEFAULT_TEMPORAL_NAMESPACE } from './config';
import { localPostgres, type LocalPostgres } from './local-postgres';
import type { ClusterTools } from './temporal-cluster-tools';
import type { Connection } from '@temporalio/client';
import { connectTemporal } from './temporal-connection';
import { ensureNamespace, registerSearchAttributes } from './temporal-setup';

/** The server configuration template and its dynamic configuration (shared with compose). */
export const CLUSTER_CONFIG = fileURLToPath(new URL('./temporal/config.yaml', import.meta.url));
export const CLUSTER_DYNAMIC_CONFIG = fileURLToPath(new URL('./temporal/dynamicconfig.yaml', import.meta.url));

export const CLUSTER_SERVICES = ['history', 'matching', 'frontend', 'worker'] as const;
export type ClusterService = (typeof CLUSTER_SERVICES)[number];

export interface ClusterPorts {
  frontend: number;
  frontendHttp: number;
  history: number;
  matching: number;
  worker: number;
  frontendMembership: number;
  historyMembership: number;
  matchingMembership: number;
  workerMembership: number;
  ui: number;
}

/** Temporal's own defaults (the UI on 8233, as the dev server's). */
export const DEFAULT_CLUSTER_PORTS: ClusterPorts = {
  frontend: 7233,
  frontendHttp: 7243,
  history: 7234,
  matching: 7235,
  worker: 7239,
  frontendMembership: 6933,
  historyMembership: 6934,
  matchingMembership: 6935,
  workerMembership: 6939,
  ui: 8233,
};

export interface ClusterOptions {
  tools: ClusterTools;
  /** Logs, the UI server's config and (without postgresUrl) PostgreSQL's data. */
  dir: string;
  /** A PostgreSQL server whose user may create databases; without it one is started in `dir`. */
  postgresUrl?: string;
  /** Port of the PostgreSQL started in `dir` (default 5432+offset-free: 55432). */
  postgresPort?: number;
  /** false: the PostgreSQL started in `dir` skips fsync (tests only; see local-postgres.ts). */
  durablePostgres?: boolean;
  /** More settings of the PostgreSQL started in `dir` (`name=value`). */
  postgresSettings?: string[];
  ports?: Partial<ClusterPorts>;
  /** History shards: fixed when the databases are created (default 4). */
  shards?: number;
  /** The namespace to register (default TEMPORAL_NAMESPACE's default, infra/config.ts). */
  namespace?: string;
  /** Database names; default temporal, temporal_visibility and driftline (results). */
  databases?: { temporal?: string; visibility?: string; results?: string };
  /** Start the Temporal UI server too (default true). */
  ui?: boolean;
  log?: (line: string) => void;
}

function childPids(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** CPU seconds (user + system) a process and its reaped children have used, from /proc. */
function cpuSecondsOf(pid: number | undefined, withChildren = false): number {
  if (!pid) return 0;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]) + (withChildren ? Number(fields[13]) + Number(fields[14]) : 0);
    return ticks / 100;
  } catch {
    return 0;
  }
}

export interface ServiceProcess {
  readonly service: ClusterService;
  child?: ChildProcess;
  /** Times started, the first included. */
  starts: number;
}

export interface TemporalCluster {
  /** host:port of the frontend: what TEMPORAL_ADDRESS is set to. */
  address: string;
  namespace: string;
  uiUrl?: string;
  /** postgres:// URL of the results database on the same server (DRIFTLINE_RESULTS_URL). */
  resultsUrl: string;
  postgres?: LocalPostgres;
  services: Record<ClusterService, ServiceProcess>;
  /** CPU seconds used so far by the four services (their current processes) and by PostgreSQL
   * when started here (the server and its connection processes, live and ended). */
  cpuSeconds(): { temporal: number; postgres: number };
  /** Sends `signal` (default SIGKILL) to a service and waits for it to exit; it is started again. */
  kill(service: ClusterService, signal?: NodeJS.Signals): Promise<void>;
  /** Resolves once the service has been started again after `previousStarts` starts. */
  restarted(service: ClusterService, previousStarts: number): Promise<void>;
  stop(): Promise<void>;
}

interface PgTarget {
  host: string;
  port: number;
  user: string;
  password: string;
  /** The URL, for a database other than the one it names. */
  urlFor(database: string): string;
}

function pgTarget(url: string): PgTarget {
  const parsed = new URL(url);
  return {
    host: parsed.hostname,
    port: Number(parsed.port || 5432),
    user: decodeURIComponent(parsed.username),
    password: decodeURIComponent(parsed.password),
    urlFor(database) {
      const copy = new URL(url);
      copy.pathname = `/${database}`;
      return copy.toString();
    },
  };
}

async function withPg<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function ensureDatabase(adminUrl: string, name: string): Promise<void> {
  await withPg(adminUrl, async (client) => {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    // The name is ours (options), never outside input; quoted as an identifier all the same.
    if (found.rowCount === 0) await client.query(`CREATE DATABASE "${name.replaceAll('"', '""')}"`);
  });
}

async function hasSchema(url: string): Promise<boolean> {
  return withPg(url, async (client) => {
    const r = await client.query("SELECT 1 FROM information_schema.tables WHERE table_name = 'schema_version'");
    return (r.rowCount ?? 0) > 0;
  });
}

/** setup-schema once (version 0.0), then update-schema to the newest version shipped. */
async function setUpSchema(tools: ClusterTools, target: PgTarget, database: string, kind: 'temporal' | 'visibility'): Promise<void> {
  const common = ['--plugin', 'postgres12', '--ep', target.host, '-p', String(target.port), '-u', target.user, '--db', database];
  const env = { ...process.env, SQL_PASSWORD: target.password };
  const tool = (args: string[]) => {
    const r = spawnSync(tools.sqlTool, [...common, ...args], { env, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`temporal-sql-tool ${args[0]} on ${database} failed:\n${(r.stdout + r.stderr).trim()}`);
  };
  if (!(await hasSchema(target.urlFor(database)))) tool(['setup-schema', '-v', '0.0']);
  tool(['update-schema', '-d', join(tools.schemaDir, kind, 'versioned')]);
}

function serviceEnv(
  target: PgTarget,
  ports: ClusterPorts,
  shards: number,
  dbs: { temporal: string; visibility: string },
): NodeJS.ProcessEnv {
  return {
    ...process.env,
    POSTGRES_SEEDS: target.host,
    DB_PORT: String(target.port),
    POSTGRES_USER: target.user,
    POSTGRES_PWD: target.password,
    DBNAME: dbs.temporal,
    VISIBILITY_DBNAME: dbs.visibility,
    NUM_HISTORY_SHARDS: String(shards),
    BIND_ON_IP: '127.0.0.1',
    FRONTEND_GRPC_PORT: String(ports.frontend),
    FRONTEND_HTTP_PORT: String(ports.frontendHttp),
    HISTORY_GRPC_PORT: String(ports.history),
    MATCHING_GRPC_PORT: String(ports.matching),
    WORKER_GRPC_PORT: String(ports.worker),
    FRONTEND_MEMBERSHIP_PORT: String(ports.frontendMembership),
    HISTORY_MEMBERSHIP_PORT: String(ports.historyMembership),
    MATCHING_MEMBERSHIP_PORT: String(ports.matchingMembership),
    WORKER_MEMBERSHIP_PORT: String(ports.workerMembership),
    DYNAMIC_CONFIG_FILE_PATH: CLUSTER_DYNAMIC_CONFIG,
    LOG_LEVEL: 'warn',
  };
}

/** A connection to the frontend once it answers (the services join each other first). */
async function waitForFrontend(address: string, deadline: number): Promise<Connection> {
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      const connection = await connectTemporal({ address, connectTimeout: 2000 });
      try {
        await connection.workflowService.getSystemInfo({});
        return connection;
      } catch (err) {
        await connection.close().catch(() => undefined);
        throw err;
      }
    } catch (err) {
      lastError = err;
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
  throw new Error(
    `the Temporal frontend did not answer on ${address}: ${(lastError as Error)?.message} (logs: the cluster folder's logs/)`,
  );
}

/** The UI server's configuration (its own format): the frontend to show, loopback only. */
function writeUiConfig(dir: string, address: string, port: number, namespace: string): void {
  const configDir = join(dir, 'ui-config');
  mkdirSync(configDir, { recursive: true });
  writeFileSync(
    join(configDir, 'cluster.yaml'),
    [
      `temporalGrpcAddress: ${address}`,
      `host: 127.0.0.1`,
      `port: ${port}`,
      `enableUi: true`,
      `cors:`,
      `  allowOrigins: []`,
      `defaultNamespace: ${namespace}`,
      `auth:`,
      `  enabled: false`,
      '',
    ].join('\n'),
  );
}

export async function startCluster(options: ClusterOptions): Promise<TemporalCluster> {
  const log = options.log ?? (() => undefined);
  const ports: ClusterPorts = { ...DEFAULT_CLUSTER_PORTS, ...options.ports };
  // The SQL schema keeps membership ports in a smallint column: a port above 32767 makes every
  // service die at start ("out of range for type smallint").
  const tooHigh = (['frontendMembership', 'historyMembership', 'matchingMembership', 'workerMembership'] as const).filter(
    (k) => ports[k] > 32_767,
  );
  if (tooHigh.length)
    throw new Error(
      `Temporal on PostgreSQL stores membership ports as a smallint: ${tooHigh.map((k) => `${k} ${ports[k]}`).join(', ')} must be at most 32767 (choose a lower --port)`,
    );
  const namespace = options.namespace ?? DEFAULT_TEMPORAL_NAMESPACE;
  const shards = options.shards ?? 4;
  const dbs = {
    temporal: options.databases?.temporal ?? 'temporal',
    visibility: options.databases?.visibility ?? 'temporal_visibility',
    results: options.databases?.results ?? 'driftline',
  };
  mkdirSync(join(options.dir, 'logs'), { recursive: true });

  let postgres: LocalPostgres | undefined;
  let adminUrl = options.postgresUrl;
  if (!adminUrl) {
    log(`starting PostgreSQL in ${join(options.dir, 'postgres')}`);
    postgres = localPostgres({
      dir: join(options.dir, 'postgres'),
      port: options.postgresPort ?? 55432,
      durable: options.durablePostgres ?? true,
      settings: options.postgresSettings,
    });
    adminUrl = postgres.url;
  }
  const target = pgTarget(adminUrl);
  for (const name of Object.values(dbs)) await ensureDatabase(adminUrl, name);
  log('setting up the Temporal schemas (persistence and visibility)');
  await setUpSchema(options.tools, target, dbs.temporal, 'temporal');
  await setUpSchema(options.tools, target, dbs.visibility, 'visibility');

  const env = serviceEnv(target, ports, shards, dbs);
  let stopping = false;
  const services = Object.fromEntries(CLUSTER_SERVICES.map((s) => [s, { service: s, starts: 0 }])) as Record<
    ClusterService,
    ServiceProcess
  >;
  const startListeners: Array<() => void> = [];
  const spawnService = (proc: ServiceProcess) => {
    const out = openSync(join(options.dir, 'logs', `${proc.service}.log`), 'a');
    const [command, args] = dieWithParent(
      options.tools.server,
      ['--config-file', CLUSTER_CONFIG, '--allow-no-auth', 'start', '--service', proc.service],
      'KILL',
    );
    const child = spawn(command, args, { env, stdio: ['ignore', out, out] });
    closeSync(out);
    proc.child = child;
    proc.starts++;
    for (const listener of startListeners.splice(0)) listener();
    child.once('exit', (code, signal) => {
      if (stopping) return;
      log(`temporal ${proc.service} exited (${signal ?? code}); starting it again`);
      setTimeout(() => !stopping && spawnService(proc), 500);
    });
  };
  for (const s of CLUSTER_SERVICES) spawnService(services[s]);

  let ui: ChildProcess | undefined;
  const address = `127.0.0.1:${ports.frontend}`;
  const stopProcesses = async () => {
    stopping = true;
    const children = [...Object.values(services).map((s) => s.child), ui].filter(
      (c): c is ChildProcess => c !== undefined && c.exitCode === null && c.signalCode === null,
    );
    await Promise.all(
      children.map(
        (child) =>
          new Promise<void>((resolve) => {
            const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
            child.once('exit', () => {
              clearTimeout(timer);
              resolve();
            });
            child.kill('SIGTERM');
          }),
      ),
    );
  };
  try {
    log(`waiting for the frontend on ${address}`);
    const connection = await waitForFrontend(address, Date.now() + 180_000);
    try {
      await ensureNamespace(connection, namespace, { timeoutMs: 120_000, log });
      const registered = await registerSearchAttributes(connection, namespace, { timeoutMs: 60_000 });
      if (registered.added.length) log(`registered search attributes ${registered.added.join(', ')}`);
    } finally {
      await connection.close();
    }
  } catch (err) {
    await stopProcesses();
    postgres?.stop();
    throw err;
  }

  let uiUrl: string | undefined;
  if (options.ui !== false) {
    writeUiConfig(options.dir, address, ports.ui, namespace);
    const out = openSync(join(options.dir, 'logs', 'ui.log'), 'a');
    const [command, args] = dieWithParent(
      options.tools.uiServer,
      ['--root', options.dir, '--config', 'ui-config', '--env', 'cluster', 'start'],
      'KILL',
    );
    ui = spawn(command, args, { stdio: ['ignore', out, out] });
    closeSync(out);
    uiUrl = `http://127.0.0.1:${ports.ui}`;
  }

  return {
    address,
    namespace,
    uiUrl,
    resultsUrl: target.urlFor(dbs.results),
    postgres,
    services,
    cpuSeconds() {
      const temporal = Object.values(services).reduce((sum, s) => sum + cpuSecondsOf(s.child?.pid), 0);
      let pgCpu = 0;
      const postmaster = postgres?.pid();
      if (postmaster) {
        pgCpu = cpuSecondsOf(postmaster, true);
        for (const child of childPids(postmaster)) pgCpu += cpuSecondsOf(child);
      }
      return { temporal, postgres: pgCpu };
    },
    async kill(service, signal = 'SIGKILL') {
      const child = services[service].child;
      if (!child || child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill(signal);
      await exited;
    },
    restarted(service, previousStarts) {
      if (services[service].starts > previousStarts) return Promise.resolve();
      return new Promise((resolve) => {
        const check = () => (services[service].starts > previousStarts ? resolve() : startListeners.push(check));
        startListeners.push(check);
      });
    },
    async stop() {
      await stopProcesses();
      postgres?.stop();
    },
  };
}
