// The `evaluateStatement` workflow: a formal statement made elsewhere (a predictions file's line)
// evaluated as a run's last attempt would be. It skips decompose, retrieve, illustrate, formalize
// and repair: the statement goes to `compile` on the Lean queue (the screen first: a refused
// statement never reaches Lean), then, against the item's gold statement, to the equivalence
// check and the judge, with the run core's policies. Its result has a run's shape, so the sweep
// records and reports it like any run.
import { llmMeterFor } from '../common/run-config';
import { refusalLabel } from '../common/verdict';
import type { EvaluateStatementInput, FormalizeResult } from '../common/run-types';
import { decide, finishRun, judgeRun, startRun, untilBudget } from './run-core';

export async function evaluateStatement(input: EvaluateStatementInput): Promise<FormalizeResult> {
  const run = startRun(input, { meter: (config) => llmMeterFor(config, input.sample ?? 0, input.llm) });
  const statement = input.formalStatement;
  run.enter('compile');
  const result = await run.lean.compile({ code: statement, ...run.domain });
  run.showState(
    result.status === 'refused'
      ? { compile: refusalLabel(result), compileBy: result.refusedBy ? 'lean' : 'screen' }
      : { compile: result.status, compileBy: 'lean' },
  );
  run.end.attempts.push({ round: 0, statement, compile: result });
  decide(run, statement, result);
  // A spent LLM budget (the judge's) ends the run with what it has, as a generated run's does.
  await untilBudget(run, () => judgeRun(run, 0));
  return finishRun(run, run.end, { source: 'predictions' });
}
