// `npm start` pointed at a Temporal cluster on PostgreSQL (infra/temporal-cluster.ts) with
// TEMPORAL_ADDRESS and DRIFTLINE_RESULTS_URL: it starts no dev server, GET /readyz is 200 once
// its workers poll the cluster, and the web page runs a formalization end to end in a browser
// (the recent-runs list reads the cluster's SQL visibility, search attributes included). The
// Temporal UI server beside the cluster answers too.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { FAKE_MODELS, startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';
import { fakeRepl, type FakeRepl } from '../fakes/fake-repl-harness';
import { FIXTURE_CORPUS, FIXTURE_LIBRARY } from '../helpers/stack';
import { freePort } from '../helpers/ports';
import { browserAvailable, launchBrowser, screenshotPath } from '../helpers/browser';
import { clusterAvailable, startTestCluster, type TestCluster } from '../helpers/cluster';
import { pidFile } from '../../infra/stack-pids';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const STATEMENT = 'If p is a prime number then p is at least 2.';

let cluster: TestCluster;
let llm: FakeOpenAI;
let repl: FakeRepl;
let dataDir: string;
let api: string;
let stack: ChildProcess | undefined;
let output = '';
let browser: Browser | undefined;

describe.skipIf(!clusterAvailable)('npm start against a Temporal cluster', () => {
  beforeAll(async () => {
    cluster = await startTestCluster();
    llm = await startFakeOpenAI();
    repl = fakeRepl();
    dataDir = mkdtempSync(join(tmpdir(), 'driftline-cluster-stack-'));
    const port = await freePort();
    api = `http://127.0.0.1:${port}`;
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      PORT: String(port),
      TEMPORAL_ADDRESS: cluster.address,
      TEMPORAL_NAMESPACE: cluster.namespace,
      TEMPORAL_UI_URL: cluster.uiUrl,
      // Where a dev server would go if one were started anyway: the test checks none is.
      TEMPORAL_PORT: String(await freePort()),
      TEMPORAL_UI_PORT: String(await freePort()),
      DRIFTLINE_RESULTS_URL: cluster.resultsUrl,
      DRIFTLINE_DATA_DIR: dataDir,
      DRIFTLINE_LIBRARIES: `${FIXTURE_LIBRARY}=${FIXTURE_CORPUS}`,
      OPENAI_BASE_URL: llm.url,
      OPENAI_API_KEY: 'test-key',
      DRIFTLINE_MODEL_DECOMPOSER: FAKE_MODELS.decomposer,
      DRIFTLINE_MODEL_FORMALIZER: FAKE_MODELS.formalizer,
      DRIFTLINE_MODEL_JUDGE: FAKE_MODELS.judge,
      LEAN_REPL_CMD: repl.command,
      ...repl.sandboxEnv,
    };
    stack = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'infra/start.ts')], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    stack.stdout!.on('data', (d: Buffer) => (output += d.toString()));
    stack.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    if (stack && stack.exitCode === null) {
      const exited = new Promise((resolve) => stack!.once('exit', resolve));
      stack.kill('SIGINT');
      await exited;
    }
    await cluster?.teardown();
    await llm?.close();
    repl?.cleanup();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('starts no dev server, and GET /readyz is 200 once both workers poll the cluster', async () => {
    const deadline = Date.now() + 240_000;
    let body: { ready?: boolean; checks?: Record<string, { ok: boolean }> } = {};
    for (;;) {
      const response = await fetch(`${api}/readyz`).catch(() => undefined);
      if (response?.status === 200) {
        body = (await response.json()) as typeof body;
        break;
      }
      if (stack!.exitCode !== null) throw new Error(`npm start exited (${stack!.exitCode}):\n${output}`);
      if (Date.now() > deadline) throw new Error(`not ready in time:\n${output}`);
      await new Promise((r) => setTimeout(r, 500));
    }
    expect(body.ready).toBe(true);
    expect(body.checks?.temporal?.ok).toBe(true);
    expect(body.checks?.mainWorker?.ok).toBe(true);
    expect(body.checks?.leanWorker?.ok).toBe(true);
    await expect.poll(() => output, { timeout: 30_000 }).toContain('driftline is running.');
    expect(output).toContain(`Temporal     ${cluster.address}`);
    // No dev server: none among the stack's children, no history file of one, none on its port.
    const pids = JSON.parse(readFileSync(pidFile(dataDir), 'utf8')) as { children: { role: string }[] };
    expect(pids.children.map((c) => c.role).sort()).toEqual(['lean worker', 'main worker']);
    expect(existsSync(join(dataDir, 'temporal.db'))).toBe(false);
    // The Temporal UI server beside the cluster serves its page.
    const ui = await fetch(cluster.uiUrl!);
    expect(ui.status).toBe(200);
    expect(await ui.text()).toMatch(/<html/i);
  }, 300_000);

  it.skipIf(!browserAvailable)(
    'runs a formalization from the web page, and lists it among the recent runs',
    async () => {
      browser = await launchBrowser();
      const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
      const errors: string[] = [];
      page.on('pageerror', (err) => errors.push(err.message));
      await page.goto(`${api}/`);
      await expect.poll(() => page.locator('#library option').count()).toBeGreaterThan(0);
      await page.getByLabel('Statement').fill(STATEMENT);
      await page.getByLabel('Library').selectOption(FIXTURE_LIBRARY);
      await page.getByRole('button', { name: 'Formalize' }).click();
      await page.locator('.result').waitFor({ timeout: 120_000 });
      await page.screenshot({ path: screenshotPath('cluster-page-result.png'), fullPage: true });
      expect(await page.locator('#run-status').textContent()).toBe('completed');
      await expect.poll(() => page.locator('.result pre.final').textContent()).toMatch(/theorem .*:= by sorry/s);
      const id = (await page.locator('#run-id').textContent())!;
      // The link goes to the cluster's UI.
      expect(await page.locator('#run-temporal').getAttribute('href')).toBe(
        `${cluster.uiUrl}/namespaces/${cluster.namespace}/workflows/${encodeURIComponent(id)}`,
      );
      // The recent runs come from the cluster's visibility store (PostgreSQL), with their outcome.
      const row = page.locator('#recent tbody tr', { hasText: id });
      await expect.poll(() => row.count(), { timeout: 60_000 }).toBe(1);
      expect(await row.locator('.badge').first().textContent()).toBe('completed');
      expect(errors).toEqual([]);
      await page.close();
    },
    300_000,
  );
});
