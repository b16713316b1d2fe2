// The activity of a rescore's units: the source unit's record, as the rejudge workflow needs it,
// and the rescore's rubric (kept in the rescore sweep's row, so it is not carried through every
// workflow input of the sweep).
import type { RescoreActivities, RescoreSpec, SourceRecord } from '../common/rescore';
import type { ResultsDb } from '../engines/results/results-db';
import { rubricInstructions } from '../engines/llm/judge-prompt';

export function createRescoreActivities(deps: { results: ResultsDb }): RescoreActivities {
  const db = deps.results;
  return {
    async rescoreSource({ sweepId, source }) {
      const [record, sweep] = await Promise.all([db.getRun(source), db.getSweep(sweepId)]);
      const rubric = (sweep?.spec as { rescore?: RescoreSpec } | undefined)?.rescore?.rubric?.text;
      const slice: SourceRecord | null = record && {
        workflowId: record.workflowId,
        outcome: record.outcome,
        compiled: record.compiled,
        checked: record.checked,
        formalStatement: record.formalStatement,
        judgeGrade: record.judgeGrade,
        faithful: record.faithful,
        equivalent: record.equivalent,
        ...(record.refusal !== undefined ? { refusal: record.refusal } : {}),
        ...(record.error !== undefined ? { error: record.error } : {}),
      };
      return { record: slice, ...(rubric !== undefined ? { rubric: rubricInstructions(rubric) } : {}) };
    },
  };
}
