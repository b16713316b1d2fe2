// A Temporal cluster on PostgreSQL for tests (infra/temporal-cluster.ts): the real server's four
// services as processes, a PostgreSQL of its own in a temp folder (fsync off), every port free
// and below the ephemeral range. The server is built once per machine into .tools/ (`.ci/run`
// builds it through `npm run setup`); in CI a missing build fails the tests instead of skipping.
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findClusterTools, requireClusterTools } from '../../infra/temporal-cluster-tools';
import { startCluster, type ClusterOptions, type TemporalCluster } from '../../infra/temporal-cluster';
import { freePort } from './ports';

/** Run the cluster tests: the server is built here, or this is CI (where its absence must fail). */
export const clusterAvailable = Boolean(findClusterTools()) || Boolean(process.env.CI);

export interface TestCluster extends TemporalCluster {
  dir: string;
  /** Stops everything and removes the folder. */
  teardown(): Promise<void>;
}

export async function startTestCluster(options: Partial<Omit<ClusterOptions, 'tools' | 'dir'>> = {}): Promise<TestCluster> {
  const tools = requireClusterTools();
  const dir = mkdtempSync(join(tmpdir(), 'driftline-cluster-'));
  // PostgreSQL runs as its own user (as root): it must be able to enter this folder.
  chmodSync(dir, 0o755);
  const ports = {
    frontend: await freePort(),
    frontendHttp: await freePort(),
    history: await freePort(),
    matching: await freePort(),
    worker: await freePort(),
    frontendMembership: await freePort(),
    historyMembership: await freePort(),
    matchingMembership: await freePort(),
    workerMembership: await freePort(),
    ui: await freePort(),
  };
  try {
    const cluster = await startCluster({
      tools,
      dir,
      ports,
      postgresPort: await freePort(),
      durablePostgres: false,
      ...options,
    });
    return Object.assign(cluster, {
      dir,
      async teardown() {
        await cluster.stop();
        rmSync(dir, { recursive: true, force: true });
      },
    });
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}
