// The web page at `/`, in a real browser (chromium through playwright-core): a person pastes a
// statement, watches each stage arrive from the API's server-sent events, then reads the result;
// the recent runs list shows it with its outcome. Screenshots go to .driftline/screenshots/.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import type { Browser, Page } from 'playwright-core';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { build } from 'vite';
import { buildServer } from '../../api/server';
import { defaultBrain, type FakeReply } from '../fakes/openai-server';
import { browserAvailable, launchBrowser, screenshotPath } from '../helpers/browser';
import { createStack, FIXTURE_LIBRARY, startTemporal, type TestStack } from '../helpers/stack';
import { HOSTILE_REPLY, refusingCompile } from '../helpers/refusing-lean';
import { createLeanActivities } from '../../activities';
import { createLeanWorker } from '../../infra/workers';
import { startFormalization } from '../../client/runs';
import { FAKE_MODELS } from '../fakes/openai-server';

const describeInBrowser = browserAvailable ? describe : describe.skip;
const REFUSING_QUEUE = `lean-refusing-${process.pid}`;
const STATEMENT = 'If p is a prime number then p is at least 2.';

let env: TestWorkflowEnvironment;
let stack: TestStack;
let app: FastifyInstance;
let browser: Browser;
let base: string;
let webRoot: string;
let stopWorkers: (() => Promise<void>) | undefined;

