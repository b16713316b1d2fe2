// Each LLM provider's quota as the deployment sees it (the shared budget in the results
// database, decisions/0016): for `sweep status`, the API's sweep view and the workers' logs.
import { snapshot, type QuotaSnapshot } from '../engines/llm/budget';
import { SqlBudgetStore } from '../engines/results/llm-budget';
import type { ResultsDb } from '../engines/results/results-db';
import type { Config } from './config';
import { providerLimits } from './deps';

/** Every configured provider that has sent a request through the budget, by name. */
export async function quotaSnapshots(config: Config, results: ResultsDb, now = Date.now()): Promise<QuotaSnapshot[]> {
  const states = await new SqlBudgetStore(results.driver, () => now).states();
  const out: QuotaSnapshot[] = [];
  for (const [name, state] of states) {
    const p = config.llm.providers[name];
    if (!p || state.sent === 0) continue;
    out.push(snapshot(name, state, providerLimits(p), now));
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
