// The query-blind baseline every retrieval figure is reported beside: rank the library's
// premises by how many of its theorems use them, whatever the statement says. On ConNF this puts
// `ConNF.Params` first (a gold dependency of 78% of the dev items), so precision@1 is already
// high without reading the query. Uses by hidden theorems (the leave-out policy's) are not
// counted, exactly as the usage prior does not count them. Pure.
import type { LeaveOutPolicy } from '../../../common/retrieval-types';
import { isTheorem, type Declaration } from '../corpus';
import type { BenchmarkItem } from './benchmark';
import { retrievalMetricsAt, type RetrievalCase, type RetrievalMetrics } from './metrics';

/** The theorems an item hides under a policy: itself, or every theorem of its module. */
export function hiddenTheorems(decls: readonly Declaration[], item: string, policy: LeaveOutPolicy): string[] {
  if (policy === 'item') return [item];
  const own = decls.find((d) => d.name === item);
  if (!own?.module) return [item];
  return [item, ...decls.filter((d) => isTheorem(d) && d.module === own.module && d.name !== item).map((d) => d.name)];
}

/** Premises most used first (ties in corpus order), uses by `hidden` theorems not counted. */
export function mostUsedPremises(decls: readonly Declaration[], hidden: ReadonlySet<string>, k: number): string[] {
  const counts = new Map<string, number>();
  for (const d of decls) {
    if (!isTheorem(d) || hidden.has(d.name)) continue;
    for (const u of new Set(d.uses)) counts.set(u, (counts.get(u) ?? 0) + 1);
  }
  return decls
    .map((d, i) => ({ d, i }))
    .filter(({ d }) => !isTheorem(d) && (counts.get(d.name) ?? 0) > 0)
    .sort((a, b) => (counts.get(b.d.name) ?? 0) - (counts.get(a.d.name) ?? 0) || a.i - b.i)
    .slice(0, k)
    .map(({ d }) => d.name);
}

export function usageBaseline(
  decls: readonly Declaration[],
  items: readonly BenchmarkItem[],
  ks: readonly number[],
  policy: LeaveOutPolicy = 'item',
): RetrievalMetrics[] {
  const maxK = Math.max(...ks);
  const cases: RetrievalCase[] = items.map((item) => ({
    retrieved: mostUsedPremises(decls, new Set(hiddenTheorems(decls, item.name, policy)), maxK),
    gold: item.gold,
  }));
  return ks.map((k) => ({ ...retrievalMetricsAt(cases, k), k }));
}
