// Agreement of two judges on the same units: Cohen's kappa on a yes/no verdict, and the
// quadratically weighted kappa on 0–10 grades, each with a percentile-bootstrap interval over
// items (the k samples of one item are resampled together, as every interval of the report is;
// same seed, same resamples). Why a bootstrap rather than the analytic large-sample standard
// error: units are clustered by item when k > 1, sweeps are often small, and kappa sits near
// its bound of 1, where the normal interval runs past it. Kappa is undefined when chance
// agreement is already complete (both judges gave one and the same answer to every unit):
// it is reported as undefined, with the reason, never as NaN. Pure.
import { bootstrapDistribution, DEFAULT_RESAMPLES, quantileSorted, type BootstrapOptions } from './bootstrap';

/** Two judges' verdicts on one unit (a configuration's item and sample). */
export interface VerdictPair {
  item: string;
  first: boolean;
  second: boolean;
}

/** The 2×2 table: `both` yes, `firstOnly` (first yes, second no), `secondOnly`, `neither`. */
export interface AgreementTable {
  both: number;
  firstOnly: number;
  secondOnly: number;
  neither: number;
}

export function agreementTable(pairs: readonly VerdictPair[]): AgreementTable {
  const t: AgreementTable = { both: 0, firstOnly: 0, secondOnly: 0, neither: 0 };
  for (const p of pairs) {
    if (p.first && p.second) t.both++;
    else if (p.first) t.firstOnly++;
    else if (p.second) t.secondOnly++;
    else t.neither++;
  }
  return t;
}

/** Observed agreement p_o, chance agreement p_e from each judge's own yes-rate, and
 * κ = (p_o − p_e) / (1 − p_e); κ null when p_e = 1 (or there are no units). */
export function cohensKappa(t: AgreementTable): { observed: number; expected: number; kappa: number | null } | null {
  const n = t.both + t.firstOnly + t.secondOnly + t.neither;
  if (n === 0) return null;
  const observed = (t.both + t.neither) / n;
  const firstYes = (t.both + t.firstOnly) / n;
  const secondYes = (t.both + t.secondOnly) / n;
  const expected = firstYes * secondYes + (1 - firstYes) * (1 - secondYes);
  return { observed, expected, kappa: expected === 1 ? null : (observed - expected) / (1 - expected) };
}

/** Quadratically weighted kappa of paired grades: 1 − (mean squared difference of the pairs) /
 * (the same under independence, from each judge's own grades: (x̄ − ȳ)² + var x + var y);
 * null when that is 0 (both judges gave every unit one and the same grade) or there are none. */
export function weightedKappa(pairs: readonly { first: number; second: number }[]): number | null {
  const n = pairs.length;
  if (n === 0) return null;
  let sx = 0;
  let sy = 0;
  let observed = 0;
  for (const p of pairs) {
    sx += p.first;
    sy += p.second;
    observed += (p.first - p.second) ** 2;
  }
  const mx = sx / n;
  const my = sy / n;
  let vx = 0;
  let vy = 0;
  for (const p of pairs) {
    vx += (p.first - mx) ** 2;
    vy += (p.second - my) ** 2;
  }
  const expected = (mx - my) ** 2 + vx / n + vy / n;
  return expected === 0 ? null : 1 - observed / n / expected;
}

export interface KappaEstimate {
  /** κ on all the units; null when it is undefined there (`reason` says why). */
  estimate: number | null;
  /** Its 95% percentile-bootstrap interval over items; null without one (`reason` says why). */
  interval: { lo: number; hi: number } | null;
  reason?: string;
  /** Resamples in which κ was undefined, left out of the interval. */
  degenerateResamples: number;
}

/** Groups units by item, in first-seen order (the bootstrap draws items). */
function byItem<T extends { item: string }>(units: readonly T[]): T[][] {
  const groups = new Map<string, T[]>();
  for (const u of units) {
    let g = groups.get(u.item);
    if (!g) groups.set(u.item, (g = []));
    g.push(u);
  }
  return [...groups.values()];
}

/** A statistic of units with its percentile interval over items; undefined values (null) are
 * reported with `reason`. */
function overItems<T extends { item: string }>(
  units: readonly T[],
  statistic: (units: readonly T[]) => number | null,
  reason: string,
  opts: BootstrapOptions,
): KappaEstimate {
  const full = statistic(units);
  if (full === null) return { estimate: null, interval: null, reason, degenerateResamples: 0 };
  const items = byItem(units);
  if (items.length < 2) return { estimate: full, interval: null, reason: 'no interval: fewer than two items', degenerateResamples: 0 };
  const { resampled } = bootstrapDistribution(items.length, (ix) => statistic(ix.flatMap((i) => items[i]!)) ?? NaN, opts);
  const degenerateResamples = (opts.resamples ?? DEFAULT_RESAMPLES) - resampled.length;
  if (resampled.length === 0)
    return { estimate: full, interval: null, reason: 'no interval: undefined in every resample', degenerateResamples };
  const alpha = (1 - (opts.level ?? 0.95)) / 2;
  return {
    estimate: full,
    interval: { lo: quantileSorted(resampled, alpha), hi: quantileSorted(resampled, 1 - alpha) },
    degenerateResamples,
  };
}

/** Cohen's κ of the pairs with its bootstrap interval over items. */
export function kappaWithInterval(pairs: readonly VerdictPair[], opts: BootstrapOptions = {}): KappaEstimate {
  return overItems(
    pairs,
    (units) => cohensKappa(agreementTable(units))?.kappa ?? null,
    pairs.length === 0
      ? 'no unit has both verdicts'
      : 'undefined: both judges gave every unit the same single verdict, so chance agreement is already complete',
    opts,
  );
}

/** Quadratically weighted κ of paired grades with its bootstrap interval over items. */
export function weightedKappaWithInterval(
  pairs: readonly { item: string; first: number; second: number }[],
  opts: BootstrapOptions = {},
): KappaEstimate {
  return overItems(
    pairs,
    (units) => weightedKappa(units),
    pairs.length === 0 ? 'no unit has both grades' : 'undefined: both judges gave every unit one and the same grade',
    opts,
  );
}
