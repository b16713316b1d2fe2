// Dependency-retrieval metrics against gold premises: precision, recall and F1 per item,
// averaged over items (macro, what the DRIFT and RAutoformalizer papers report), and micro F1
// from the totals. Pure.
//
// At a cut-off k an item's retrieved set is the first k distinct names of its ranking.
// Precision is hits / |retrieved set| (so a retriever that returns fewer than k names is not
// charged for the empty slots, and DRIFT's dynamic-size set is measured as it is); recall is
// hits / |gold|; F1 is 0 when both are 0. Items without gold premises are left out (counted).

export interface RetrievalCase {
  /** Retrieved names, best first (repeats ignored). */
  retrieved: readonly string[];
  gold: readonly string[];
}

export interface RetrievalMetrics {
  k: number;
  /** Macro averages over items, in percent. */
  precision: number;
  recall: number;
  f1: number;
  /** F1 of the summed hits, retrieved and gold counts, in percent. */
  microF1: number;
  /** Items measured (with at least one gold premise). */
  items: number;
  /** Items left out for having no gold premise. */
  skipped: number;
}

export function f1(p: number, r: number): number {
  return p + r > 0 ? (2 * p * r) / (p + r) : 0;
}

function distinctPrefix(names: readonly string[], k: number): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const n of names) {
    if (out.length >= k) break;
    if (seen.has(n)) continue;
    seen.add(n);
    out.push(n);
  }
  return out;
}

/** Metrics at one cut-off; k = Infinity measures the whole retrieved set. */
export function retrievalMetricsAt(cases: readonly RetrievalCase[], k: number): RetrievalMetrics {
  if (!(k >= 1)) throw new Error(`k must be ≥ 1, got ${k}`);
  let p = 0;
  let r = 0;
  let f = 0;
  let items = 0;
  let skipped = 0;
  let hits = 0;
  let retrievedTotal = 0;
  let goldTotal = 0;
  for (const c of cases) {
    const gold = new Set(c.gold);
    if (gold.size === 0) {
      skipped++;
      continue;
    }
    const got = distinctPrefix(c.retrieved, k);
    const hit = got.filter((n) => gold.has(n)).length;
    const pi = got.length > 0 ? hit / got.length : 0;
    const ri = hit / gold.size;
    p += pi;
    r += ri;
    f += f1(pi, ri);
    items++;
    hits += hit;
    retrievedTotal += got.length;
    goldTotal += gold.size;
  }
  const avg = (x: number) => (items > 0 ? (100 * x) / items : 0);
  const microP = retrievedTotal > 0 ? hits / retrievedTotal : 0;
  const microR = goldTotal > 0 ? hits / goldTotal : 0;
  return { k, precision: avg(p), recall: avg(r), f1: avg(f), microF1: 100 * f1(microP, microR), items, skipped };
}

export function retrievalMetrics(cases: readonly RetrievalCase[], ks: readonly number[]): RetrievalMetrics[] {
  return ks.map((k) => retrievalMetricsAt(cases, k));
}

/** `1,3,5,10` → [1, 3, 5, 10]; throws on anything but positive whole numbers. */
export function parseKs(text: string): number[] {
  const ks = text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map(Number);
  if (ks.length === 0 || ks.some((k) => !Number.isInteger(k) || k < 1)) {
    throw new Error(`--k expects positive whole numbers separated by commas, got "${text}"`);
  }
  return [...new Set(ks)].sort((a, b) => a - b);
}

/** A Markdown table of the metrics (figures in percent, two decimals). */
export function metricsTable(rows: readonly RetrievalMetrics[], kLabel: (k: number) => string = String): string {
  const fmt = (x: number) => x.toFixed(2);
  const lines = ['| k | precision | recall | F1 | micro F1 |', '|---:|---:|---:|---:|---:|'];
  for (const m of rows) lines.push(`| ${kLabel(m.k)} | ${fmt(m.precision)} | ${fmt(m.recall)} | ${fmt(m.f1)} | ${fmt(m.microF1)} |`);
  return lines.join('\n');
}
