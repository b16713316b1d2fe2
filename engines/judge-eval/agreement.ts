// Agreement of binary verdicts (the judge's "faithful" against human "equivalent" labels, or one
// judge against another): confusion counts, accuracy, precision, recall and Cohen's kappa, each
// with a seeded percentile-bootstrap interval over items. Pure: no I/O.

export interface Confusion {
  /** reference yes, predicted yes */
  tp: number;
  /** reference no, predicted yes */
  fp: number;
  /** reference yes, predicted no */
  fn: number;
  /** reference no, predicted no */
  tn: number;
}

export interface AgreementStats {
  n: number;
  confusion: Confusion;
  accuracy: number | null;
  /** Of the items predicted yes, the share the reference calls yes. null when none predicted yes. */
  precision: number | null;
  /** Of the items the reference calls yes, the share predicted yes. null when the reference has none. */
  recall: number | null;
  /** Cohen's kappa: agreement beyond chance. null when undefined (no items). */
  kappa: number | null;
}

export type StatName = 'accuracy' | 'precision' | 'recall' | 'kappa';

export interface Interval {
  lo: number;
  hi: number;
}

export interface AgreementWithIntervals extends AgreementStats {
  /** 95% percentile-bootstrap intervals over items (null where the statistic is undefined). */
  ci: Record<StatName, Interval | null>;
}

/** A pair of verdicts on one item: the reference (humans, or the first judge) and the prediction. */
export interface VerdictPair {
  reference: boolean;
  predicted: boolean;
}

export function confusion(pairs: readonly VerdictPair[]): Confusion {
  const c: Confusion = { tp: 0, fp: 0, fn: 0, tn: 0 };
  for (const p of pairs) {
    if (p.reference && p.predicted) c.tp++;
    else if (!p.reference && p.predicted) c.fp++;
    else if (p.reference && !p.predicted) c.fn++;
    else c.tn++;
  }
  return c;
}

const ratio = (a: number, b: number): number | null => (b === 0 ? null : a / b);

export function statsOf(c: Confusion): AgreementStats {
  const n = c.tp + c.fp + c.fn + c.tn;
  const accuracy = ratio(c.tp + c.tn, n);
  let kappa: number | null = null;
  if (n > 0) {
    // Chance agreement from each side's own yes-rate.
    const refYes = (c.tp + c.fn) / n;
    const predYes = (c.tp + c.fp) / n;
    const pe = refYes * predYes + (1 - refYes) * (1 - predYes);
    kappa = pe === 1 ? (accuracy === 1 ? 1 : 0) : (accuracy! - pe) / (1 - pe);
  }
  return { n, confusion: c, accuracy, precision: ratio(c.tp, c.tp + c.fp), recall: ratio(c.tp, c.tp + c.fn), kappa };
}

/** mulberry32: a small seeded generator, so intervals are the same on every machine. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The q-quantile of sorted values, by linear interpolation between closest ranks. */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) throw new Error('quantile of no values');
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo);
}

export interface BootstrapOptions {
  /** Resamples; default 1000. */
  resamples?: number;
  seed?: number;
}

/** Agreement statistics with 95% percentile-bootstrap intervals over items. */
export function agreement(pairs: readonly VerdictPair[], opts: BootstrapOptions = {}): AgreementWithIntervals {
  const stats = statsOf(confusion(pairs));
  const resamples = opts.resamples ?? 1000;
  const rand = seededRandom(opts.seed ?? 1);
  const draws: Record<StatName, number[]> = { accuracy: [], precision: [], recall: [], kappa: [] };
  if (pairs.length > 0) {
    for (let r = 0; r < resamples; r++) {
      const sample: VerdictPair[] = [];
      for (let i = 0; i < pairs.length; i++) sample.push(pairs[Math.floor(rand() * pairs.length)]!);
      const s = statsOf(confusion(sample));
      for (const k of Object.keys(draws) as StatName[]) if (s[k] !== null) draws[k].push(s[k]!);
    }
  }
  const ci = {} as Record<StatName, Interval | null>;
  for (const k of Object.keys(draws) as StatName[]) {
    const v = draws[k].sort((a, b) => a - b);
    ci[k] = stats[k] === null || v.length === 0 ? null : { lo: quantile(v, 0.025), hi: quantile(v, 0.975) };
  }
  return { ...stats, ci };
}
