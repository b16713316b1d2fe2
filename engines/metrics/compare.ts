// Paired comparisons of two configurations on the items both ran. Rates: McNemar's exact test
// on the first sample's outcome (and on @k when there are several samples), with a paired
// bootstrap interval for the difference of the @1 rates. Retrieval F1: the paired sign-flip
// permutation test (exact-tests.ts) on the per-item differences of F1, with a paired bootstrap
// interval. Every comparison of one metric across all pairs also gets a Holm-adjusted p-value,
// since a report that compares many pairs finds some "significant" by chance. A verdict is
// given only where the test could reach p < 0.05 on this many items at all.
import type { SweepRunRecord } from '../../common/sweep';
import { bootstrap, bootstrapDistribution, mean, meanAt, quantileSorted, type BootstrapOptions, type Interval } from './bootstrap';
import {
  at1,
  atK,
  byItem,
  eligible,
  firstSample,
  MEASURED,
  retrievalRuns,
  retrievalScores,
  SUCCESS,
  type ItemRuns,
  type RateName,
} from './item-outcomes';
import { holm, mcnemarPaired, type McNemarResult } from './mcnemar';
import { mcnemarMinP, signFlipTest } from './exact-tests';
import { byConfig, RATE_NAMES } from './sweep-metrics';

export type ComparedMetric = `${RateName}@1` | `${RateName}@k` | 'f1';

export interface PairedComparison {
  metric: ComparedMetric;
  a: string;
  b: string;
  /** Items both configurations ran (and, for F1, with gold premises). */
  items: number;
  /** Metric of a minus metric of b, with its paired bootstrap interval. */
  diff: Interval;
  /** McNemar's exact test (rates only). */
  mcnemar?: McNemarResult;
  p: number;
  /** The test behind `p`. */
  test: 'mcnemar-exact' | 'sign-flip-exact' | 'sign-flip-monte-carlo';
  /** Monte Carlo sign-flip: the permutations drawn. */
  permutations?: number;
  /** The smallest p the test could give on these items. */
  minP: number;
  /** Holm-adjusted over all pairs compared on this metric. */
  pHolm: number;
  /** pHolm < 0.05. */
  significant: boolean;
  /** `tie`: no difference at all; `too-few`: the test cannot reach p < 0.05 on this many
   * items, so no verdict; otherwise `difference` (significant) or `within-noise`. */
  verdict: 'tie' | 'too-few' | 'difference' | 'within-noise';
}

type RawComparison = Omit<PairedComparison, 'a' | 'b' | 'pHolm' | 'significant' | 'verdict'>;

/** Paired per-item values of two configurations over their common items. */
function pairItems(a: readonly ItemRuns[], b: readonly ItemRuns[]): [ItemRuns, ItemRuns][] {
  const bm = new Map(b.map((it) => [it.item, it]));
  return a.filter((it) => bm.has(it.item)).map((it) => [it, bm.get(it.item)!]);
}

export function compareRate(
  a: readonly ItemRuns[],
  b: readonly ItemRuns[],
  rate: RateName,
  at: '1' | 'k',
  opts: BootstrapOptions = {},
): RawComparison {
  const ok = SUCCESS[rate];
  const pairs = pairItems(a, b).filter(([x, y]) => eligible(rate, x) && eligible(rate, y));
  const score = at === '1' ? at1 : atK;
  const va = pairs.map(([x]) => score(x, ok));
  const vb = pairs.map(([, y]) => score(y, ok));
  const d = va.map((v, i) => v - vb[i]!);
  const diff = bootstrap(pairs.length, (ix) => meanAt(d, ix), opts);
  const binary =
    at === '1'
      ? [pairs.map(([x]) => firstSample(x, ok)), pairs.map(([, y]) => firstSample(y, ok))]
      : [va.map((v) => v === 1), vb.map((v) => v === 1)];
  const m = mcnemarPaired(binary[0]!, binary[1]!);
  return { metric: `${rate}@${at}`, items: pairs.length, diff, mcnemar: m, p: m.p, test: 'mcnemar-exact', minP: mcnemarMinP(pairs.length) };
}

export function compareF1(a: readonly ItemRuns[], b: readonly ItemRuns[], opts: BootstrapOptions = {}): RawComparison | null {
  const f = (it: ItemRuns) => {
    const runs = retrievalRuns(it);
    return runs.length > 0 ? mean(runs.map((r) => retrievalScores(r).f1)) : undefined;
  };
  const pairs = pairItems(a, b)
    .map(([x, y]) => [f(x), f(y)] as const)
    .filter((p): p is readonly [number, number] => p[0] !== undefined && p[1] !== undefined);
  if (pairs.length === 0) return null;
  const d = pairs.map(([x, y]) => x - y);
  const stat = (ix: readonly number[]) => meanAt(d, ix);
  const { resampled } = bootstrapDistribution(pairs.length, stat, opts);
  const alpha = (1 - (opts.level ?? 0.95)) / 2;
  const diff = { estimate: stat(d.map((_, i) => i)), lo: quantileSorted(resampled, alpha), hi: quantileSorted(resampled, 1 - alpha) };
  // The p-value is the sign-flip test's: a bootstrap p is far too small on a handful of items.
  const flip = signFlipTest(d, opts.seed !== undefined ? { seed: opts.seed } : {});
  // The smallest p possible with this many items, whatever their differences.
  const minP = pairs.length <= 20 ? Math.min(1, 2 / 2 ** pairs.length) : flip.minP;
  return {
    metric: 'f1',
    items: pairs.length,
    diff,
    p: flip.p,
    test: flip.method,
    ...(flip.permutations ? { permutations: flip.permutations } : {}),
    minP,
  };
}

/** Every pair of configurations (a before b in first-seen order), on every metric both
 * measured; Holm adjustment within each metric. */
export function compareConfigurations(records: readonly SweepRunRecord[], opts: BootstrapOptions = {}): PairedComparison[] {
  const groups = [...byConfig(records)].map(([config, rs]) => ({ config, rs, items: byItem(rs) }));
  const raw: (RawComparison & { a: string; b: string })[] = [];
  for (let i = 0; i < groups.length; i++) {
    for (let j = i + 1; j < groups.length; j++) {
      const A = groups[i]!;
      const B = groups[j]!;
      for (const rate of RATE_NAMES) {
        if (!MEASURED[rate](A.rs) || !MEASURED[rate](B.rs)) continue;
        const k = Math.max(...A.items.map((it) => it.runs.length), ...B.items.map((it) => it.runs.length));
        for (const at of k > 1 ? (['1', 'k'] as const) : (['1'] as const)) {
          raw.push({ a: A.config, b: B.config, ...compareRate(A.items, B.items, rate, at, opts) });
        }
      }
      const f = compareF1(A.items, B.items, opts);
      if (f) raw.push({ a: A.config, b: B.config, ...f });
    }
  }
  const out: PairedComparison[] = raw.map((c) => ({ ...c, pHolm: c.p, significant: false, verdict: 'within-noise' }));
  for (const metric of new Set(out.map((c) => c.metric))) {
    const same = out.filter((c) => c.metric === metric);
    const adjusted = holm(same.map((c) => c.p));
    same.forEach((c, i) => {
      c.pHolm = adjusted[i]!;
      const tie = Math.abs(c.diff.estimate) < 1e-12;
      const tooFew = c.minP >= 0.05;
      c.significant = !tie && !tooFew && c.pHolm < 0.05;
      c.verdict = tie ? 'tie' : tooFew ? 'too-few' : c.significant ? 'difference' : 'within-noise';
    });
  }
  return out;
}
