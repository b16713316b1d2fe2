// The LLM quota on a worker's Prometheus endpoint (Temporal's runtime metrics, the address a
// worker gets from DRIFTLINE_METRICS_ADDRESS): requests pass through the shared budget in the
// results database, the worker's quota reporter reads it as `sweep status` does, and a scrape of
// /metrics shows per provider and limit the limit in force, the use, how close to it, and which
// limit binds; the log line says the same, once while no request moves. In-process: this file's process installs the Temporal runtime once.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { settle, take } from '../../engines/llm/budget';
import { SqlBudgetStore } from '../../engines/results/llm-budget';
import type { ResultsDb } from '../../engines/results/results-db';
import { loadConfig } from '../../infra/config';
import { providerLimits } from '../../infra/deps';
import { quotaGauges, quotaSnapshots, reportQuota } from '../../infra/llm-quota';
import { openResults } from '../../infra/results';
import { FIXTURE_CORPUS } from '../helpers/stack';
import { freePort } from '../helpers/ports';

const root = mkdtempSync(join(tmpdir(), 'driftline-quota-metrics-'));
let results: ResultsDb | undefined;
let stop: (() => void) | undefined;

afterAll(async () => {
  stop?.();
  await results?.close();
  rmSync(root, { recursive: true, force: true });
});

/** `name{labels} value` lines of a Prometheus text page, labels in any order. */
function samples(page: string, name: string): { labels: Record<string, string>; value: number }[] {
  const out: { labels: Record<string, string>; value: number }[] = [];
  for (const line of page.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const labels = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1]!, l[2]!]));
    out.push({ labels, value: Number(m[3]) });
  }
  return out;
}

function value(page: string, name: string, labels: Record<string, string>): number | undefined {
  return samples(page, name).find((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;
}

describe("the LLM quota on the worker's /metrics", () => {
  it('shows per provider and limit the limit, the use and the one that binds', async () => {
    const port = await freePort();
    const config = loadConfig({
      env: {
        DRIFTLINE_LIBRARIES: `mini=${FIXTURE_CORPUS}`,
        OPENAI_BASE_URL: 'http://127.0.0.1:9/v1',
        DRIFTLINE_LLM_TOKENS_PER_MINUTE: '60000',
        DRIFTLINE_LLM_REQUESTS_PER_MINUTE: '600',
        DRIFTLINE_LLM_MAX_IN_FLIGHT: '4',
        DRIFTLINE_METRICS_ADDRESS: `127.0.0.1:${port}`,
      },
      root,
    });
    expect(config.temporal.workerMetricsAddress).toBe(`127.0.0.1:${port}`);
    // As run-worker.ts installs it.
    Runtime.install({
      logger: new DefaultLogger('WARN'),
      telemetryOptions: { metrics: { prometheus: { bindAddress: config.temporal.workerMetricsAddress! } } },
    });
    results = await openResults(config);
    // Twelve requests of 2,500 tokens went through the budget (one of them answered 429), one is
    // still in flight: 30k of 60k tokens, 12 of 600 requests a minute: tokens bind, at about half.
    const limits = providerLimits(config.llm.providers.default!);
    const store = new SqlBudgetStore(results.driver);
    for (let i = 0; i < 12; i++) {
      // The buckets full again, as the seconds between requests (not waited here) would leave them.
      await store.update('default', (s) => {
        s.tokens = 2500;
        s.requests = 20;
      });
      const r = await store.update('default', (s, now) => take(s, limits, { tokens: 2500, leaseMs: 60_000, id: `r${i}` }, now));
      if (!r.granted) throw new Error(`refused: ${JSON.stringify(r)}`);
      if (i === 11) break;
      const kind = i === 5 ? ('throttled' as const) : ('answered' as const);
      await store.update('default', (s, now) =>
        settle(s, limits, r.slot, { kind, estimatedTokens: 2500, usedTokens: 2500, headers: {} }, now),
      );
    }
    const expected = (await quotaSnapshots(config, results))[0]!;
    expect(expected.binding).toBe('tokens');
    // A client whose own environment configures no provider (the CLI in a second shell) reads
    // the stack's quota with the limits the workers recorded in the budget.
    const bareShell = { ...config, llm: { ...config.llm, providers: {} } };
    const fromBareShell = await quotaSnapshots(bareShell, results);
    expect(fromBareShell.map((q) => [q.provider, q.binding])).toEqual([['default', 'tokens']]);
    expect(fromBareShell[0]!.tokensPerMinute.configured).toBe(expected.tokensPerMinute.configured);

    const logged: string[] = [];
    stop = reportQuota({
      read: () => quotaSnapshots(config, results!),
      log: pino({ level: 'info' }, { write: (line: string) => void logged.push(line) }),
      gauges: quotaGauges(Runtime.instance().metricMeter),
      metricsMs: 100,
      logMs: 300,
    });
    let page = '';
    for (let tries = 0; tries < 100 && !page.includes('driftline_llm_quota_limit'); tries++) {
      await new Promise((r) => setTimeout(r, 100));
      page = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    }
    const tokens = { provider: 'default', limit: 'tokens' };
    const tpm = value(page, 'driftline_llm_quota_limit', tokens);
    // The effective limit: 60k lowered by the one 429's factor, then raised by the answers after it.
    expect(tpm).toBeCloseTo(expected.tokensPerMinute.effective!, 0);
    expect(tpm).toBeLessThanOrEqual(60_000);
    expect(tpm).toBeGreaterThan(45_000);
    expect(value(page, 'driftline_llm_quota_used', tokens)).toBe(10 * 2500);
    expect(value(page, 'driftline_llm_quota_utilisation', tokens)).toBeCloseTo(25_000 / tpm!, 3);
    expect(value(page, 'driftline_llm_quota_binding', tokens)).toBe(1);
    const requests = { provider: 'default', limit: 'requests' };
    expect(value(page, 'driftline_llm_quota_used', requests)).toBe(12);
    expect(value(page, 'driftline_llm_quota_binding', requests)).toBe(0);
    const inFlight = { provider: 'default', limit: 'in-flight' };
    expect(value(page, 'driftline_llm_quota_limit', inFlight)).toBe(4);
    expect(value(page, 'driftline_llm_quota_binding', inFlight)).toBe(0);
    expect(value(page, 'driftline_llm_quota_throttled_share', { provider: 'default' })).toBeCloseTo(1 / 12, 3);
    // One binding limit per provider.
    expect(samples(page, 'driftline_llm_quota_binding').filter((s) => s.value === 1)).toHaveLength(1);
    // And the same in the log, once while nothing moves (every third tick here).
    for (let tries = 0; tries < 50 && logged.length === 0; tries++) await new Promise((r) => setTimeout(r, 100));
    await new Promise((r) => setTimeout(r, 700));
    expect(logged).toHaveLength(1);
    expect((JSON.parse(logged[0]!) as { msg: string }).msg).toMatch(/^default: tokens binds at \d+% · tokens 25k\/\d+k\/min/);
  }, 60_000);
});
