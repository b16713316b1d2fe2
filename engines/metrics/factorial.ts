// Factorial analysis of a 2^n design (the agent paper's section 5). Each configuration cell
// sets every factor low (0) or high (1). For a set A of factors, with s_a(cell) = +1 when a is
// high and −1 when low, the effect of A is
//     effect(A) = 2^|A| / 2^n · Σ_cells Π_{a∈A} s_a(cell) · Y(cell),
// so a main effect is mean(Y | a high) − mean(Y | a low), averaged uniformly over the other
// factors, and a two-factor interaction is the difference of one factor's simple effects at
// the other's two levels (difference in differences), again averaged over the rest. Y(cell)
// is the mean over items of the per-item response; intervals resample items jointly for all
// cells (every cell ran the same items), so the effects' intervals are paired.
import type { FactorialDesign, SweepRunRecord } from '../../common/sweep';
import { bootstrapMany, mean, meanAt, type BootstrapOptions, type Interval } from './bootstrap';
import { at1, byItem, eligible, retrievalRuns, retrievalScores, SUCCESS, MEASURED, type ItemRuns } from './item-outcomes';

export type FactorialResponse = 'faithful@1' | 'typecheck@1' | 'beq@1' | 'f1';

export interface FactorialEffect extends Interval {
  /** Factor names in the design's order; one name for a main effect. */
  factors: string[];
  /** `F`, `F × S`, … */
  label: string;
}

export interface FactorialAnalysis {
  response: FactorialResponse;
  factors: string[];
  /** Items every cell ran. */
  items: number;
  /** Cell means, keyed by configuration name, with each cell's levels. */
  cells: { config: string; levels: Record<string, 0 | 1>; mean: number }[];
  effects: FactorialEffect[];
  /** Simple effects: each factor's effect with one other factor held low or high (averaged over
   * the rest), the paper's ΔS(F = f). Empty for a single factor. */
  simpleEffects: SimpleEffect[];
}

export interface SimpleEffect extends Interval {
  factor: string;
  given: string;
  level: 0 | 1;
}

/** Simple effects from cell means: for factors x ≠ g and level l of g, the mean of the cells
 * with x high minus those with x low, among the cells with g = l. Order: x, then g, then l. */
export function simpleEffectsFromCellMeans(n: number, y: readonly number[]): { x: number; g: number; level: 0 | 1; value: number }[] {
  const out: { x: number; g: number; level: 0 | 1; value: number }[] = [];
  for (let x = 0; x < n; x++) {
    for (let g = 0; g < n; g++) {
      if (g === x) continue;
      for (const level of [0, 1] as const) {
        let hi = 0;
        let lo = 0;
        let count = 0;
        for (let cell = 0; cell < y.length; cell++) {
          if (((cell >> g) & 1) !== level) continue;
          if ((cell >> x) & 1) hi += y[cell]!;
          else {
            lo += y[cell]!;
            count++;
          }
        }
        out.push({ x, g, level, value: (hi - lo) / count });
      }
    }
  }
  return out;
}

/** Every non-empty subset of n factors as a bit mask, main effects first, then pairs, … */
export function effectMasks(n: number): number[] {
  const masks = Array.from({ length: (1 << n) - 1 }, (_, i) => i + 1);
  const bits = (m: number) => m.toString(2).split('1').length - 1;
  return masks.sort((a, b) => bits(a) - bits(b) || a - b);
}

/**
 * Effects from cell means: `y[cell]` where bit i of `cell` is factor i's level. Returns one
 * value per mask of `effectMasks(n)`, in that order.
 */
export function effectsFromCellMeans(n: number, y: readonly number[]): number[] {
  if (y.length !== 1 << n) throw new Error(`a 2^${n} design has ${1 << n} cells, got ${y.length}`);
  return effectMasks(n).map((mask) => {
    let sum = 0;
    for (let cell = 0; cell < y.length; cell++) {
      let sign = 1;
      for (let i = 0; i < n; i++) if (mask & (1 << i)) sign *= cell & (1 << i) ? 1 : -1;
      sum += sign * y[cell]!;
    }
    const order = mask.toString(2).split('1').length - 1;
    return (sum * (1 << order)) / (1 << n);
  });
}

/** Per-item response of one cell (undefined when the item says nothing, e.g. no gold premises). */
function itemResponse(response: FactorialResponse): (it: ItemRuns) => number | undefined {
  switch (response) {
    case 'faithful@1':
      return (it) => at1(it, SUCCESS.faithful);
    case 'typecheck@1':
      return (it) => at1(it, SUCCESS.typecheck);
    case 'beq@1':
      return (it) => (eligible('beq', it) ? at1(it, SUCCESS.beq) : undefined);
    case 'f1':
      return (it) => {
        const rs = retrievalRuns(it);
        return rs.length > 0 ? mean(rs.map((r) => retrievalScores(r).f1)) : undefined;
      };
  }
}

