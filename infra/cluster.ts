// `npm run cluster`: a Temporal cluster on PostgreSQL on this machine, in the foreground until
// Ctrl-C (infra/temporal-cluster.ts; docs/cluster.md). Builds the server first when it is not
// built yet. `npm run cluster -- build` only builds (what `npm run setup` does with
// DRIFTLINE_INSTALL_TEMPORAL_SERVER=1).
import { isAbsolute, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { PROJECT_ROOT } from './temporal-cli';
import { DEFAULT_TEMPORAL_NAMESPACE } from './config';
import { ensureClusterTools } from './temporal-cluster-tools';
import { DEFAULT_CLUSTER_PORTS, startCluster, type TemporalCluster } from './temporal-cluster';

const USAGE = `usage: npm run cluster -- [build] [--postgres URL] [--dir DIR] [--shards N] [--port N] [--ui-port N] [--namespace NS]

  build            build the Temporal server, schema tool and UI server into .tools/ and exit
  --postgres URL   a PostgreSQL server whose user may create databases (default: one of its own in DIR)
  --dir DIR        logs, and PostgreSQL's data without --postgres (default $DRIFTLINE_DATA_DIR/cluster)
  --shards N       history shards; fixed when the databases are first created (default 4)
  --port N         the frontend's gRPC port, TEMPORAL_ADDRESS (default 7233; the other services use Temporal's defaults)
  --ui-port N      the Temporal UI (default 8233)
  --namespace NS   registered with driftline's search attributes (default $TEMPORAL_NAMESPACE or default)`;

function fail(message: string): never {
  process.stderr.write(`cluster: ${message}\n`);
  process.exit(1);
}

function positiveInt(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 65_535) fail(`${name} must be a whole number from 1 to 65535, not "${value}"\n${USAGE}`);
  return n;
}

async function main(): Promise<void> {
  let parsed;
  try {
    parsed = parseArgs({
      allowPositionals: true,
      options: {
        postgres: { type: 'string' },
        dir: { type: 'string' },
        shards: { type: 'string' },
        port: { type: 'string' },
        'ui-port': { type: 'string' },
        namespace: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (err) {
    fail(`${(err as Error).message}\n${USAGE}`);
  }
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  if (positionals.length > 1 || (positionals[0] && positionals[0] !== 'build'))
    fail(`unknown command "${positionals.join(' ')}"\n${USAGE}`);
  if (values.postgres && !/^postgres(ql)?:\/\//.test(values.postgres))
    fail('--postgres must be a PostgreSQL URL such as postgres://user:pass@127.0.0.1:5432/postgres');

  const log = (line: string) => process.stdout.write(`cluster: ${line}\n`);
  let tools;
  try {
    tools = ensureClusterTools(log);
  } catch (err) {
    fail((err as Error).message);
  }
  if (positionals[0] === 'build') {
    log(`built: ${tools.server}`);
    return;
  }

  const dataDir = process.env.DRIFTLINE_DATA_DIR || '.driftline';
  const dir = values.dir ?? join(isAbsolute(dataDir) ? dataDir : resolve(PROJECT_ROOT, dataDir), 'cluster');
  const frontend = positiveInt('--port', values.port) ?? DEFAULT_CLUSTER_PORTS.frontend;
  // The other services' ports follow the frontend's, so two clusters can run side by side.
  const shift = frontend - DEFAULT_CLUSTER_PORTS.frontend;
  const ports = Object.fromEntries(
    Object.entries(DEFAULT_CLUSTER_PORTS).map(([k, p]) => [k, k === 'ui' ? (positiveInt('--ui-port', values['ui-port']) ?? p) : p + shift]),
  ) as typeof DEFAULT_CLUSTER_PORTS;
  let cluster: TemporalCluster | undefined;
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log(`stopping (${signal})`);
    await cluster?.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
  try {
    cluster = await startCluster({
      tools,
      dir,
      postgresUrl: values.postgres,
      ports,
      shards: positiveInt('--shards', values.shards),
      namespace: values.namespace ?? process.env.TEMPORAL_NAMESPACE ?? DEFAULT_TEMPORAL_NAMESPACE,
      log,
    });
  } catch (err) {
    fail((err as Error).message);
  }
  process.stdout.write(
    [
      '',
      'The Temporal cluster is running (frontend, history, matching, worker; logs in ' + join(dir, 'logs') + ').',
      `  Temporal UI  ${cluster.uiUrl ?? '(not started)'}`,
      '  Point driftline at it (npm start then starts no dev server):',
      `    export TEMPORAL_ADDRESS=${cluster.address} TEMPORAL_NAMESPACE=${cluster.namespace}`,
      `    export DRIFTLINE_RESULTS_URL=${cluster.resultsUrl}`,
      `    export TEMPORAL_UI_URL=${cluster.uiUrl ?? ''}`,
      '  Ctrl-C stops it.',
      '',
    ].join('\n'),
  );
}

await main();
