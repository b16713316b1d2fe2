// Formatting shared by the HTML, Markdown and CSV renderings.
import type { Interval } from '../metrics/bootstrap';
import type { RateName } from '../metrics/item-outcomes';

const RATE_TITLES: Record<RateName, string> = { typecheck: 'Typecheck', beq: 'BEq+', faithful: 'Faithful' };

export function rateTitle(rate: RateName): string {
  return RATE_TITLES[rate];
}

export function rateLabel(rate: RateName, at: '1' | 'k', k?: number): string {
  return `${rateTitle(rate)}@${at === '1' ? '1' : (k ?? 'k')}`;
}

/** A fraction as a percentage with one decimal. */
export function pct(x: number | undefined): string {
  return x === undefined || Number.isNaN(x) ? '–' : (x * 100).toFixed(1);
}

/** `42.1 [38.0, 46.3]` (percent). */
export function pctInterval(i: Interval | null | undefined): string {
  if (!i) return '–';
  return `${pct(i.estimate)} [${pct(i.lo)}, ${pct(i.hi)}]`;
}

/** A signed difference in percentage points with its interval. */
export function ptsInterval(i: Interval): string {
  const s = (x: number) => (Number.isNaN(x) ? '–' : `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)}`);
  return `${s(i.estimate)} [${s(i.lo)}, ${s(i.hi)}]`;
}

export function num(x: number | undefined, digits = 2): string {
  return x === undefined || Number.isNaN(x) ? '–' : x.toFixed(digits);
}

export function plainInterval(i: Interval | null | undefined, digits = 2): string {
  if (!i) return '–';
  return `${num(i.estimate, digits)} [${num(i.lo, digits)}, ${num(i.hi, digits)}]`;
}

export function ms(x: number | undefined): string {
  if (x === undefined || Number.isNaN(x)) return '–';
  return x >= 10_000 ? `${(x / 1000).toFixed(1)} s` : x >= 1000 ? `${(x / 1000).toFixed(2)} s` : `${Math.round(x)} ms`;
}

export function pValue(p: number): string {
  return p < 0.001 ? '<0.001' : p.toFixed(3);
}
