// Metrics of a sweep per configuration, and per configuration and tag value, computed from the
// run records alone. A rate whose per-item values are all 0 or 1 (one sample per item, and
// every @k) carries a 95% Wilson score interval, which holds at any n; other rates and means a
// 95% percentile-bootstrap interval over items (seeded: the same records always give the same
// report). `Interval.method` says which. Rates are fractions in [0, 1].
//
// @1 is the mean over items of the share of an item's samples that succeed; @k (k = samples
// per item) counts an item when any sample succeeds. Failed runs (the child failed after the
// sweep's retries) count as failures of every rate and are left out of retrieval, repair and
// latency figures, which describe runs that happened.
import type { Stage } from '../../common/run-types';
import { ranRecord, type SweepRunRecord } from '../../common/sweep';
import { bootstrap, mean, meanInterval, quantile, type BootstrapOptions, type Interval } from './bootstrap';
import {
  at1,
  atK,
  byItem,
  eligible,
  MEASURED,
  retrievalRuns,
  retrievalScores,
  SUCCESS,
  type ItemRuns,
  type RateName,
} from './item-outcomes';
import { wilsonInterval } from './exact-tests';
import { passAtKCurve, type PassAtK } from './pass-at-k';

/** A rate over items: Wilson when every item is a success or a failure, else the bootstrap. */
export function rateInterval(values: readonly number[], opts: BootstrapOptions = {}): Interval {
  if (values.every((v) => v === 0 || v === 1)) {
    return { ...wilsonInterval(values.filter((v) => v === 1).length, values.length, opts.level ?? 0.95), method: 'wilson' };
  }
  return { ...meanInterval(values, opts), method: 'bootstrap' };
}

export interface RateMetric {
  at1: Interval;
  atK: Interval;
  /** Samples per item (the k of @k): the most any item has. */
  k: number;
  /** Items counted. */
  items: number;
  /** Unbiased pass@k for k = 1..(the fewest samples an item has); pass@n is "any of n". */
  passAtK: PassAtK[];
}

export interface RetrievalMetric {
  /** Macro: per item (mean over its samples), then the mean over items. */
  precision: Interval;
  recall: Interval;
  f1: Interval;
  /** Micro: from hits, retrieved and gold summed over all runs. */
  microPrecision: Interval;
  microRecall: Interval;
  microF1: Interval;
  items: number;
}

export interface LatencyMetric {
  p50: number;
  p95: number;
  /** Runs that reported the stage. */
  runs: number;
}

export interface UsageMetric {
  runs: number;
  meanPromptTokens: number;
  meanCompletionTokens: number;
  meanTotalTokens: number;
  totalTokens: number;
  /** LLM calls answered from the reply cache and sent to a provider, over runs that say. */
  cacheHits?: number;
  cacheMisses?: number;
  /** Present when every counted run reported a cost. */
  meanCostUsd?: number;
  totalCostUsd?: number;
}

export interface GroupMetrics {
  config: string;
  /** Set for per-tag groups. */
  tag?: { key: string; value: string };
  items: number;
  runs: number;
  failedRuns: number;
  /** Units a predictions configuration's file had no statement for (counted as failures). */
  missingRuns: number;
  retrieval: RetrievalMetric | null;
  typecheck: RateMetric | null;
  beq: RateMetric | null;
  faithful: RateMetric | null;
  /** Mean repair rounds per run (per item first), over runs that were not failed. */
  repairRounds: Interval | null;
  /** Milliseconds per stage, and `total` (all stages of a run summed). */
  latency: Partial<Record<Stage | 'total', LatencyMetric>>;
  usage: UsageMetric | null;
}

export interface SweepMetrics {
  /** One group per configuration, in first-seen order. */
  configs: GroupMetrics[];
  /** One group per configuration × tag key × tag value. */
  byTag: GroupMetrics[];
  /** Tag keys left out for having more values than `maxTagValues` (an id-like tag says nothing
   * per value and would multiply the work). */
  skippedTags: string[];
}

