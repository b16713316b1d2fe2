// The `rejudge` workflow: one unit of a rescore sweep. It reads the source unit's record (an
// activity on the results database), and asks the rescore's judge about the recorded statement
// (and, on request, Lean's equivalence check against the gold again), without formalizing or
// compiling anything. Compiled, checked and refused are the source's; the verdict is the new
// judge's, faithful at the rescore's threshold. A source that failed or was not judged is
// carried over as it is, the judge not asked. Deterministic code only.
import { proxyActivities, upsertSearchAttributes } from '@temporalio/workflow';
import { OUTCOME_KEY } from '../common/search-attributes';
import { llmMeterFor } from '../common/run-config';
import { carriedReason, faithfulAt, type RejudgeInput, type RejudgeResult, type RescoreActivities } from '../common/rescore';
import { finishRun, judgeAndCompare, startRun } from './run-core';

// The results database may be down for a while (a PostgreSQL restart): keep retrying.
const { rescoreSource } = proxyActivities<RescoreActivities>({
  startToCloseTimeout: '1m',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s' },
});

export async function rejudge(input: RejudgeInput): Promise<RejudgeResult> {
  const run = startRun(input, { meter: (config) => llmMeterFor(config, input.sample ?? 0, input.llm) });
  const { record: source, rubric } = await rescoreSource({ sweepId: input.sweepId, source: input.source });
  const note = {
    source: input.source,
    sourceOutcome: source?.outcome ?? null,
    sourceJudgeGrade: source?.judgeGrade ?? null,
    sourceFaithful: source?.faithful ?? null,
  };
  const carried = carriedReason(source);
  const refusal = source?.outcome === 'refused' ? (source.refusal ?? 'refused by the screen') : null;
  const statement = {
    statement: source?.formalStatement ?? '',
    compiled: source?.compiled ?? false,
    checked: source?.checked ?? false,
    refusal,
  };
  if (carried !== null || !source) {
    run.notes.push(`rescore of ${input.source}: not judged again (${carried})`);
    const result = await finishRun(run, { ...statement, verdict: null, equivalent: null, budgetSpent: false, attempts: [] });
    const outcome = source?.outcome ?? 'failed';
    upsertSearchAttributes([{ key: OUTCOME_KEY, value: outcome }]);
    return { ...result, outcome, rescore: { ...note, carried: carried ?? 'no source record' } };
  }
  run.notes.push(`rescore of ${input.source}: the recorded statement judged again`);
  const judged = await judgeAndCompare(run, statement, 0, rubric !== undefined ? { rubric } : {});
  // The threshold is the rescore's; the rule that only what Lean accepted is faithful stays.
  const verdict = judged.verdict && {
    ...judged.verdict,
    faithful: faithfulAt(judged.verdict.grade, input.threshold, { ...statement, refused: refusal !== null }),
  };
  const result = await finishRun(run, {
    ...statement,
    verdict,
    // Null unless the check was asked again; the record then keeps the source's.
    equivalent: judged.equivalent,
    budgetSpent: source.outcome === 'budget-exhausted',
    attempts: [],
  });
  return { ...result, rescore: note };
}
