// The record of a rescore's unit: the source unit's record (its statement, attempts, premises,
// compile result) under the rescore's identity, with the new judge's verdict and the source
// judge's beside it. Pure: the record activity calls it, tests call it directly.
import type { RejudgeResult } from '../../common/rescore';
import type { SweepRunRecord } from '../../common/sweep';
import { equivalenceFields, failedRecord, type RunIdentity } from './record';

export function rescoredRecord(id: RunIdentity, source: SweepRunRecord | null, result: RejudgeResult, finishedAt: Date): SweepRunRecord {
  const note = result.rescore;
  const judged = note.carried === undefined && result.judge !== null;
  // What the source had, or (no source record at all) a unit that never ran.
  const base = source ?? failedRecord(id, note.carried ?? 'the source sweep has no record of this unit', finishedAt);
  // The source's usage, cache, reuse and agent step counts describe its run, not this one.
  const { usage: _usage, cache: _cache, reusedFrom: _reused, notComparable: _notComparable, ...kept } = base;
  const equivalence = result.equivalence;
  return {
    ...kept,
    sweepId: id.sweepId,
    config: id.cell.name,
    configHash: id.cell.hash,
    workflowId: id.workflowId,
    outcome: judged ? result.outcome : base.outcome,
    // Asked again (a judged unit with `--equivalence`): Lean's new answer (a screen refusal or a
    // comparison not made: not measured); else (or carried over) the source's.
    ...(judged && equivalence !== undefined
      ? equivalenceFields(equivalence)
      : { equivalent: base.equivalent, ...(base.notComparable ? { notComparable: true as const } : {}) }),
    judgeGrade: judged ? result.judge!.grade : null,
    faithful: judged ? result.judge!.faithful : null,
    // Time and tokens of this unit: the judge (and equivalence check) alone.
    stageMs: result.timings ?? {},
    ...(result.usage ? { usage: { ...result.usage } } : {}),
    ...(result.cache ? { cache: { ...result.cache } } : {}),
    rescoreOf: note.source,
    sourceJudgeGrade: note.sourceJudgeGrade,
    sourceFaithful: note.sourceFaithful,
    ...(note.carried !== undefined ? { carried: note.carried } : {}),
    finishedAt: finishedAt.toISOString(),
  };
}
