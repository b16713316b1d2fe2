// Cumulative success against budget, from the recorded attempts: the share of items (per item,
// the share of its samples) that had compiled by repair budget r, i.e. whose first compiling
// attempt was round ≤ r. The loop stops at the first compiling attempt and the judge grades
// that one, so a faithful run was faithful from its first compiling round on: faithful by r is
// faithful ∧ first compile ≤ r. In agent mode the budget is the step count: compiled by T when
// the working file first compiled at a step ≤ T, faithful by T when the run ended faithful
// within T steps (the agent paper's figure 3).
import type { SweepRunRecord } from '../../common/sweep';
import { mean } from './bootstrap';
import { byItem } from './item-outcomes';
import { byConfig } from './sweep-metrics';

export interface BudgetPoint {
  budget: number;
  compiled: number;
  /** null when the judge did not run in this configuration. */
  faithful: number | null;
}

export interface BudgetCurve {
  config: string;
  /** `repair` rounds (0 = first attempt only) or agent `steps`. */
  unit: 'repair' | 'steps';
  items: number;
  points: BudgetPoint[];
}

function firstCompiledRound(r: SweepRunRecord): number | undefined {
  if (r.outcome === 'failed' || !r.checked) return undefined;
  let first: number | undefined;
  for (const a of r.attempts ?? []) if (a.compiled && (first === undefined || a.round < first)) first = a.round;
  return first;
}

function curve(config: string, records: readonly SweepRunRecord[], unit: BudgetCurve['unit']): BudgetCurve {
  const items = byItem(records);
  const judged = records.some((r) => r.judgeGrade !== null && r.judgeGrade !== undefined);
  const compiledAt = (r: SweepRunRecord) =>
    unit === 'repair' ? firstCompiledRound(r) : r.outcome === 'failed' ? undefined : (r.compiledAtStep ?? undefined);
  const faithfulAt = (r: SweepRunRecord) =>
    r.faithful !== true || r.outcome === 'failed' ? undefined : unit === 'repair' ? firstCompiledRound(r) : r.agentSteps;
  const max = Math.max(
    unit === 'repair' ? 0 : 1,
    ...records.map((r) => (unit === 'repair' ? Math.max(0, ...(r.attempts ?? []).map((a) => a.round)) : (r.agentSteps ?? 0))),
  );
  const points: BudgetPoint[] = [];
  for (let b = unit === 'repair' ? 0 : 1; b <= max; b++) {
    const share = (at: (r: SweepRunRecord) => number | undefined) =>
      mean(
        items.map(
          (it) =>
            it.runs.filter((r) => {
              const x = at(r);
              return x !== undefined && x <= b;
            }).length / it.runs.length,
        ),
      );
    points.push({ budget: b, compiled: share(compiledAt), faithful: judged ? share(faithfulAt) : null });
  }
  return { config, unit, items: items.length, points };
}

/** One repair-budget curve per configuration that checked anything with Lean. */
export function repairBudgetCurves(records: readonly SweepRunRecord[]): BudgetCurve[] {
  return [...byConfig(records)].filter(([, rs]) => rs.some((r) => r.checked)).map(([c, rs]) => curve(c, rs, 'repair'));
}

/** One step-budget curve per configuration whose records carry agent steps. */
export function stepBudgetCurves(records: readonly SweepRunRecord[]): BudgetCurve[] {
  return [...byConfig(records)]
    .filter(([, rs]) => rs.some((r) => typeof r.agentSteps === 'number'))
    .map(([c, rs]) => curve(c, rs, 'steps'));
}
