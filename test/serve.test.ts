// `driftline serve`: the API alone, as a deployment runs it beside workers on other machines
// (infra/serve.ts). Against the real dev server with no worker polling and no index built, the
// process serves its routes, /readyz names what is missing, and SIGTERM ends it cleanly.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { FIXTURE_CORPUS, FIXTURE_LIBRARY, startTemporal } from './helpers/stack';
import { freePort } from './helpers/ports';

const CLI = fileURLToPath(new URL('../bin/cli.ts', import.meta.url));

let env: TestWorkflowEnvironment;
let api: ChildProcess | undefined;
let dir: string;

beforeAll(async () => {
  env = await startTemporal();
  dir = mkdtempSync(join(tmpdir(), 'driftline-serve-'));
});

afterAll(async () => {
  api?.kill('SIGKILL');
  await env?.teardown();
  rmSync(dir, { recursive: true, force: true });
});

async function waitForHealth(url: string, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 90_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`driftline serve exited with ${child.exitCode}: ${output()}`);
    try {
      if ((await fetch(`${url}/healthz`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 300));
  }
  throw new Error(`driftline serve did not answer /healthz in 90 s: ${output()}`);
}

it('serves the API alone: routes answer, /readyz names the missing workers and index, SIGTERM stops it', async () => {
  const port = await freePort();
  let output = '';
  api = spawn(process.execPath, ['--import', 'tsx', CLI, 'serve'], {
    env: {
      ...process.env,
      TEMPORAL_ADDRESS: env.address,
      PORT: String(port),
      DRIFTLINE_DATA_DIR: join(dir, 'data'),
      DRIFTLINE_LIBRARIES: `${FIXTURE_LIBRARY}=${FIXTURE_CORPUS}`,
      // A provider nobody serves: its queue must be named as missing a worker.
      OPENAI_BASE_URL: 'http://127.0.0.1:9/v1',
      OPENAI_API_KEY: 'k',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  api.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  api.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const url = `http://127.0.0.1:${port}`;
  await waitForHealth(url, api, () => output);

  const ready = await fetch(`${url}/readyz`);
  expect(ready.status).toBe(503);
  const report = (await ready.json()) as { ready: boolean; checks: Record<string, { ok: boolean; detail?: string }> };
  expect(report.ready).toBe(false);
  expect(report.checks.temporal).toEqual({ ok: true });
  expect(report.checks.mainWorker!.detail).toMatch(/no worker polls the "driftline" task queue/);
  expect(report.checks.leanWorker!.detail).toMatch(/no worker polls the "lean" task queue/);
  expect(report.checks.llmWorkers!.detail).toMatch(/"llm-default"/);
  expect(report.checks.index!.detail).toMatch(/no premise index is built for "mini"/);

  // The routes built from the configuration: libraries, the OpenAPI document, sweeps.
  const libraries = (await (await fetch(`${url}/v1/libraries`)).json()) as { items?: Array<{ name: string }> } | Array<{ name: string }>;
  const names = (Array.isArray(libraries) ? libraries : libraries.items ?? []).map((l) => l.name);
  expect(names).toContain(FIXTURE_LIBRARY);
  const doc = (await (await fetch(`${url}/openapi.json`)).json()) as { paths: Record<string, unknown> };
  expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/v1/formalizations', '/v1/sweeps']));
  expect((await fetch(`${url}/v1/sweeps/no-such-sweep`)).status).toBe(404);

  const exited = new Promise<number | null>((resolve) => api!.once('exit', (code) => resolve(code)));
  api.kill('SIGTERM');
  expect(await exited).toBe(0);
  api = undefined;
}, 180_000);