export type MetricOptions = BootstrapOptions & {
  /** Compute per-tag groups (default true). */
  tags?: boolean;
  /** Tag keys with more distinct values are left out (default 30). */
  maxTagValues?: number;
};

export const RATE_NAMES: readonly RateName[] = ['typecheck', 'beq', 'faithful'];

/** Records by configuration, configurations in first-seen order. */
export function byConfig(records: readonly SweepRunRecord[]): Map<string, SweepRunRecord[]> {
  const out = new Map<string, SweepRunRecord[]>();
  for (const r of records) {
    const list = out.get(r.config);
    if (list) list.push(r);
    else out.set(r.config, [r]);
  }
  return out;
}

export function computeSweepMetrics(records: readonly SweepRunRecord[], opts: MetricOptions = {}): SweepMetrics {
  const configs: GroupMetrics[] = [];
  const byTag: GroupMetrics[] = [];
  const maxValues = opts.maxTagValues ?? 30;
  const allKeys = [...new Set(records.flatMap((r) => Object.keys(r.tags ?? {})))].sort();
  const valuesOf = (key: string) => new Set(records.map((r) => r.tags?.[key]).filter((v): v is string => v !== undefined));
  const skippedTags = allKeys.filter((k) => valuesOf(k).size > maxValues);
  for (const [config, rs] of byConfig(records)) {
    configs.push(groupMetrics(config, rs, opts));
    if (opts.tags === false) continue;
    const keys = [...new Set(rs.flatMap((r) => Object.keys(r.tags ?? {})))].filter((k) => !skippedTags.includes(k)).sort();
    for (const key of keys) {
      const values = [...new Set(rs.map((r) => r.tags?.[key]).filter((v): v is string => v !== undefined))].sort();
      for (const value of values) {
        byTag.push(
          groupMetrics(
            config,
            rs.filter((r) => r.tags?.[key] === value),
            opts,
            { key, value },
          ),
        );
      }
    }
  }
  return { configs, byTag, skippedTags };
}

export function groupMetrics(
  config: string,
  records: readonly SweepRunRecord[],
  opts: BootstrapOptions = {},
  tag?: { key: string; value: string },
): GroupMetrics {
  const items = byItem(records);
  const ok = records.filter(ranRecord);
  const g: GroupMetrics = {
    config,
    items: items.length,
    runs: records.length,
    failedRuns: records.filter((r) => r.outcome === 'failed').length,
    missingRuns: records.filter((r) => r.outcome === 'missing').length,
    retrieval: retrievalMetric(items, opts),
    typecheck: null,
    beq: null,
    faithful: null,
    repairRounds: null,
    latency: latency(ok),
    usage: usage(ok),
  };
  if (tag) g.tag = tag;
  for (const rate of RATE_NAMES) g[rate] = MEASURED[rate](records) ? rateMetric(items, rate, opts) : null;
  const repairItems = items.map((it) => it.runs.filter(ranRecord)).filter((rs) => rs.length > 0);
  if (repairItems.length > 0)
    g.repairRounds = meanInterval(
      repairItems.map((rs) => mean(rs.map((r) => r.repairRounds))),
      opts,
    );
  return g;
}

export function rateMetric(items: readonly ItemRuns[], rate: RateName, opts: BootstrapOptions = {}): RateMetric {
  const counted = items.filter((it) => eligible(rate, it));
  const ok = SUCCESS[rate];
  return {
    at1: rateInterval(
      counted.map((it) => at1(it, ok)),
      opts,
    ),
    atK: rateInterval(
      counted.map((it) => atK(it, ok)),
      opts,
    ),
    k: Math.max(0, ...counted.map((it) => it.runs.length)),
    items: counted.length,
    passAtK: passAtKCurve(counted, ok, rateInterval, opts),
  };
}

