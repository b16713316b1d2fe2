// Each LLM provider's quota as the deployment sees it (the shared budget in the results
// database, decisions/0016): for `sweep status`, the API's sweep view, and the workers' logs and
// Prometheus gauges (on the worker's metrics endpoint, DRIFTLINE_METRICS_ADDRESS).
import type { MetricMeter } from '@temporalio/common';
import type { Logger } from 'pino';
import { snapshot, type Binding, type LimitUse, type QuotaSnapshot } from '../engines/llm/budget';
import { SqlBudgetStore } from '../engines/results/llm-budget';
import type { ResultsDb } from '../engines/results/results-db';
import type { Config } from './config';
import { providerLimits } from './deps';

/** One budget store per results connection: a store creates its table once, so reading the
 * quota (every few seconds, per status view) does not take the write lock each time. */
const budgetStores = new WeakMap<ResultsDb['driver'], SqlBudgetStore>();

/** Every provider that has sent a request through the budget, by name, with the limits this
 * process configures for it or else those the workers recorded in the budget (the stack decides
 * what its providers are, not the shell a client runs in). */
export async function quotaSnapshots(config: Config, results: ResultsDb, now = Date.now()): Promise<QuotaSnapshot[]> {
  let store = budgetStores.get(results.driver);
  if (!store) budgetStores.set(results.driver, (store = new SqlBudgetStore(results.driver)));
  const states = await store.states();
  const out: QuotaSnapshot[] = [];
  for (const [name, state] of states) {
    const p = config.llm.providers[name];
    const limits = p ? providerLimits(p) : state.configured;
    if (!limits || state.sent === 0) continue;
    out.push(snapshot(name, state, limits, now));
  }
  return out;
}

/** One line per provider: the limit that binds and how close to it the last minute ran. */
export function formatQuota(s: QuotaSnapshot): string {
  const limit = (label: string, u: { effective?: number; used: number }, unit: string) =>
    u.effective !== undefined ? `${label} ${fmt(u.used)}/${fmt(u.effective)}${unit}` : `${label} ${fmt(u.used)}${unit} (no limit)`;
  const parts = [
    limit('tokens', s.tokensPerMinute, '/min'),
    limit('requests', s.requestsPerMinute, '/min'),
    s.inFlight.effective !== undefined
      ? `in flight ${s.inFlight.now} (mean ${s.inFlight.used})/${s.inFlight.effective}`
      : `in flight ${s.inFlight.now}`,
  ];
  const binds = s.binding ? `${s.binding} binds at ${Math.round((s.utilisation ?? 0) * 100)}%` : 'no limit set or reported';
  const share = s.sent > 0 ? ` · 429s ${s.throttled}/${s.sent}` : '';
  const learnt = [
    s.tokensPerMinute.reported !== undefined ? `tokens ${fmt(s.tokensPerMinute.reported)}` : '',
    s.requestsPerMinute.reported !== undefined ? `requests ${fmt(s.requestsPerMinute.reported)}` : '',
  ].filter(Boolean);
  const reported = learnt.length ? ` · learnt from the provider: ${learnt.join(', ')}/min` : '';
  const slowed = s.factor < 1 ? ` · slowed to ${Math.round(s.factor * 100)}% after 429s` : '';
  return `${s.provider}: ${binds} · ${parts.join(' · ')}${share}${reported}${slowed}`;
}

function fmt(x: number): string {
  return x >= 10_000 ? `${Math.round(x / 1000)}k` : String(Math.round(x * 10) / 10);
}

/** The lines `sweep status` prints under the sweep's own (nothing when no request went through a
 * budget yet). */
export function quotaSection(snapshots: QuotaSnapshot[]): string {
  if (snapshots.length === 0) return '';
  return `LLM quota, last minute, whole deployment:\n${snapshots.map((s) => `  ${formatQuota(s)}\n`).join('')}`;
}

