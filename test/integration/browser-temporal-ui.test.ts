// The Temporal UI (the version the dev server bundles) as a window on driftline, in a real
// browser: the list tells runs apart and finds the ones that did not compile, and a finished
// run's page shows its activities, its search attributes and its details (library,
// configuration, index version, outcome). Screenshots go to .driftline/screenshots/.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Worker } from '@temporalio/worker';
import { ALL_SEARCH_ATTRIBUTE_KEYS } from '../../common/search-attributes';
import type { FormalizeResult } from '../../common/run-types';
import { requireTemporalCli } from '../../infra/temporal-cli';
import { FAKE_MODELS } from '../fakes/openai-server';
import { browserAvailable, launchBrowser, screenshotPath } from '../helpers/browser';
import { createStack, type TestStack } from '../helpers/stack';
import { freePort } from '../helpers/worker-processes';

const describeInBrowser = browserAvailable ? describe : describe.skip;
const GOOD_STATEMENT = 'If p is a prime number then p is at least 2.';
const BAD_STATEMENT = 'Every prime greater than 2 is odd.';
const BAD = '```lean\ntheorem odd_of_prime (p : ℕ) (hp : Nat.Primee p) (h : 2 < p) : Odd p := by sorry\n```';

let env: TestWorkflowEnvironment;
let stack: TestStack;
let browser: Browser;
let ui: string;
let workers: Worker[] = [];
let running: Promise<void>[] = [];
let faithful: { id: string; result: FormalizeResult };
let notCompiled: { id: string; result: FormalizeResult };

beforeAll(async () => {
  if (!browserAvailable) return;
  const uiPort = await freePort();
  env = await TestWorkflowEnvironment.createLocal({
    server: {
      executable: { type: 'existing-path', path: requireTemporalCli() },
      ip: '127.0.0.1',
      uiPort,
      searchAttributes: ALL_SEARCH_ATTRIBUTE_KEYS,
    },
  });
  ui = `http://127.0.0.1:${uiPort}`;
  stack = await createStack(env, { repl: { unknownIdentifiers: ['Nat.Primee'] } });
  // Workers stay up while the browser looks: the UI asks them for the current details.
  workers = await stack.createWorkers();
  running = workers.map((w) =>
    w.run().catch((err: Error) => {
      throw new Error(`a worker stopped: ${err.message}`);
    }),
  );
  for (const run of running) run.catch((err: Error) => console.error(err.message));
  const good = await stack.start(GOOD_STATEMENT);
  faithful = { id: good, result: await stack.result(good) };
  stack.llm.script(FAKE_MODELS.formalizer, { content: BAD });
  const bad = await stack.start(BAD_STATEMENT, { repairRounds: 0 });
  notCompiled = { id: bad, result: await stack.result(bad) };
  browser = await launchBrowser();
}, 240_000);

afterAll(async () => {
  await browser?.close();
  for (const w of workers) w.shutdown();
  await Promise.allSettled(running);
  await stack?.close();
  await env?.teardown();
});

async function openList(page: Page, query: string): Promise<void> {
  await page.goto(`${ui}/namespaces/default/workflows?query=${encodeURIComponent(query)}`);
  await page.locator('table').first().waitFor({ timeout: 30_000 });
}

describeInBrowser('the Temporal UI', () => {
  it('names runs by their statement and lists the ones that did not compile', async () => {
    expect(faithful.result.outcome).toBe('faithful');
    expect(notCompiled.result.outcome).toBe('not-compiled');
    expect(faithful.id).toMatch(/^formalize-if-p-is-a-prime-number-then-p-is-at-[0-9a-f]{12}$/);

    const page = await browser.newPage({ viewport: { width: 2100, height: 700 } });
    // What docs/temporal-ui.md tells people to do once: add the outcome and configuration columns.
    await openList(page, 'WorkflowType = "formalize"');
    await page.getByRole('button', { name: 'Configure Columns' }).click();
    await page.getByRole('button', { name: 'Add DriftlineOutcome column' }).click();
    await page.getByRole('button', { name: 'Add DriftlineConfig column' }).click();
    // The UI keeps the columns in the browser: they are there after a reload.
    await page.reload();
    await page.locator('table').first().waitFor({ timeout: 30_000 });

    // Both runs, told apart by ID, each with its outcome in the column.
    await expect.poll(() => page.getByRole('link', { name: notCompiled.id }).count(), { timeout: 30_000 }).toBe(1);
    expect(await page.getByRole('link', { name: faithful.id }).count()).toBe(1);
    expect(await page.getByRole('columnheader', { name: 'DriftlineOutcome' }).count()).toBe(1);
    const badRow = page.locator('tr', { has: page.getByRole('link', { name: notCompiled.id }) });
    await expect.poll(() => badRow.textContent()).toContain('not-compiled');
    await page.screenshot({ path: screenshotPath('temporal-ui-list.png') });

    // The filter in docs/temporal-ui.md for the runs that did not compile finds exactly that one.
    await openList(page, 'DriftlineOutcome = "not-compiled"');
    await expect.poll(() => page.getByRole('link', { name: notCompiled.id }).count(), { timeout: 30_000 }).toBe(1);
    expect(await page.getByRole('link', { name: faithful.id }).count()).toBe(0);
    await page.screenshot({ path: screenshotPath('temporal-ui-not-compiled.png') });
    await page.close();
  }, 120_000);

  it("shows a finished run's activities, search attributes and details", async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    await page.goto(`${ui}/namespaces/default/workflows/${encodeURIComponent(faithful.id)}`);

    // Activities: every stage of the run in its event history.
    await page.getByRole('tab', { name: /Event History/ }).click();
    for (const activity of ['decompose', 'retrieve', 'illustrate', 'formalize', 'compile', 'judge']) {
      await expect.poll(() => page.getByText(activity, { exact: true }).count(), { timeout: 30_000 }).toBeGreaterThan(0);
    }
    await page.screenshot({ path: screenshotPath('temporal-ui-history.png'), fullPage: true });

    // Search attributes: outcome, library, configuration, index version.
    await page.getByRole('tab', { name: 'Search Attributes' }).click();
    const attributes = page.locator('main');
    await expect.poll(() => attributes.textContent(), { timeout: 30_000 }).toContain('DriftlineOutcome');
    const text = (await attributes.textContent())!;
    expect(text).toContain('faithful');
    expect(text).toContain('DriftlineLibrary');
    expect(text).toContain('drift+decomp+ill3+rep3+judge');
    expect(text).toContain(faithful.result.indexVersion!);
    await page.screenshot({ path: screenshotPath('temporal-ui-search-attributes.png'), fullPage: true });

    // User metadata: the statement as summary; library, configuration, index version, outcome.
    // The UI renders each markdown block in a frame of its own.
    await page.getByRole('tab', { name: 'User Metadata' }).click();
    const allText = async (): Promise<string> => {
      const parts = await Promise.all(
        page.frames().map((frame) =>
          frame
            .locator('body')
            .textContent()
            .catch(() => ''),
        ),
      );
      return parts.join('\n');
    };
    await expect.poll(allText, { timeout: 30_000 }).toContain('Index version');
    const metadata = await allText();
    expect(metadata).toContain(GOOD_STATEMENT);
    expect(metadata).toContain('DRIFT retrieval (decomposed), 3 examples, up to 3 repair rounds, judged');
    expect(metadata).toMatch(/Outcome\s*faithful/);
    expect(metadata).toContain(faithful.result.indexVersion!);
    await page.screenshot({ path: screenshotPath('temporal-ui-details.png'), fullPage: true });
    await page.close();
  }, 120_000);
});
