// `driftline serve`, the API process of a deployment (infra/compose.yaml): against a Temporal
// server it did not start, with no workers of its own, it serves the page and the API and says
// in /readyz what is missing (infra/api-options.ts builds its options, as for `npm start`).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { FIXTURE_CORPUS, FIXTURE_LIBRARY, startTemporal } from '../helpers/stack';
import { freePort } from '../helpers/worker-processes';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
let env: TestWorkflowEnvironment;
let child: ChildProcess;
let dataDir: string;
let base: string;
let output = '';

beforeAll(async () => {
  env = await startTemporal();
  dataDir = mkdtempSync(join(tmpdir(), 'driftline-serve-'));
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  child = spawn(process.execPath, [join(ROOT, 'bin/driftline.js'), 'serve'], {
    cwd: ROOT,
    env: {
      ...process.env,
      TEMPORAL_ADDRESS: env.address,
      PORT: String(port),
      DRIFTLINE_DATA_DIR: dataDir,
      DRIFTLINE_LIBRARIES: `${FIXTURE_LIBRARY}=${FIXTURE_CORPUS}`,
      TEMPORAL_UI_URL: 'http://temporal-ui.example:8233',
      // A provider nobody serves: its task queue must be named as missing a worker.
      OPENAI_BASE_URL: 'http://127.0.0.1:9/v1',
      OPENAI_API_KEY: 'k',
      DRIFTLINE_LOG_PRETTY: '0',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      if ((await fetch(`${base}/healthz`)).ok) break;
    } catch {
      // not listening yet
    }
    if (child.exitCode !== null) throw new Error(`driftline serve exited (${child.exitCode}):\n${output}`);
    if (Date.now() > deadline) throw new Error(`driftline serve did not answer:\n${output}`);
    await new Promise((r) => setTimeout(r, 300));
  }
}, 120_000);

afterAll(async () => {
  if (child && child.exitCode === null) {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }
  await env?.teardown();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe('driftline serve', () => {
  it('serves the page and its settings, linking runs to the configured Temporal UI', async () => {
    const page = await fetch(`${base}/`);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await page.text()).toContain('driftline');
    const config = (await (await fetch(`${base}/web/config.json`)).json()) as Record<string, unknown>;
    expect(config).toMatchObject({
      libraries: [FIXTURE_LIBRARY],
      defaultLibrary: FIXTURE_LIBRARY,
      temporalUiUrl: 'http://temporal-ui.example:8233',
    });
  });

  it('is not ready without workers and an index, and says so', async () => {
    const response = await fetch(`${base}/readyz`);
    expect(response.status).toBe(503);
    const report = (await response.json()) as { checks: Record<string, { ok: boolean; detail?: string }> };
    expect(report.checks.temporal?.ok).toBe(true);
    expect(report.checks.mainWorker?.detail).toMatch(/no worker polls the "driftline" task queue/);
    expect(report.checks.leanWorker?.detail).toMatch(/no worker polls the "lean" task queue/);
    expect(report.checks.llmWorkers?.detail).toMatch(/"llm-default"/);
    expect(report.checks.index?.ok).toBe(false);
    expect(report.checks.index?.detail).toContain(FIXTURE_LIBRARY);
  });

  it('serves the routes built from the configuration: libraries, the OpenAPI document, sweeps', async () => {
    const libraries = (await (await fetch(`${base}/v1/libraries`)).json()) as { items?: Array<{ name: string }> } | Array<{ name: string }>;
    expect((Array.isArray(libraries) ? libraries : (libraries.items ?? [])).map((l) => l.name)).toContain(FIXTURE_LIBRARY);
    const doc = (await (await fetch(`${base}/openapi.json`)).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/v1/formalizations', '/v1/sweeps']));
    expect((await fetch(`${base}/v1/sweeps/no-such-sweep`)).status).toBe(404);
  });

  it('stops on SIGTERM', async () => {
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});
