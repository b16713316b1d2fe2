// The Lean worker's configuration: pool size and limits from the environment, and the
// dependencies built from them (pool, sandbox, names, safety policy, worker concurrency).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../infra/config';
import { buildLeanDeps, leanWorkerConcurrency } from '../../infra/deps';
import { ReplPool } from '../../engines/lean/repl-pool';
import { FIXTURE_CORPUS } from '../helpers/stack';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function load(env: Record<string, string>) {
  const root = mkdtempSync(join(tmpdir(), 'driftline-lean-config-'));
  dirs.push(root);
  return loadConfig({ env: { DRIFTLINE_LIBRARIES: `mini=${FIXTURE_CORPUS}`, ...env }, root });
}

describe('Lean configuration', () => {
  it('has pool defaults that run on one machine', () => {
    const { lean } = load({});
    expect(lean).toMatchObject({ poolSize: 2, maxUses: 500, headerTimeoutMs: 600_000, noNetwork: true });
    expect(lean.allowedImports).toContain('Mathlib');
  });

  it('reads pool size and limits from LEAN_* variables', () => {
    const config = load({
      LEAN_POOL_SIZE: '4',
      LEAN_MAX_USES: '50',
      LEAN_MAX_RSS_MB: '8000',
      LEAN_HEADER_TIMEOUT_MS: '90000',
      LEAN_MAX_AS_MB: '40000',
      LEAN_NO_NETWORK: 'false',
      LEAN_ALLOWED_IMPORTS: 'Mathlib, ConNF',
    });
    expect(config.lean).toMatchObject({
      poolSize: 4,
      maxUses: 50,
      maxRssMb: 8000,
      headerTimeoutMs: 90_000,
      maxAddressSpaceMb: 40_000,
      noNetwork: false,
    });
    expect(config.lean.allowedImports).toEqual(['Mathlib', 'ConNF']);
    expect(leanWorkerConcurrency(config)).toBe(6);
  });

  it('sandboxes the REPL by default, and reads the sandbox settings from LEAN_SANDBOX_*', () => {
    expect(load({}).lean).toMatchObject({
      sandbox: 'bwrap',
      sandboxBwrap: 'bwrap',
      maxAddressSpaceMb: 32_768,
      maxProcesses: 2048,
      sandboxUser: { uid: 65534, gid: 65534 },
      sandboxRead: [],
      sandboxWrite: [],
      sandboxEnv: [],
    });
    const config = load({
      LEAN_SANDBOX: 'off',
      LEAN_SANDBOX_BWRAP: '/opt/bin/bwrap',
      LEAN_SANDBOX_USER: '1234:99',
      LEAN_SANDBOX_MAX_PROCS: '0',
      LEAN_SANDBOX_READ: '/opt/repl, /opt/more',
      LEAN_SANDBOX_WRITE: '/var/cache/lean',
      LEAN_SANDBOX_ENV: 'LEAN_NUM_THREADS',
      LEAN_MAX_AS_MB: '0',
    });
    expect(config.lean).toMatchObject({
      sandbox: 'off',
      sandboxBwrap: '/opt/bin/bwrap',
      sandboxUser: { uid: 1234, gid: 99 },
      maxProcesses: 0,
      maxAddressSpaceMb: 0,
      sandboxRead: ['/opt/repl', '/opt/more'],
      sandboxWrite: ['/var/cache/lean'],
      sandboxEnv: ['LEAN_NUM_THREADS'],
    });
    expect(() => load({ LEAN_SANDBOX: 'none' })).toThrow(/LEAN_SANDBOX/);
    expect(() => load({ LEAN_SANDBOX_READ: 'relative/path' })).toThrow(/LEAN_SANDBOX_READ/);
    expect(() => load({ LEAN_SANDBOX_USER: 'nobody' })).toThrow(/LEAN_SANDBOX_USER/);
    expect(() => load({ LEAN_MAX_AS_MB: '100' })).toThrow(/LEAN_MAX_AS_MB/);
    expect(() => load({ LEAN_SANDBOX_ENV: 'QDRANT_API_KEY' })).toThrow(/QDRANT_API_KEY is not passed to the Lean REPL/);
  });

  it('names a bad pool size', () => {
    expect(() => load({ LEAN_POOL_SIZE: '0' })).toThrow(ConfigError);
    expect(() => load({ LEAN_POOL_SIZE: '0' })).toThrow(/LEAN_POOL_SIZE/);
  });

  it('builds a pool of the configured size, and the safety policy from the allowed imports', async () => {
    const deps = buildLeanDeps(
      load({ LEAN_REPL_CMD: 'true', LEAN_POOL_SIZE: '3', LEAN_ALLOWED_IMPORTS: 'Mathlib', LEAN_NO_NETWORK: 'false' }),
    );
    expect(deps.lean).toBeInstanceOf(ReplPool);
    expect((deps.lean as ReplPool).size).toBe(3);
    expect(deps.policy?.allowedImports).toEqual(['Mathlib']);
    expect(await deps.names?.names('mini')).toContain('Nat.Prime');
    await deps.lean.close();
  });
});