/** The quota as the API's sweep views carry it (and the web page's sweep card shows it). */
export async function quotaViews(
  config: Config,
  results: ResultsDb,
): Promise<{ provider: string; binding: QuotaSnapshot['binding']; utilisation: number | null; summary: string }[]> {
  return (await quotaSnapshots(config, results)).map((s) => ({
    provider: s.provider,
    binding: s.binding,
    utilisation: s.utilisation,
    summary: formatQuota(s),
  }));
}

/** Sets the worker's quota gauges from snapshots, per provider and limit (`tokens`, `requests`:
 * per minute; `in-flight`: requests at once, used as the minute's mean). The meter is Temporal's
 * runtime meter, so they appear on the same /metrics as the task queues' figures. */
export function quotaGauges(meter: MetricMeter): (snapshots: QuotaSnapshot[]) => void {
  const limit = meter.createGauge(
    'driftline_llm_quota_limit',
    'float',
    undefined,
    'LLM provider limit in force for the whole deployment: configured, lowered by its headers and 429s',
  );
  const used = meter.createGauge('driftline_llm_quota_used', 'float', undefined, 'LLM provider use over the last minute, whole deployment');
  const utilisation = meter.createGauge(
    'driftline_llm_quota_utilisation',
    'float',
    undefined,
    'LLM provider use over the last minute / limit in force',
  );
  const binding = meter.createGauge(
    'driftline_llm_quota_binding',
    'int',
    undefined,
    '1 for the LLM provider limit that binds, 0 for the others',
  );
  const throttled = meter.createGauge(
    'driftline_llm_quota_throttled_share',
    'float',
    undefined,
    "Share of the LLM provider's requests answered 429 since its budget started",
  );
  return (snapshots) => {
    for (const s of snapshots) {
      const limits: [Binding, LimitUse][] = [
        ['tokens', s.tokensPerMinute],
        ['requests', s.requestsPerMinute],
        ['in-flight', s.inFlight],
      ];
      for (const [name, use] of limits) {
        const tags = { provider: s.provider, limit: name };
        used.set(use.used, tags);
        binding.set(s.binding === name ? 1 : 0, tags);
        if (use.effective !== undefined && use.effective > 0) {
          limit.set(use.effective, tags);
          utilisation.set(use.used / use.effective, tags);
        }
      }
      throttled.set(s.sent > 0 ? s.throttled / s.sent : 0, { provider: s.provider });
    }
  };
}

/** How often a worker refreshes the gauges (Prometheus scrapes every 15 s or so), and logs. */
export const QUOTA_METRICS_MS = 10_000;
export const QUOTA_LOG_MS = 30_000;

/** Reads the quota every `metricsMs` into the gauges, and logs each provider whose requests moved
 * every `logMs`. Returns the function that stops it. */
export function reportQuota(options: {
  read: () => Promise<QuotaSnapshot[]>;
  log: Logger;
  gauges?: (snapshots: QuotaSnapshot[]) => void;
  metricsMs?: number;
  logMs?: number;
}): () => void {
  const { read, log, gauges } = options;
  const logMs = options.logMs ?? QUOTA_LOG_MS;
  const everyMs = gauges ? Math.min(logMs, options.metricsMs ?? QUOTA_METRICS_MS) : logMs;
  // Logs every so many ticks (counted, not timed: a tick a millisecond early must not skip one).
  const logEvery = Math.max(1, Math.round(logMs / everyMs));
  let ticks = 0;
  let lastSent = new Map<string, number>();
  const timer = setInterval(() => {
    const logNow = ++ticks % logEvery === 0;
    void read().then(
      (snapshots) => {
        gauges?.(snapshots);
        if (!logNow) return;
        for (const s of snapshots) if (s.sent !== lastSent.get(s.provider)) log.info({ quota: s }, formatQuota(s));
        lastSent = new Map(snapshots.map((s) => [s.provider, s.sent]));
      },
      (err: unknown) => log.warn({ err }, 'could not read the LLM quota'),
    );
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
