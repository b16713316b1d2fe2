// The `formalizeAgent` workflow: a run in agent mode. An LLM orchestrator calls tools step by
// step (the loop in agent-loop.ts); every LLM step and every tool call is an activity, so a
// crash at step 17 loses nothing of steps 1–16. The DRIFT context, the judge and equivalence
// check and the end of the run are the pipeline's (run-core.ts).
import { CancellationScope, isCancellation, patched } from '@temporalio/workflow';
import { llmMeterFor, runProviders } from '../common/run-config';
import { refusalReason } from '../common/verdict';
import type { CompileResult } from '../common/lean-types';
import type { Attempt, FormalizeInput, FormalizeResult } from '../common/run-types';
import { MAX_AGENT_STEPS } from '../common/run-config-schema';
import { runAgentLoop, type AgentLoopResult, type AgentOps } from './agent-loop';
import { decide, driftContext, finishRun, judgeRun, searchPremises, startRun } from './run-core';

/** Tool results shown to the model from the library search. */
const SEARCH_TOP_K = 8;

export async function formalizeAgent(input: FormalizeInput): Promise<FormalizeResult> {
  const run = startRun(input, {
    // The activities are told the run's LLM choices when its roles have providers (runs started
    // without any keep their old inputs).
    meter: (config) =>
      Object.keys(runProviders(config, input.llm)).length > 0 ? llmMeterFor(config, input.sample ?? 0, input.llm) : undefined,
    progress: { step: 0, lastTool: null },
  });
  const { config, notes, progress, lean, leanTools } = run;
  const stepLlm = run.llm('agent');
  const draftLlm = run.llm('translator');

  // DRIFT context for the first message, when configured: the pipeline's first three stages.
  if (config.driftContext && config.retrieval !== 'none') await driftContext(run);

  // Every op is an activity, labelled in the Temporal UI with its step and tool.
  const summary = (step: number, what: string) => ({ summary: `agent step ${step}: ${what}` });
  const ops: AgentOps = {
    step: (stepInput, t) => stepLlm.agentStep.executeWithOptions(summary(t, 'LLM'), [{ ...stepInput, ...run.meter }]),
    screen: (code, t) => lean.screenStatement.executeWithOptions(summary(t, 'write_file'), [{ code }]),
    compile: (code, t) => lean.compile.executeWithOptions(summary(t, 'run_lean'), [{ code, ...run.domain }]),
    inspectName: (name, t) =>
      leanTools.inspectName.executeWithOptions(summary(t, `inspect_name ${name}`.slice(0, 120)), [{ name, ...run.domain }]),
    resolveName: (token, namespaceHints, t) =>
      leanTools.resolveName.executeWithOptions(summary(t, `resolve_name ${token}`.slice(0, 120)), [
        { token, library: input.library, namespaceHints, topK: 5, ...run.domain },
      ]),
    // In the run's index version: the one it is pinned to, else the one first searched.
    searchPremises: (query, t) => searchPremises(run, query, SEARCH_TOP_K, summary(t, 'search_premises')),
    draft: (statement, t) => draftLlm.draft.executeWithOptions(summary(t, 'draft'), [{ statement, ...run.meter }]),
    now: () => Date.now(),
    async within(ms, fn) {
      try {
        return { value: await CancellationScope.withTimeout(ms, fn) };
      } catch (err) {
        // Our own deadline, not a cancellation of the whole run.
        if (isCancellation(err) && !CancellationScope.current().consideredCancelled) return 'timeout';
        throw err;
      }
    },
    isFatal: (err) => isCancellation(err),
    onStepStart(t) {
      progress.step = t;
      progress.round = t;
      run.showState({ step: t, lastTool: progress.lastTool ?? null });
    },
    onRecord(r) {
      progress.lastTool = r.tool;
      if (r.tool === 'run_lean')
        run.showState({
          compile: `step ${r.step}: ${r.output.slice(0, 80)}`,
          compileBy: r.output.startsWith('The statement screen refused') ? 'screen' : 'lean',
        });
    },
  };

  run.enter('agent');
  const maxSteps = Math.min(Math.max(1, config.maxSteps), MAX_AGENT_STEPS);
  const loop = await runAgentLoop(ops, {
    statement: input.statement,
    tools: config.tools,
    maxSteps,
    tokenBudget: config.tokenBudget,
    wallClockSeconds: config.wallClockSeconds,
    ...(config.driftContext ? { context: { premises: run.premises, examples: run.examples } } : {}),
  });
  if (loop.summary.ending === 'budget-exhausted')
    notes.push(`agent: ${loop.summary.budget} budget exhausted after ${loop.summary.steps} steps`);

  // The answer is checked whatever the tools were: the result reports compile like a pipeline run.
  let compileResult: CompileResult | null = loop.compileOfFile;
  if (loop.file !== null && !compileResult) {
    run.enter('compile');
    compileResult = await lean.compile.executeWithOptions({ summary: 'final check of the last written file' }, [
      { code: loop.file, ...run.domain },
    ]);
  }
  if (loop.file === null) notes.push('agent: no Lean file was written');
  // The run's one attempt: the last written file and its check; with no file and every write
  // refused, the refused write, so the result shows what was refused and why (the screen's
  // verdict then stands, whatever budget remained).
  const attempt = lastAttempt(loop.file, compileResult, loop.lastWriteRefusal);
  if (attempt) run.end.attempts.push(attempt);
  const { refusal } = decide(run, attempt?.statement ?? '', attempt?.compile ?? null);
  if (refusal === null && loop.lastWriteRefusal)
    notes.push(
      `agent: the last write_file was refused by the screen (${refusalReason({ messages: [loop.lastWriteRefusal.message] })}); the file written before it stands`,
    );

  if (loop.file !== null) await judgeRun(run, loop.summary.steps);
  // A refusal is the verdict even when the budget ran out: it is what the last attempt got.
  run.end.budgetSpent = refusal === null && loop.summary.ending === 'budget-exhausted';
  // Agent runs recorded before the run core read their usage before entering `done`.
  const usageFirst = !patched('agent-run-core');
  return finishRun(run, run.end, { steps: loop.steps, agent: loop.summary }, usageFirst);
}

/** The agent run's attempt: the last written file with its check, or, when no file was ever
 * accepted, the last write the screen refused; none when nothing was written. */
function lastAttempt(
  file: string | null,
  compile: CompileResult | null,
  refusedWrite: AgentLoopResult['lastWriteRefusal'],
): Attempt | null {
  if (file !== null) return compile ? { round: 0, statement: file, compile } : null;
  if (!refusedWrite) return null;
  const reason = refusalReason({ messages: [refusedWrite.message] });
  return {
    round: 0,
    statement: refusedWrite.code,
    compile: { status: 'refused', messages: [refusedWrite.message], reason, durationMs: 0 },
  };
}
