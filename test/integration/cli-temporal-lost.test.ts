// `driftline formalize` when Temporal goes away in the middle of a run: the command must say
// which run it was and how to follow it once Temporal is back, not "Failed to describe workflow".
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { FIXTURE_CORPUS, startTemporal } from '../helpers/stack';
import { recordServedLibraries } from '../../client/stack-libraries';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
let env: TestWorkflowEnvironment | undefined;
const dataDir = mkdtempSync(join(tmpdir(), 'driftline-cli-lost-'));

afterAll(async () => {
  await env?.teardown().catch(() => undefined);
  rmSync(dataDir, { recursive: true, force: true });
});

describe('driftline formalize', () => {
  it('names the run and what to do when Temporal stops answering mid-run', async () => {
    env = await startTemporal();
    // A stack's main worker recorded its library here as it started, then went away.
    recordServedLibraries(dataDir, ['mini']);
    // No worker polls this server: the run stays in progress for as long as we like.
    const child = spawn(process.execPath, [join(ROOT, 'bin/driftline.js'), 'formalize', 'Every prime number p is at least 2.'], {
      cwd: ROOT,
      env: {
        ...process.env,
        TEMPORAL_ADDRESS: env.address,
        DRIFTLINE_LIBRARIES: `mini=${FIXTURE_CORPUS}`,
        DRIFTLINE_DATA_DIR: dataDir,
        DRIFTLINE_TEMPORAL_GRACE_MS: '1500',
        PORT: '18080',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

    const deadline = Date.now() + 60_000;
    while (!/run formalize-\S+/.test(stderr) && Date.now() < deadline && child.exitCode === null)
      await new Promise((r) => setTimeout(r, 100));
    const id = /run (formalize-\S+)/.exec(stderr)?.[1];
    expect(id, stderr).toBeDefined();

    const t0 = Date.now();
    await env.teardown();
    env = undefined;
    const code = await exited;
    // The grace period and one look's deadline, not the client's long retry of a dead server.
    expect(Date.now() - t0).toBeLessThan(35_000);
    expect(code).toBe(1);
    expect(stderr).toContain(`lost contact with Temporal at`);
    expect(stderr).toContain(`while run ${id} was in progress`);
    expect(stderr).toContain(`curl http://127.0.0.1:18080/v1/formalizations/${id}`);
    expect(stderr).toContain('The run is not lost');
    expect(stderr).not.toMatch(/^driftline: Failed to describe workflow/m);
  }, 120_000);
});