function retrievalMetric(items: readonly ItemRuns[], opts: BootstrapOptions): RetrievalMetric | null {
  // Per item: macro scores averaged over its samples, and summed counts for the micro figures.
  const per = items
    .map((it) => retrievalRuns(it).map(retrievalScores))
    .filter((s) => s.length > 0)
    .map((s) => ({
      p: mean(s.map((x) => x.p)),
      r: mean(s.map((x) => x.r)),
      f1: mean(s.map((x) => x.f1)),
      hits: s.reduce((a, x) => a + x.hits, 0),
      retrieved: s.reduce((a, x) => a + x.retrieved, 0),
      gold: s.reduce((a, x) => a + x.gold, 0),
    }));
  if (per.length === 0) return null;
  const hits = per.map((x) => x.hits);
  const retrieved = per.map((x) => x.retrieved);
  const gold = per.map((x) => x.gold);
  const sum = (v: readonly number[], ix: readonly number[]) => {
    let s = 0;
    for (let j = 0; j < ix.length; j++) s += v[ix[j]!]!;
    return s;
  };
  const ratio = (num: number, den: number) => (den > 0 ? num / den : 0);
  const microP = (ix: readonly number[]) => ratio(sum(hits, ix), sum(retrieved, ix));
  const microR = (ix: readonly number[]) => ratio(sum(hits, ix), sum(gold, ix));
  const microF = (ix: readonly number[]) => {
    const h = sum(hits, ix);
    const p = ratio(h, sum(retrieved, ix));
    const r = ratio(h, sum(gold, ix));
    return p + r > 0 ? (2 * p * r) / (p + r) : 0;
  };
  return {
    precision: meanInterval(
      per.map((x) => x.p),
      opts,
    ),
    recall: meanInterval(
      per.map((x) => x.r),
      opts,
    ),
    f1: meanInterval(
      per.map((x) => x.f1),
      opts,
    ),
    microPrecision: bootstrap(per.length, microP, opts),
    microRecall: bootstrap(per.length, microR, opts),
    microF1: bootstrap(per.length, microF, opts),
    items: per.length,
  };
}

function latency(runs: readonly SweepRunRecord[]): GroupMetrics['latency'] {
  const by = new Map<Stage | 'total', number[]>();
  const push = (k: Stage | 'total', v: number) => {
    const list = by.get(k);
    if (list) list.push(v);
    else by.set(k, [v]);
  };
  for (const r of runs) {
    let total = 0;
    let any = false;
    for (const [stage, ms] of Object.entries(r.stageMs ?? {}) as [Stage, number | undefined][]) {
      if (typeof ms !== 'number' || !Number.isFinite(ms)) continue;
      push(stage, ms);
      total += ms;
      any = true;
    }
    if (any) push('total', total);
  }
  const out: GroupMetrics['latency'] = {};
  for (const [k, v] of by) out[k] = { p50: quantile(v, 0.5), p95: quantile(v, 0.95), runs: v.length };
  return out;
}

function usage(runs: readonly SweepRunRecord[]): UsageMetric | null {
  const withUsage = runs.filter((r) => r.usage);
  if (withUsage.length === 0) return null;
  const u = withUsage.map((r) => r.usage!);
  const out: UsageMetric = {
    runs: u.length,
    meanPromptTokens: mean(u.map((x) => x.promptTokens)),
    meanCompletionTokens: mean(u.map((x) => x.completionTokens)),
    meanTotalTokens: mean(u.map((x) => x.totalTokens)),
    totalTokens: u.reduce((a, x) => a + x.totalTokens, 0),
  };
  const cached = withUsage.filter((r) => r.cache);
  if (cached.length > 0) {
    out.cacheHits = cached.reduce((a, r) => a + r.cache!.hits, 0);
    out.cacheMisses = cached.reduce((a, r) => a + r.cache!.misses, 0);
  }
  if (u.every((x) => typeof x.costUsd === 'number')) {
    out.totalCostUsd = u.reduce((a, x) => a + x.costUsd!, 0);
    out.meanCostUsd = out.totalCostUsd / u.length;
  }
  return out;
}
