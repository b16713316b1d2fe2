// Builds sweep run records for metric and report tests: defaults for everything a test does
// not care about.
import type { SweepRunRecord } from '../../common/sweep';

export function runRecord(p: Partial<SweepRunRecord> & { config: string; item: string }): SweepRunRecord {
  const sample = p.sample ?? 0;
  const sweepId = p.sweepId ?? 'sw';
  const compiled = p.compiled ?? false;
  return {
    sweepId,
    configHash: `hash-${p.config}`,
    sample,
    workflowId: `${sweepId}/${p.config}/${p.item}/${sample}`,
    outcome: compiled ? 'compiled' : 'not-compiled',
    compiled,
    checked: true,
    equivalent: null,
    judgeGrade: null,
    faithful: null,
    attempts: [{ round: 0, compiled }],
    repairRounds: 0,
    premises: [],
    goldPremises: [],
    tags: {},
    stageMs: {},
    formalStatement: 'theorem thm_P : True := by sorry',
    finishedAt: '2026-11-30T08:00:00.000Z',
    ...p,
  };
}
