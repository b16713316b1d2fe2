// Agreement of binary verdicts (the judge's "faithful" against human "equivalent" labels, or one
// judge against another): confusion counts, accuracy, precision, recall and Cohen's kappa, each
// with a seeded percentile-bootstrap interval over items. Pure: no I/O.
import { cohensKappa } from '../metrics/kappa';
import { bootstrapMany, type BootstrapOptions } from '../metrics/bootstrap';

export type { BootstrapOptions };

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
  // The reference is the first judge: tp both yes, fn the reference only, fp the prediction only.
  const k = cohensKappa({ both: c.tp, firstOnly: c.fn, secondOnly: c.fp, neither: c.tn });
  // Both sides constant: undefined in general; here 1 when they agree (and 0 when they do not).
  const kappa = k === null ? null : (k.kappa ?? (accuracy === 1 ? 1 : 0));
  return { n, confusion: c, accuracy, precision: ratio(c.tp, c.tp + c.fp), recall: ratio(c.tp, c.tp + c.fn), kappa };
}

/** Agreement statistics with 95% percentile-bootstrap intervals over items (the shared seeded
 * bootstrap of engines/metrics, all four statistics from the same resamples). */
export function agreement(pairs: readonly VerdictPair[], opts: BootstrapOptions = {}): AgreementWithIntervals {
  const stats = statsOf(confusion(pairs));
  const names: StatName[] = ['accuracy', 'precision', 'recall', 'kappa'];
  const intervals = bootstrapMany(
    pairs.length,
    (ix) => {
      const s = statsOf(confusion(ix.map((i) => pairs[i]!)));
      return names.map((k) => s[k] ?? NaN);
    },
    opts,
  );
  const ci = {} as Record<StatName, Interval | null>;
  names.forEach((k, j) => {
    const iv = intervals[j]!;
    ci[k] = stats[k] === null || Number.isNaN(iv.lo) ? null : { lo: iv.lo, hi: iv.hi };
  });
  return { ...stats, ci };
}