beforeAll(async () => {
  if (!browserAvailable) return;
  // The page as `npm run build:web` builds it, into a folder of this test's own.
  webRoot = mkdtempSync(join(tmpdir(), 'driftline-web-'));
  await build({
    configFile: fileURLToPath(new URL('../../web/vite.config.ts', import.meta.url)),
    build: { outDir: webRoot, emptyOutDir: true },
    logLevel: 'error',
  });
  env = await startTemporal();
  // Stages take a moment each, so the page has something to show while the run goes on.
  stack = await createStack(env, {
    queue: 'default',
    llm: { handler: async (req) => ({ ...(await defaultBrain(req)), delayMs: 600 }) as FakeReply },
    repl: { unknownIdentifiers: ['Nat.Primee'], bodyDelayMs: 600 },
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
    sseKeepAliveMs: 500,
    pressure: { maxEventLoopDelayMs: 0 },
  });
  base = await app.listen({ host: '127.0.0.1', port: 0 });
  // A Lean worker whose compile refuses what the screen refuses (the contract of issue 22),
  // for the refused run below; it never starts a REPL for a refused statement.
  const refusing = await createLeanWorker({
    connection: env.nativeConnection,
    namespace: env.namespace ?? 'default',
    activities: refusingCompile(createLeanActivities({ lean: stack.lean, timeoutMs: 20_000 })),
    taskQueue: REFUSING_QUEUE,
  });
  const workers = [...(await stack.createWorkers()), refusing];
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

/** On a phone every stage row is laid out alike: each name starts at one x, each state at one x
 * under its name, and no row is wider than the list. */
async function expectEvenStageRows(page: Page): Promise<void> {
  const rows = await page.locator('li.stage').evaluateAll((items) =>
    items.map((li) => {
      const name = li.querySelector('.stage-name')!.getBoundingClientRect();
      const state = li.querySelector('.state')!.getBoundingClientRect();
      const box = li.getBoundingClientRect();
      return {
        name: Math.round(name.left),
        state: Math.round(state.left),
        below: state.top >= name.bottom - 1,
        right: box.right,
        width: li.parentElement!.getBoundingClientRect().right,
      };
    }),
  );
  expect(rows.length).toBeGreaterThan(1);
  expect(new Set(rows.map((r) => r.name)).size).toBe(1);
  expect(new Set(rows.map((r) => r.state)).size).toBe(1);
  for (const r of rows) {
    expect(r.below).toBe(true);
    expect(r.right).toBeLessThanOrEqual(r.width + 0.5);
  }
}

describeInBrowser('the web page', () => {
  it('answers GET / with the page as HTML', async () => {
    const response = await fetch(`${base}/`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    expect(response.headers.get('content-security-policy')).toContain("default-src 'self'");
    const html = await response.text();
    expect(html).toContain('<title>driftline</title>');
    // Its script and style come from this server, small.
    const assets = [...html.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((m) => m[1]!);
    expect(assets.length).toBeGreaterThanOrEqual(2);
    for (const asset of assets) {
      const res = await fetch(`${base}${asset}`);
      expect(res.status).toBe(200);
      expect((await res.arrayBuffer()).byteLength).toBeLessThan(60_000);
    }
  });

  it('submits a statement, shows each stage as it arrives, then the result', async () => {
    const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(err.message));
    // When each stage and the result appeared, in page time.
    await page.addInitScript(() => {
      const seen: { what: string; at: number }[] = [];
      (window as unknown as { seen: typeof seen }).seen = seen;
      new MutationObserver((records) => {
        for (const record of records) {
          for (const node of Array.from(record.addedNodes)) {
            if (!(node instanceof HTMLElement)) continue;
            if (node.matches('li.stage')) seen.push({ what: `stage:${node.dataset.stage}`, at: performance.now() });
            if (node.matches('.result')) seen.push({ what: 'result', at: performance.now() });
          }
        }
      }).observe(document, { childList: true, subtree: true });
    });
    await page.goto(`${base}/`);
    await expect.poll(() => page.locator('#library option').count()).toBeGreaterThan(0);

    await page.getByLabel('Statement').fill(STATEMENT);
    await page.getByLabel('Library').selectOption(FIXTURE_LIBRARY);
    await page.getByLabel('Configuration').selectOption('pipeline');
    await page.getByRole('button', { name: 'Formalize' }).click();

    // The first stages show while the run is still going: no result yet.
    await page.locator('li.stage[data-stage="retrieve"]').waitFor({ timeout: 60_000 });
    expect(await page.locator('.result').count()).toBe(0);
    expect(await page.locator('#run-status').textContent()).toBe('running');
    await page.screenshot({ path: screenshotPath('page-running.png'), fullPage: true });

    await page.locator('.result').waitFor({ timeout: 90_000 });
    await page.screenshot({ path: screenshotPath('page-result.png'), fullPage: true });

    const stages = await page.locator('li.stage').evaluateAll((items) => items.map((li) => (li as HTMLElement).dataset.stage));
    expect(stages).toEqual(['decompose', 'retrieve', 'illustrate', 'formalize', 'compile', 'judge']);
    const done = await page.locator('li.stage.done').count();
    expect(done).toBe(stages.length);
    const seen = (await page.evaluate(() => (window as unknown as { seen: { what: string; at: number }[] }).seen)) as {
      what: string;
      at: number;
    }[];
    const times = seen.map((s) => s.at);
    // Arrived one after another, and before the result (not all at once when the run ended).
    expect(seen.map((s) => s.what)).toEqual([...stages.map((s) => `stage:${s}`), 'result']);
    expect(times[times.length - 1]! - times[0]!).toBeGreaterThan(1500);

    // The result: Lean statement, outcome, judge, premises and examples with their sources.
    const result = page.locator('.result');
    await expect.poll(() => result.locator('pre.final').textContent()).toMatch(/theorem .*:= by sorry/s);
    expect(await result.locator('.outcome .badge').textContent()).toBe('faithful');
    expect(await result.getByText(/^Judge: grade 10\/10, faithful/).count()).toBe(1);
    expect(await result.locator('.premises li code.name').allTextContents()).toContain('Nat.Prime');
    expect(await result.locator('.examples li').count()).toBeGreaterThan(0);
    expect(await result.getByText(/^Source/).count()).toBeGreaterThan(0);
    expect(await page.locator('#run-status').textContent()).toBe('completed');
    const id = (await page.locator('#run-id').textContent())!;
    expect(await page.locator('#run-temporal').getAttribute('href')).toBe(
      `http://127.0.0.1:8233/namespaces/default/workflows/${encodeURIComponent(id)}`,
    );

    // The recent runs list has it, with its outcome.
    const row = page.locator('#recent tbody tr', { hasText: id });
    await expect.poll(() => row.count(), { timeout: 20_000 }).toBe(1);
    expect(await row.locator('.badge').allTextContents()).toEqual(['completed', 'faithful']);

    // The run has an address of its own: opening it shows the same result.
    const again = await browser.newPage();
    await again.goto(`${base}/#run=${encodeURIComponent(id)}`);
    await again.locator('.result .outcome').waitFor({ timeout: 30_000 });
    expect(await again.locator('li.stage').count()).toBe(stages.length);
    await again.close();

    expect(errors).toEqual([]);
    await page.close();
  }, 180_000);

  it('shows a statement the screen refused as refused by the screen, with its reason, never as a compile failure or a tick', async () => {
    stack.llm.script(FAKE_MODELS.formalizer, { content: HOSTILE_REPLY });
    // A long ID, as sweeps make them, to see it wrap at its separators on a phone.
    const id = await startFormalization(
      env.client,
      {
        id: `page-refused/connf-drift-ablation/ConNF.Params.someVeryLongTheoremName_about_near_litters/${process.pid}`,
        statement: STATEMENT,
        library: FIXTURE_LIBRARY,
        config: { repairRounds: 0, judge: false },
        leanTaskQueue: REFUSING_QUEUE,
        llm: stack.runLlm,
      },
      stack.mainQueue,
    );
    await env.client.workflow.getHandle(id).result();
    const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(err.message));
    await page.goto(`${base}/#run=${encodeURIComponent(id)}`);
    const result = page.locator('.result');
    await result.locator('.outcome').waitFor({ timeout: 30_000 });
    await page.screenshot({ path: screenshotPath('page-refused.png'), fullPage: true });

    expect(await result.locator('.outcome .badge').textContent()).toBe('refused');
    expect(await result.locator('.outcome').textContent()).toBe(
      'refused Refused by the screen before Lean (Lean never saw the last attempt)',
    );
    // The reason's Markdown code span is code, not backticks.
    expect(await result.locator('.refusal').textContent()).toMatch(/^Refused by the screen: #eval runs code/);
    expect(await result.locator('.refusal code').first().textContent()).toBe('#eval');
    const screenMessages = result.getByRole('list', { name: 'Screen messages' });
    expect(await screenMessages.textContent()).toMatch(/error 1:0 refused before Lean: #eval runs code/);
    expect(await screenMessages.locator('code').first().textContent()).toBe('#eval');
    expect(await result.locator('.refusal, .msg').evaluateAll((els) => els.map((e) => e.textContent).join(''))).not.toContain('`');
    // Its stage row: the screen's own mark, no tick.
    const compile = page.locator('li.stage[data-stage="compile"]');
    expect(await compile.locator('.state').textContent()).toBe('refused by the screen before Lean');
    expect(await compile.getAttribute('class')).toMatch(/\brefused\b/);
    expect(await compile.getAttribute('class')).not.toMatch(/\bdone\b/);
    expect(await compile.locator('.state').evaluate((el) => getComputedStyle(el, '::before').content)).toBe('"⊘ "');
    const ticks = await page
      .locator('li.stage .state')
      .evaluateAll((els) => els.filter((el) => getComputedStyle(el, '::before').content.includes('✓')).map((el) => el.textContent));
    expect(ticks).not.toContain('refused by the screen before Lean');
    const text = `${await page.locator('#stages').textContent()}${await result.textContent()}`;
    expect(text).not.toMatch(/Did not compile|Lean rejected|Compiler messages/);
    // The recent runs list has it under its own outcome.
    await page.getByRole('button', { name: 'Refresh runs' }).click();
    const row = page.locator('#recent tbody tr', { hasText: id });
    await expect.poll(() => row.count(), { timeout: 20_000 }).toBe(1);
    expect(await row.locator('.badge').allTextContents()).toEqual(['completed', 'refused']);

    // On a phone: nothing wider than the screen, the ID wraps between its parts, the rows align.
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    expect(await page.locator('#run-id').textContent()).toBe(id);
    const idLayout = await page.locator('#run-id').evaluate((el) => {
      const lines = (node: Node) => {
        const range = document.createRange();
        range.selectNodeContents(node);
        return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size;
      };
      const parts = [...el.childNodes].filter((n) => n.nodeType === Node.TEXT_NODE);
      return { lines: lines(el), parts: parts.map((n) => [n.textContent, lines(n)]), right: el.getBoundingClientRect().right };
    });
    expect(idLayout.lines).toBeGreaterThan(1);
    expect(idLayout.right).toBeLessThanOrEqual(390);
    // Each part between separators stays on one line: the breaks fall at `/`, `-`, `_`, `.`.
    for (const [part, lines] of idLayout.parts) expect(lines, String(part)).toBe(1);
    await expectEvenStageRows(page);
    await page.screenshot({ path: screenshotPath('page-refused-phone.png'), fullPage: true });
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);

  it('shows the last attempt once, earlier ones folded, code spans as code and hostile text as text, at desktop and phone width', async () => {
    // First the screen refuses; the repair compiles. The judge's explanation carries a code span
    // and markup that must stay text.
    stack.llm.script(FAKE_MODELS.formalizer, { content: HOSTILE_REPLY });
    stack.llm.script(FAKE_MODELS.judge, {
      content: JSON.stringify({
        grade: 10,
        faithful: true,
        explanation: 'It uses `Nat.Prime` and ``a `tick` inside``; <img src=x onerror="window.pwned=1"> is only text.',
      }),
    });
    const id = await startFormalization(
      env.client,
      {
        statement: STATEMENT,
        library: FIXTURE_LIBRARY,
        config: { repairRounds: 1, judge: true },
        leanTaskQueue: REFUSING_QUEUE,
        llm: stack.runLlm,
      },
      stack.mainQueue,
    );
    const run = (await env.client.workflow.getHandle(id).result()) as { formalStatement: string; attempts: unknown[] };
    expect(run.attempts.length).toBe(2);
    for (const width of [1200, 390]) {
      const page = await browser.newPage({ viewport: { width, height: 900 } });
      const errors: string[] = [];
      page.on('pageerror', (err) => errors.push(err.message));
      await page.goto(`${base}/#run=${encodeURIComponent(id)}`);
      const result = page.locator('.result');
      await result.locator('.outcome').waitFor({ timeout: 30_000 });
      await page.screenshot({ path: screenshotPath(`page-repaired-${width}.png`), fullPage: true });

      // The last attempt's statement is shown once; the earlier attempt folded beneath.
      const statements = await result.locator('pre.lean code').allTextContents();
      expect(statements.filter((s) => s === run.formalStatement)).toHaveLength(1);
      expect(await result.locator('.last-attempt').textContent()).toBe('Attempt 1 of 2: compiled');
      const earlier = result.getByRole('region', { name: 'Earlier attempts' });
      expect(await earlier.locator('h4').textContent()).toBe('Earlier attempts (1)');
      expect(await earlier.locator('details summary').allTextContents()).toEqual(['Attempt 0: refused by the screen before Lean']);
      expect(await earlier.locator('.msg code').first().textContent()).toBe('#eval');
      // Compile rounds: the refused one has the screen's mark, the compiled one a tick.
      const compiles = page.locator('li.stage[data-stage="compile"]');
      expect(
        await compiles.evaluateAll((els) =>
          els.map((el) => [el.className, getComputedStyle(el.querySelector('.state')!, '::before').content]),
        ),
      ).toEqual([
        ['stage refused', '"⊘ "'],
        ['stage done', '"✓ "'],
      ]);
      // The judge's explanation: code spans as <code>, markup as the characters it is.
      const judge = result.getByRole('region', { name: 'Judge' });
      expect(await judge.locator('p code').allTextContents()).toEqual(['Nat.Prime', 'a `tick` inside']);
      expect(await judge.locator('img').count()).toBe(0);
      expect(await judge.locator('p').textContent()).toContain('<img src=x onerror="window.pwned=1"> is only text.');
      expect(await page.evaluate(() => (window as unknown as { pwned?: number }).pwned)).toBeUndefined();
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
      if (width === 390) await expectEvenStageRows(page);
      expect(errors).toEqual([]);
      await page.close();
    }
  }, 180_000);

  it('says what is wrong with an empty statement, and fits a phone screen', async () => {
    const page = await browser.newPage({ viewport: { width: 390, height: 844 } });
    await page.goto(`${base}/`);
    await expect.poll(() => page.locator('#library option').count()).toBeGreaterThan(0);
    // Agent mode is offered now that the server has it, and hides the pipeline's settings.
    expect(await page.locator('#mode option[value="agent"]').isDisabled()).toBe(false);
    await page.getByLabel('Configuration').selectOption('agent');
    expect(await page.getByLabel('Retrieval').isVisible()).toBe(false);
    await page.getByRole('button', { name: 'Formalize' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toBe('Write a statement first.');
    // A reason from the API quoting Lean: its code span as code, its markup as text.
    await page.route('**/v1/formalizations', (route) =>
      route.fulfill({
        status: 400,
        contentType: 'application/problem+json',
        body: JSON.stringify({ status: 400, title: 'Bad Request', detail: 'the statement has no `:=`; <b>bold</b> stays text' }),
      }),
    );
    await page.getByLabel('Statement').fill('theorem t : True');
    await page.getByRole('button', { name: 'Formalize' }).click();
    const alert = page.locator('#form-error');
    await expect.poll(() => alert.textContent()).toBe('the statement has no :=; <b>bold</b> stays text');
    expect(await alert.locator('code').allTextContents()).toEqual([':=']);
    expect(await alert.locator('b').count()).toBe(0);
    await page.unroute('**/v1/formalizations');
    // Nothing wider than the screen.
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    expect(width).toBeLessThanOrEqual(390);
    await page.screenshot({ path: screenshotPath('page-phone.png'), fullPage: true });
    await page.close();
  });
});
