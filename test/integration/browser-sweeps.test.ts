// Sweeps on the web page, in a real browser (chromium through playwright-core) against the real
// Temporal dev server, workers and fakes: the page lists sweeps with their progress per
// configuration as it changes, pauses, resumes and cancels them with its buttons (and retries an
// ended sweep's failed runs), links the
// report and the sweep's runs in the Temporal UI, shows a batch-mode sweep's provider batches at a
// desktop's and a phone's width; the recent runs show what a person knows a
// run by (its statement's first words, its configuration, how long it took).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import type { Browser, Page } from 'playwright-core';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { build } from 'vite';
import { buildServer } from '../../api/server';
import { defaultBrain, FAKE_MODELS, type FakeReply } from '../fakes/openai-server';
import { browserAvailable, launchBrowser, screenshotPath } from '../helpers/browser';
import { createStack, FIXTURE_LIBRARY, startTemporal, type TestStack } from '../helpers/stack';
import { MINI_BENCHMARK, miniSpec, progressOf, startOnStack, waitFor } from '../helpers/sweep';
import { startFormalization } from '../../client/runs';
import type { SweepBatchesView } from '../../common/wire';

const describeInBrowser = browserAvailable ? describe : describe.skip;
const STATEMENT = 'Every prime number greater than two is odd, and so is its square.';

let env: TestWorkflowEnvironment;
let stack: TestStack;
let app: FastifyInstance;
let browser: Browser;
let base: string;
let webRoot: string;
let stopWorkers: (() => Promise<void>) | undefined;
let refuse: string | undefined;
/** What the API's batches reader answers, by sweep (the batchers' in production). */
const batchesBy = new Map<string, SweepBatchesView>();

beforeAll(async () => {
  if (!browserAvailable) return;
  webRoot = mkdtempSync(join(tmpdir(), 'driftline-web-'));
  await build({
    configFile: fileURLToPath(new URL('../../web/vite.config.ts', import.meta.url)),
    build: { outDir: webRoot, emptyOutDir: true },
    logLevel: 'error',
  });
  env = await startTemporal();
  // Each LLM reply takes a moment, so a sweep is still going while the page watches it.
  stack = await createStack(env, {
    queue: 'default',
    llm: {
      handler: async (req) => {
        // A statement the provider refuses while `refuse` names it: its runs fail.
        if (refuse && req.model === FAKE_MODELS.formalizer && req.messages.some((m) => m.content.includes(refuse!)))
          return { status: 400, message: 'this statement is refused by the provider' };
        return { ...(await defaultBrain(req)), delayMs: 150 } as FakeReply;
      },
    },
  });
  app = await buildServer({
    temporal: env.client,
    libraries: [FIXTURE_LIBRARY],
    defaultLibrary: FIXTURE_LIBRARY,
    maxStatementChars: 20_000,
    readiness: async () => ({ ready: true, checks: {}, missing: [] }),
    taskQueue: stack.mainQueue,
    temporalUiUrl: 'http://127.0.0.1:8233',
    namespace: env.namespace ?? 'default',
    webRoot,
    sweeps: {
      results: stack.results,
      dataDir: dirname(MINI_BENCHMARK),
      leanTaskQueue: stack.leanQueue,
      batches: async (id) => batchesBy.get(id),
    },
    pressure: { maxEventLoopDelayMs: 0 },
  });
  base = await app.listen({ host: '127.0.0.1', port: 0 });
  const workers = await stack.createWorkers();
  const running = workers.map((w) => w.run());
  stopWorkers = async () => {
    for (const w of workers) w.shutdown();
    await Promise.allSettled(running);
  };
  browser = await launchBrowser();
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await app?.close();
  await stopWorkers?.();
  await stack?.close();
  await env?.teardown();
  if (webRoot) rmSync(webRoot, { recursive: true, force: true });
});

/** The numbers a configuration's row shows: done/total, failed, running. */
async function configRow(page: Page, sweep: string, config: string): Promise<string[]> {
  return page.locator(`article[data-sweep="${sweep}"] tr[data-config="${config}"] td`).allTextContents();
}

