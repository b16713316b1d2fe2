// The sweep report's page in a real browser (chromium through playwright-core), at desktop and
// phone width, for a sweep where every rate is 0 and one run was refused by the screen: the
// charts show labelled zero bars (not bare whiskers, not an empty plot), the configurations are
// tables, and nothing is wider than a phone's screen but the tables that scroll in their box.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { renderSweepReport } from '../../engines/report/write-report';
import { browserAvailable, launchBrowser, screenshotPath } from '../helpers/browser';
import { runRecord } from '../helpers/sweep-records';

const describeInBrowser = browserAvailable ? describe : describe.skip;

let browser: Browser;
let html: string;

beforeAll(async () => {
  if (!browserAvailable) return;
  // Four items × two configurations: nothing compiles, nothing retrieved is gold, item a refused.
  const records = ['a', 'b', 'c', 'd'].flatMap((item) =>
    ['drift', 'zero-shot'].map((config) =>
      runRecord({
        config,
        item,
        premises: config === 'drift' ? ['ConNF.Params'] : [],
        goldPremises: ['ConNF.IsNearLitter'],
        ...(item === 'a'
          ? {
              outcome: 'refused' as const,
              checked: false,
              refusal: '`#eval` runs code at elaboration time',
              attempts: [{ round: 0, compiled: false, status: 'refused' as const }],
            }
          : { attempts: [{ round: 0, compiled: false, status: 'error' as const }] }),
      }),
    ),
  );
  ({ html } = await renderSweepReport({
    sweep: {
      id: 'all-zero/connf-drift-ablation',
      configurations: {
        drift: { retrieval: 'drift', decompose: true, repairRounds: 3, judge: true, tools: ['write_file', 'run_lean'] },
        'zero-shot': { retrieval: 'none', decompose: true, repairRounds: 0, judge: true, tools: ['write_file', 'run_lean'] },
      },
    },
    records,
    temporalUi: { base: 'http://127.0.0.1:8233', namespace: 'default' },
    bootstrap: { resamples: 100 },
  }));
  browser = await launchBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
});

describeInBrowser('the sweep report in a browser', () => {
  for (const width of [1200, 390]) {
    it(`shows an all-zero sweep with labelled zero bars and its configurations as tables at ${width} px`, async () => {
      const page = await browser.newPage({ viewport: { width, height: 900 } });
      const errors: string[] = [];
      page.on('pageerror', (err) => errors.push(err.message));
      await page.setContent(html, { waitUntil: 'load' });
      await page.screenshot({ path: screenshotPath(`report-all-zero-${width}.png`), fullPage: true });

      // Two charts (rates, retrieval), each with a bar-width line and a "0" label per bar.
      const charts = await page.locator('.chart svg').evaluateAll((svgs) =>
        svgs.map((svg) => {
          const title = svg.querySelector('.role-title-text')?.textContent ?? '';
          const subtitle = svg.querySelector('.role-title-subtitle')?.textContent ?? '';
          const labels = [...svg.querySelectorAll('.role-mark text')].map((t) => t.textContent);
          // The value lines are in the configuration's colour; the whiskers' ends are #222.
          const lines = [...svg.querySelectorAll('path[aria-roledescription="tick"]')]
            .filter((p) => p.getAttribute('fill') !== '#222')
            .map((p) => p.getBoundingClientRect())
            .filter((r) => r.width > 2 * r.height);
          const visible = [...svg.querySelectorAll('path[aria-roledescription="tick"]')].every((p) => {
            const r = p.getBoundingClientRect();
            return r.width > 0 && r.height > 0;
          });
          return { title, subtitle, labels, lines: lines.length, visible };
        }),
      );
      // (The third is the repair-budget curve, its points at 0.)
      expect(charts.slice(0, 2).map((c) => c.title)).toEqual([
        'Rates per configuration (95% intervals over items: Wilson, or bootstrap for shares of samples)',
        'Dependency retrieval against gold premises (macro over items; micro from totals)',
      ]);
      for (const [chart, bars] of [
        [charts[0]!, 2 * 2],
        [charts[1]!, 4 * 2],
      ] as const) {
        expect(chart.subtitle).toMatch(/^Every value is 0/);
        expect(chart.labels.filter((t) => t === '0')).toHaveLength(bars);
        expect(chart.lines).toBe(bars);
        expect(chart.visible).toBe(true);
      }

      // The refused run: its own badge in the grid, the reason in its title.
      const refused = page.locator('.items .badge.o-refused');
      expect(await refused.count()).toBe(2);
      expect(await refused.first().getAttribute('title')).toContain('refused by the screen before Lean: `#eval` runs code');

      // Configurations: a table of what differs, the shared settings folded; no JSON.
      const section = page.locator('h2#configurations ~ *');
      expect(await page.locator('h2#configurations + h3').textContent()).toBe('Where the configurations differ');
      const differ = page.locator('#configurations-differ + .caption + .scroll table');
      expect(await differ.locator('thead th').allTextContents()).toEqual(['setting', 'drift', 'zero-shot']);
      expect(await differ.locator('tbody tr').evaluateAll((rows) => rows.map((r) => r.textContent?.trim()))).toEqual([
        'retrievaldriftnone',
        'repairRounds30',
      ]);
      expect(
        await page
          .locator('details', { has: page.locator('#configurations-shared') })
          .locator('summary')
          .textContent(),
      ).toBe('Settings every configuration shares (3)');
      expect((await section.allTextContents()).join('')).not.toMatch(/[{}]/);

      // Nothing wider than the screen, but tables scrolling inside their own box.
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
      const outside = await page.evaluate(() =>
        [...document.querySelectorAll('main *')]
          .filter((el) => !el.closest('.scroll') && el.getBoundingClientRect().right > window.innerWidth + 0.5)
          .map((el) => el.tagName),
      );
      expect(outside).toEqual([]);
      expect(errors).toEqual([]);
      await page.close();
    });
  }
});
