// The deployment in infra/: the compose file validates with Docker Compose itself, and every
// driftline container is configured through environment variables that driftline knows.
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ENV_KEYS } from '../../infra/config';

const COMPOSE = fileURLToPath(new URL('../../infra/compose.yaml', import.meta.url));
// Read by infra/logging.ts rather than the config schema.
const LOGGING_ENV = ['DRIFTLINE_LOG_LEVEL', 'DRIFTLINE_LOG_PRETTY', 'DRIFTLINE_WORKER_LOG_LEVEL'];

const hasCompose = spawnSync('docker-compose', ['version'], { stdio: 'ignore' }).status === 0;
// CI installs Debian's docker-compose (.ci/run); elsewhere the check runs when it is there.
const composeCheck = hasCompose || process.env.CI ? it : it.skip;

interface ComposeService {
  image?: string;
  build?: { context: string; dockerfile: string };
  command?: string[];
  entrypoint?: string[];
  environment?: Record<string, string>;
  volumes?: unknown[];
  deploy?: { replicas?: number };
  read_only?: boolean;
  tmpfs?: string[];
}

// A key entry as `driftline keys new` prints it (name:sha256).
const KEYS = { DRIFTLINE_API_KEYS: `ci:${'0'.repeat(64)}` };

function composeConfig(env: Record<string, string> = {}): { services: Record<string, ComposeService>; volumes?: Record<string, unknown> } {
  const out = execFileSync('docker-compose', ['-f', COMPOSE, 'config'], { env: { ...process.env, ...KEYS, ...env }, encoding: 'utf8' });
  return parse(out);
}

describe('infra/compose.yaml', () => {
  composeCheck('is a valid Compose file (docker-compose config)', () => {
    const result = spawnSync('docker-compose', ['-f', COMPOSE, 'config', '--quiet'], {
      env: { ...process.env, ...KEYS },
      encoding: 'utf8',
    });
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
  });

  composeCheck('refuses to start the API without API keys, naming the setting', () => {
    const env = { ...process.env };
    delete env.DRIFTLINE_API_KEYS;
    const result = spawnSync('docker-compose', ['-f', COMPOSE, 'config', '--quiet'], { env, encoding: 'utf8' });
    expect(result.status).not.toBe(0);
    expect(result.stderr).toMatch(/DRIFTLINE_API_KEYS/);
  });

  composeCheck('runs Temporal on PostgreSQL, the UI, Qdrant, the API and both kinds of workers', () => {
    const { services } = composeConfig();
    expect(Object.keys(services).sort()).toEqual(
      [
        'api',
        'index',
        'lean-worker',
        'main-worker',
        'postgresql',
        'qdrant',
        'temporal',
        'temporal-history',
        'temporal-matching',
        'temporal-worker',
        'temporal-schema',
        'temporal-setup',
        'temporal-ui',
      ].sort(),
    );
    // Temporal's four services, each from infra/temporal/config.yaml (what `npm run cluster`
    // runs and test/integration/cluster-*.test.ts exercise), on PostgreSQL.
    for (const [name, service] of [
      ['temporal', 'frontend'],
      ['temporal-history', 'history'],
      ['temporal-matching', 'matching'],
      ['temporal-worker', 'worker'],
    ] as const) {
      expect(services[name]!.environment).toMatchObject({ POSTGRES_SEEDS: 'postgresql' });
      expect(services[name]!.command).toEqual([service]);
      expect(String(services[name]!.entrypoint)).toContain('--config-file /etc/temporal/driftline/config.yaml');
      expect(services[name]!.volumes!.map(String).some((v) => /infra\/temporal:\/etc\/temporal\/driftline:ro$/.test(v))).toBe(true);
    }
    expect(services['lean-worker']!.build!.dockerfile).toBe('lean-image/Dockerfile');
    expect(services['lean-worker']!.read_only).toBe(true);
    expect(services['main-worker']!.command).toEqual(['worker', '--queue', 'main']);
    expect(services.api!.command).toEqual(['serve']);
    expect(services['temporal-setup']!.command).toEqual(['setup-temporal', '--create-namespace']);
  });

  composeCheck('scales the workers of each queue from the environment', () => {
    const { services } = composeConfig({ DRIFTLINE_MAIN_WORKERS: '5', DRIFTLINE_LEAN_WORKERS: '3', LEAN_POOL_SIZE: '6' });
    expect(services['main-worker']!.deploy!.replicas).toBe(5);
    expect(services['lean-worker']!.deploy!.replicas).toBe(3);
    expect(services['lean-worker']!.environment!.LEAN_POOL_SIZE).toBe('6');
  });

  it('configures driftline containers only with settings driftline reads', () => {
    // Parsed directly (YAML anchors resolved), so this holds without Docker Compose too.
    const file = parse(readFileSync(COMPOSE, 'utf8'), { merge: true }) as { services: Record<string, ComposeService> };
    const known = new Set([...Object.keys(ENV_KEYS), ...LOGGING_ENV]);
    const driftline = Object.entries(file.services).filter(([, s]) => s.image?.startsWith('driftline'));
    expect(driftline.map(([name]) => name).sort()).toEqual(['api', 'index', 'lean-worker', 'main-worker', 'temporal-setup']);
    for (const [name, service] of driftline) {
      const unknown = Object.keys(service.environment ?? {}).filter((key) => !known.has(key));
      expect(unknown, `${name} sets variables driftline does not read`).toEqual([]);
      expect(service.environment!.TEMPORAL_ADDRESS).toBe('temporal:7233');
      // No configuration files: only the read-only corpora are mounted.
      for (const volume of service.volumes ?? []) expect(String(volume)).toMatch(/:\/data:ro$/);
    }
  });
});