describeInBrowser('sweeps on the web page', () => {
  it('shows live progress per configuration, pauses, resumes, links the report and the runs in the Temporal UI', async () => {
    // Window 1: one run at a time, so the progress moves in steps the page can see.
    const started = await startOnStack(stack, miniSpec({ id: 'page-sweep', window: 1, samples: 1 }));
    const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(err.message));
    await page.goto(`${base}/`);
    const card = page.locator(`article[data-sweep="${started.id}"]`);
    await card.waitFor({ timeout: 30_000 });
    expect(await card.locator('tr[data-config]').evaluateAll((rows) => rows.map((r) => (r as HTMLElement).dataset.config))).toEqual([
      'drift',
      'no-retrieval',
    ]);

    // The counts move without a reload.
    const doneOf = async () => Number((await card.locator('.sweep-total').textContent())!.match(/^(\d+) of/)![1]);
    const first = await doneOf();
    await expect.poll(doneOf, { timeout: 60_000 }).toBeGreaterThan(first);
    await page.screenshot({ path: screenshotPath('page-sweep-running.png'), fullPage: true });

    // Pause from the page: the sweep says paused, nothing new starts, Resume appears.
    await card.getByRole('button', { name: 'Pause' }).click();
    await expect.poll(() => card.locator('.badge').first().textContent(), { timeout: 20_000 }).toBe('paused');
    expect((await progressOf(stack, started.id)).status).toBe('paused');
    expect(await card.getByRole('button', { name: 'Resume' }).count()).toBe(1);
    expect((await configRow(page, started.id, 'drift')).at(-1)).toBe('paused');

    await card.getByRole('button', { name: 'Resume' }).click();
    await expect.poll(() => card.locator('.badge').first().textContent(), { timeout: 120_000 }).toBe('completed');
    // 8 items × 2 configurations × 1 sample, each row full.
    expect(await card.locator('.sweep-total').textContent()).toMatch(/^16 of 16 runs done, 0 failed, 0 running/);
    expect((await configRow(page, started.id, 'drift')).slice(1, 4)).toEqual(['8/8', '0', '0']);
    expect(await card.getByRole('button').count()).toBe(0);

    // The report and the sweep's runs in the Temporal UI.
    const reportHref = (await card.locator('a.report-link').getAttribute('href'))!;
    expect(reportHref).toBe(`/v1/sweeps/${started.id}/report`);
    const report = await fetch(`${base}${reportHref}`, { headers: { accept: 'text/html' } });
    expect(report.status).toBe(200);
    expect(await report.text()).toContain('no-retrieval');
    const runsLink = await card.getByRole('link', { name: 'Its runs in the Temporal UI' }).getAttribute('href');
    expect(runsLink).toBe(
      `http://127.0.0.1:8233/namespaces/default/workflows?query=${encodeURIComponent(`DriftlineSweep="${started.id}"`)}`,
    );
    await page.screenshot({ path: screenshotPath('page-sweep-done.png'), fullPage: true });

    // Its runs in the recent list read as their benchmark items and configurations.
    const sweepRow = page.locator('#recent tbody tr', { hasText: `(sweep ${started.id})` }).first();
    await page.getByRole('button', { name: 'Refresh runs' }).click();
    await sweepRow.waitFor({ timeout: 20_000 });
    expect(['drift', 'no-retrieval']).toContain(await sweepRow.locator('td').nth(1).textContent());
    expect(errors).toEqual([]);
    await page.close();
  }, 240_000);

  it('cancels a sweep after asking, and leaves its finished runs recorded', async () => {
    const started = await startOnStack(stack, miniSpec({ id: 'page-cancel', window: 1, samples: 2 }));
    const page = await browser.newPage();
    let asked = '';
    page.on('dialog', (dialog) => {
      asked = dialog.message();
      void dialog.accept();
    });
    await page.goto(`${base}/`);
    const card = page.locator(`article[data-sweep="${started.id}"]`);
    await card.getByRole('button', { name: 'Cancel' }).click();
    await expect.poll(() => card.locator('.badge').first().textContent(), { timeout: 60_000 }).toBe('cancelled');
    expect(asked).toMatch(/^Cancel sweep page-cancel\?/);
    const p = await waitFor('the cancelled sweep', async () => {
      const q = await progressOf(stack, started.id);
      return q.status === 'cancelled' ? q : null;
    });
    expect(p.done).toBeLessThan(p.total);
    expect(await card.getByRole('button').count()).toBe(0);
    await page.close();
  }, 120_000);

  it('retries the failed runs of an ended sweep with its Retry button', async () => {
    refuse = 'identity is unique';
    const spec = miniSpec({
      id: 'page-retry',
      // Demo.group_one (refused) and Demo.square_nonneg.
      benchmarks: [{ path: MINI_BENCHMARK, format: 'rautoformalizer', offset: 4, limit: 2 }],
      configurations: [{ name: 'mono', config: { retrieval: 'monolithic', judge: false } }],
      maxAttempts: 1,
    });
    const started = await startOnStack(stack, spec);
    const ended = await waitFor(
      'the sweep to end with a failed run',
      async () => {
        const q = await progressOf(stack, started.id);
        return q.status === 'completed' ? q : null;
      },
      120_000,
    );
    expect(ended).toMatchObject({ done: 2, failed: 1 });
    refuse = undefined;
    const page = await browser.newPage();
    await page.goto(`${base}/`);
    const card = page.locator(`article[data-sweep="${started.id}"]`);
    await card.getByRole('button', { name: 'Retry failed' }).click();
    await expect
      .poll(() => card.locator('.sweep-total').textContent(), { timeout: 90_000 })
      .toMatch(/^2 of 2 runs done, 0 failed, 1 retried, 0 running/);
    expect(await card.locator('.badge').first().textContent()).toBe('completed');
    expect(await card.getByRole('button').count()).toBe(0);
    const runs = await stack.results.runs(started.id);
    expect(runs.map((r) => [r.item, r.outcome, r.retryRound])).toEqual([
      ['Demo.group_one', 'compiled', 1],
      ['Demo.square_nonneg', 'compiled', undefined],
    ]);
    await page.close();
  }, 180_000);

  it("lists a run by its statement's first words, its configuration and how long it took", async () => {
    const id = await startFormalization(
      stack.client,
      { statement: STATEMENT, library: FIXTURE_LIBRARY, config: { repairRounds: 0 } },
      stack.mainQueue,
    );
    await stack.client.workflow.getHandle(id).result();
    const page = await browser.newPage();
    await page.goto(`${base}/`);
    const row = page.locator('#recent tbody tr', { hasText: id });
    await row.waitFor({ timeout: 20_000 });
    const cells = await row.locator('td').allTextContents();
    expect(cells[0]).toContain('Every prime number greater than two is odd');
    expect(cells[0]).toContain(id);
    expect(cells[1]).not.toBe('');
    expect(cells[5]).toMatch(/^\d+ (s|min)$/);
    await page.close();
  }, 120_000);

  it("shows a batch-mode sweep's batches in flight and their counts on its card, at 1200 and 390 px", async () => {
    const started = await startOnStack(
      stack,
      miniSpec({
        id: 'page-batches',
        window: 1,
        samples: 1,
        benchmarks: [{ path: MINI_BENCHMARK, format: 'rautoformalizer', limit: 2 }],
        configurations: [{ name: 'drift', config: {} }],
      }),
    );
    const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000).toISOString();
    batchesBy.set(started.id, {
      inFlight: 2,
      submitted: 5,
      completed: 2,
      failed: 1,
      requests: 410,
      resubmitted: 12,
      synchronous: 1,
      batches: [
        {
          id: 'batch_6751a2b3c4d5e6f7a8b9c0d1e2f3a4b5',
          provider: 'default',
          model: FAKE_MODELS.judge,
          status: 'in_progress',
          requests: 200,
          since: minutesAgo(12),
        },
        {
          id: 'batch_0f1e2d3c4b5a69788796a5b4c3d2e1f0',
          provider: 'default',
          model: FAKE_MODELS.formalizer,
          status: 'validating',
          requests: 10,
          since: minutesAgo(0.5),
        },
      ],
    });
    for (const width of [1200, 390]) {
      const page = await browser.newPage({ viewport: { width, height: 900 } });
      const errors: string[] = [];
      page.on('pageerror', (err) => errors.push(err.message));
      await page.goto(`${base}/`);
      const section = page.locator(`article[data-sweep="${started.id}"] section.sweep-batches`);
      await section.waitFor({ timeout: 30_000 });
      expect(await section.getAttribute('aria-label')).toBe(`LLM batches of sweep ${started.id}`);
      expect(await section.locator('.sweep-batch-counts').textContent()).toBe(
        'LLM batches · 2 in flight; 5 submitted, 2 completed, 1 failed; 410 requests, 12 resubmitted, 1 sent one at a time',
      );
      const items = section.locator('li[data-batch]');
      expect(await items.evaluateAll((li) => li.map((x) => (x as HTMLElement).dataset.status))).toEqual(['in_progress', 'validating']);
      expect(await items.first().textContent()).toMatch(
        new RegExp(
          `^default/${FAKE_MODELS.judge} batch_6751a2b3c4d5e6f7a8b9c0d1e2f3a4b5: in_progress at the provider, 200 requests, for 1[12] min \\(since `,
        ),
      );
      expect(await items.nth(1).textContent()).toMatch(/: validating at the provider, 10 requests, for \d+ s \(since /);
      // Nothing runs off the side of a phone's screen.
      expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
      await page.locator(`article[data-sweep="${started.id}"]`).screenshot({ path: screenshotPath(`page-sweep-batches-${width}.png`) });
      expect(errors).toEqual([]);
      await page.close();
    }
    // A sweep the reader has no batches for shows none.
    batchesBy.delete(started.id);
    const page = await browser.newPage();
    await page.goto(`${base}/`);
    await page.locator(`article[data-sweep="${started.id}"]`).waitFor({ timeout: 30_000 });
    expect(await page.locator(`article[data-sweep="${started.id}"] section.sweep-batches`).count()).toBe(0);
    await page.close();
    await stack.client.workflow.getHandle(started.id).result();
  }, 180_000);
});
