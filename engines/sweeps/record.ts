// Turns a finished child's FormalizeResult (or its failure) into the row the results database
// holds. Pure: the record activity calls it, tests call it directly.
import type { BenchmarkItem, SweepCell, SweepRunRecord } from '../../common/sweep';
import type { FormalizeResult } from '../../common/run-types';
import type { EquivalenceResult } from '../../common/lean-types';
import { refusalReason } from '../../common/verdict';

export interface RunIdentity {
  sweepId: string;
  cell: Pick<SweepCell, 'name' | 'hash'>;
  item: Pick<BenchmarkItem, 'id' | 'goldPremises' | 'tags'>;
  sample: number;
  workflowId: string;
}

/** A record's equivalence fields. A statement the screen refused was never checked, two that
 * cannot be compared were not compared, and a comparison a tampering or disagreement ended was
 * not finished: not measured (null), rather than not equivalent. */
export function equivalenceFields(e: EquivalenceResult | null): Pick<SweepRunRecord, 'equivalent' | 'notComparable'> {
  if (!e) return { equivalent: null };
  if (e.notComparable) return { equivalent: null, notComparable: true };
  return { equivalent: e.refused || e.refusedBy ? null : e.equivalent };
}

export function recordFromResult(id: RunIdentity, result: FormalizeResult, finishedAt: Date): SweepRunRecord {
  const attempts = result.attempts.map((a) => ({
    round: a.round,
    compiled: a.compile.status === 'ok',
    status: a.compile.status,
    ...(a.compile.status === 'refused' && a.compile.refusedBy ? { refusedBy: a.compile.refusedBy } : {}),
  }));
  const last = result.attempts.at(-1);
  return {
    sweepId: id.sweepId,
    config: id.cell.name,
    configHash: id.cell.hash,
    item: id.item.id,
    sample: id.sample,
    workflowId: id.workflowId,
    outcome: result.outcome,
    compiled: result.compiled,
    checked: result.checked,
    ...equivalenceFields(result.equivalence ?? null),
    judgeGrade: result.judge ? result.judge.grade : null,
    faithful: result.judge ? result.judge.faithful : null,
    attempts,
    repairRounds: Math.max(0, attempts.length - 1),
    premises: result.premises.map((p) => p.name),
    goldPremises: id.item.goldPremises,
    tags: id.item.tags,
    stageMs: result.timings ?? {},
    ...(result.agent ? { agentSteps: result.agent.steps, compiledAtStep: result.agent.compiledAtStep } : {}),
    // What the run's LLM calls used, from its ledger (every run has one); an agent run recorded
    // before the ledger existed still has its steps' token counts.
    ...(result.usage
      ? { usage: { ...result.usage } }
      : result.agent
        ? {
            usage: {
              promptTokens: result.agent.tokens.prompt,
              completionTokens: result.agent.tokens.completion,
              totalTokens: result.agent.tokens.total,
            },
          }
        : {}),
    ...(result.cache ? { cache: { ...result.cache } } : {}),
    formalStatement: result.formalStatement,
    ...(result.source ? { source: result.source } : {}),
    ...(result.outcome === 'refused'
      ? { refusal: last?.compile.status === 'refused' ? refusalReason(last.compile) : 'refused by the screen' }
      : {}),
    ...(result.outcome === 'refused' && last?.compile.status === 'refused' && last.compile.refusedBy
      ? { refusedBy: last.compile.refusedBy }
      : {}),
    finishedAt: finishedAt.toISOString(),
  };
}

/** The record of a unit whose child failed on every attempt the sweep allowed. */
export function failedRecord(id: RunIdentity, error: string, finishedAt: Date): SweepRunRecord {
  return {
    sweepId: id.sweepId,
    config: id.cell.name,
    configHash: id.cell.hash,
    item: id.item.id,
    sample: id.sample,
    workflowId: id.workflowId,
    outcome: 'failed',
    compiled: false,
    checked: false,
    equivalent: null,
    judgeGrade: null,
    faithful: null,
    attempts: [],
    repairRounds: 0,
    premises: [],
    goldPremises: id.item.goldPremises,
    tags: id.item.tags,
    stageMs: {},
    formalStatement: '',
    error,
    finishedAt: finishedAt.toISOString(),
  };
}

/** The record of a predictions configuration's unit that its file has no statement for: nothing
 * ran, and it counts as a failure of every rate (not compiled, not equivalent, not faithful). */
export function missingRecord(id: RunIdentity, finishedAt: Date): SweepRunRecord {
  return {
    ...failedRecord(id, 'the predictions file has no statement for this item and sample', finishedAt),
    outcome: 'missing',
    source: 'predictions',
  };
}