/** Checks that the design is a full 2^n factorial over configurations that have records, and
 * returns the configuration of each cell index. */
export function designCells(design: FactorialDesign, configs: ReadonlySet<string>): string[] {
  const names = design.factors.map((f) => f.name);
  const n = names.length;
  if (n === 0) throw new Error('factorial design: no factors');
  if (n > 6) throw new Error(`factorial design: ${n} factors is more than the 6 a report can show`);
  const cells: (string | undefined)[] = Array.from({ length: 1 << n }, () => undefined);
  for (const [config, levels] of Object.entries(design.cells)) {
    let index = 0;
    names.forEach((f, i) => {
      const l = levels[f];
      if (l !== 0 && l !== 1) throw new Error(`factorial design: cell ${config} has no level 0 or 1 for factor ${f}`);
      if (l === 1) index |= 1 << i;
    });
    if (cells[index] !== undefined) throw new Error(`factorial design: cells ${cells[index]} and ${config} set the same levels`);
    cells[index] = config;
  }
  return cells.map((c, index) => {
    const levels = names.map((f, i) => `${f}=${index & (1 << i) ? 1 : 0}`).join(', ');
    if (c === undefined) throw new Error(`factorial design: no cell declared for ${levels}`);
    if (!configs.has(c)) throw new Error(`factorial design: no records for cell ${c} (${levels})`);
    return c;
  });
}

/** Which responses every cell measured. */
export function factorialResponses(records: readonly SweepRunRecord[], cells: readonly string[]): FactorialResponse[] {
  const of = (c: string) => records.filter((r) => r.config === c);
  const out: FactorialResponse[] = [];
  if (cells.every((c) => MEASURED.faithful(of(c)))) out.push('faithful@1');
  if (cells.every((c) => MEASURED.typecheck(of(c)))) out.push('typecheck@1');
  if (cells.every((c) => MEASURED.beq(of(c)))) out.push('beq@1');
  if (cells.every((c) => of(c).some((r) => r.goldPremises.length > 0 && r.premises.length > 0))) out.push('f1');
  return out;
}

export function factorialAnalysis(
  records: readonly SweepRunRecord[],
  design: FactorialDesign,
  response: FactorialResponse,
  opts: BootstrapOptions = {},
): FactorialAnalysis {
  const names = design.factors.map((f) => f.name);
  const n = names.length;
  const cells = designCells(design, new Set(records.map((r) => r.config)));
  const f = itemResponse(response);
  const perCell = cells.map((c) => new Map(byItem(records.filter((r) => r.config === c)).map((it) => [it.item, f(it)])));
  // Items every cell ran and measured.
  const items = [...perCell[0]!.keys()].filter((item) => perCell.every((m) => m.get(item) !== undefined));
  if (items.length === 0) throw new Error(`factorial analysis of ${response}: no item was measured in every cell`);
  const table = perCell.map((m) => items.map((item) => m.get(item)!));
  const cellMeans = (ix: readonly number[]) => table.map((ys) => meanAt(ys, ix));
  const masks = effectMasks(n);
  const all = items.map((_, i) => i);
  // One resampling for all effects: every effect sees the same items.
  const simple = simpleEffectsFromCellMeans(n, cellMeans(all));
  const intervals = bootstrapMany(
    items.length,
    (ix) => {
      const means = cellMeans(ix);
      return [...effectsFromCellMeans(n, means), ...simpleEffectsFromCellMeans(n, means).map((s) => s.value)];
    },
    opts,
  );
  const effects = masks.map((mask, e) => {
    const factors = names.filter((_, i) => mask & (1 << i));
    return { factors, label: factors.join(' × '), ...intervals[e]! };
  });
  const simpleEffects = simple.map((s, j) => ({
    factor: names[s.x]!,
    given: names[s.g]!,
    level: s.level,
    ...intervals[masks.length + j]!,
  }));
  const means = cellMeans(all);
  return {
    response,
    factors: names,
    items: items.length,
    cells: cells.map((config, index) => ({
      config,
      levels: Object.fromEntries(names.map((f, i) => [f, index & (1 << i) ? 1 : 0])) as Record<string, 0 | 1>,
      mean: means[index]!,
    })),
    effects,
    simpleEffects,
  };
}
