// The `formalizeAgent` workflow: a run in agent mode. An LLM orchestrator calls tools step by
// step (the loop in agent-loop.ts); every LLM step and every tool call is an activity, so a
// crash at step 17 loses nothing of steps 1–16. The final file then goes through the same
// compile check, judge and equivalence check as a pipeline run.
import {
  CancellationScope,
  defineQuery,
  isCancellation,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  upsertMemo,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import { NON_RETRYABLE_TYPES } from '../common/failures';
import { INDEX_KEY, OUTCOME_KEY, STAGE_KEY } from '../common/search-attributes';
import { llmMeterFor, llmQueueFor, resolveRunConfig, runProviders } from '../common/run-config';
import { refusalReason, runOutcome } from '../common/verdict';
import { runCurrentDetails, type RunState } from '../common/run-metadata';
import type {
  Attempt,
  CompileResult,
  EquivalenceResult,
  Example,
  FormalizeInput,
  FormalizeResult,
  JudgeVerdict,
  LeanActivities,
  MainActivities,
  Outcome,
  Premise,
  Progress,
  Stage,
  SubQuery,
  ToolUse,
} from '../common/types';
import { LEAN_TASK_QUEUE, MAX_AGENT_STEPS } from '../common/types';
import { runAgentLoop, type AgentOps } from './agent-loop';
import { readRunUsage } from './llm-usage';

export const agentProgressQuery = defineQuery<Progress>('progress');

const NON_RETRYABLE = NON_RETRYABLE_TYPES;

// On the provider's task queue when the run has one for the role (its rate limit holds there).
const llmProxy = (taskQueue: string | undefined) => proxyActivities<MainActivities>({
  ...(taskQueue ? { taskQueue } : {}),
  startToCloseTimeout: '3m',
  heartbeatTimeout: '15s',
  retry: { initialInterval: '2s', backoffCoefficient: 2, maximumInterval: '1m', maximumAttempts: 8, nonRetryableErrorTypes: NON_RETRYABLE },
});

const search = proxyActivities<MainActivities>({
  startToCloseTimeout: '2m',
  retry: { initialInterval: '1s', maximumAttempts: 5, nonRetryableErrorTypes: NON_RETRYABLE },
});

const leanProxy = (taskQueue: string) =>
  proxyActivities<LeanActivities>({
    taskQueue,
    startToCloseTimeout: '10m',
    heartbeatTimeout: '30s',
    retry: { initialInterval: '2s', backoffCoefficient: 2, maximumInterval: '30s', maximumAttempts: 5, nonRetryableErrorTypes: NON_RETRYABLE },
  });

/** Tool results shown to the model from the library search. */
const SEARCH_TOP_K = 8;

export async function formalizeAgent(input: FormalizeInput): Promise<FormalizeResult> {
  const config = resolveRunConfig(input.config);
  const exclude = input.exclude ?? [];
  const leaveOut = input.leaveOut ? { leaveOut: input.leaveOut } : {};
  const lean = leanProxy(input.leanTaskQueue ?? LEAN_TASK_QUEUE);
  // Each role's LLM activities on its provider's queue; the activities are told the providers
  // (runs started without any keep their old inputs and queues).
  const llm = { ...llmProxy(undefined), decompose: llmProxy(llmQueueFor('decomposer', config, input.llm)).decompose, judge: llmProxy(llmQueueFor('judge', config, input.llm)).judge };
  const stepLlm = llmProxy(llmQueueFor('agent', config, input.llm));
  const draftLlm = llmProxy(llmQueueFor('translator', config, input.llm));
  const routed = Object.keys(runProviders(config, input.llm)).length > 0;
  const meter = routed ? { meter: llmMeterFor(config, input.sample ?? 0, input.llm) } : {};
  const notes: string[] = [];
  const tools: ToolUse[] = [];
  const progress: Progress = { stage: 'starting', round: 0, completed: [], step: 0, lastTool: null };
  setHandler(agentProgressQuery, () => progress);
  // The run's current details in the Temporal UI (asked of a worker, no history).
  const state: RunState = { library: input.library, config, stage: 'starting', round: 0 };
  const showState = (change: Partial<RunState>): void => {
    Object.assign(state, change);
    setCurrentDetails(runCurrentDetails(state));
  };
  showState({});
  const enter = (stage: Stage): void => {
    if (progress.stage === stage) return;
    if (progress.stage !== 'starting') progress.completed.push(progress.stage);
    progress.stage = stage;
    upsertSearchAttributes([{ key: STAGE_KEY, value: stage }]);
    showState({ stage });
  };

  // DRIFT context for the first message, when configured: the pipeline's first three stages.
  let subqueries: SubQuery[] = [];
  let premises: Premise[] = [];
  let examples: Example[] = [];
  // The index version searched first; the result records it, illustrate reads the same one.
  let indexVersion: string | undefined;
  if (config.driftContext && config.retrieval !== 'none') {
    if (config.retrieval === 'drift') {
      if (config.decompose) {
        enter('decompose');
        subqueries = await llm.decompose({ statement: input.statement, ...meter });
      } else subqueries = [{ phrase: input.statement, formal: '' }];
    }
    enter('retrieve');
    const retrieved = await search.retrieve({
      library: input.library,
      statement: input.statement,
      subqueries,
      mode: config.retrieval,
      topK: config.topK,
      exclude,
      gold: input.goldPremises ?? [],
      ...leaveOut,
    });
    premises = retrieved.premises;
    indexVersion = retrieved.indexVersion;
    showState({ indexVersion });
    notes.push(...retrieved.notes);
    if (config.illustrate && config.examples > 0 && premises.length > 0) {
      enter('illustrate');
      examples = await search.illustrate({
        library: input.library,
        statement: input.statement,
        premises: premises.map((p) => p.name),
        m: config.examples,
        exclude,
        ...leaveOut,
        ...(indexVersion ? { indexVersion } : {}),
      });
    }
  }

  // Every op is an activity, labelled in the Temporal UI with its step and tool.
  const summary = (step: number, what: string) => ({ summary: `agent step ${step}: ${what}` });
  const ops: AgentOps = {
    step: (stepInput, t) => stepLlm.agentStep.executeWithOptions(summary(t, 'LLM'), [{ ...stepInput, ...meter }]),
    screen: (code, t) => lean.screenStatement.executeWithOptions(summary(t, 'write_file'), [{ code }]),
    compile: (code, t) => lean.compile.executeWithOptions(summary(t, 'run_lean'), [{ code }]),
    inspectName: (name, t) => lean.inspectName.executeWithOptions(summary(t, `inspect_name ${name}`.slice(0, 120)), [{ name }]),
    resolveName: (token, namespaceHints, t) =>
      lean.resolveName.executeWithOptions(summary(t, `resolve_name ${token}`.slice(0, 120)), [{ token, library: input.library, namespaceHints, topK: 5 }]),
    searchPremises: async (query, t) => {
      const found = await search.retrieve.executeWithOptions(summary(t, 'search_premises'), [
        { library: input.library, statement: query, subqueries: [], mode: 'monolithic', topK: SEARCH_TOP_K, exclude, gold: [], ...leaveOut },
      ]);
      indexVersion ??= found.indexVersion;
      return found.premises;
    },
    draft: (statement, t) => draftLlm.draft.executeWithOptions(summary(t, 'draft'), [{ statement, ...meter }]),
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
      showState({ step: t, lastTool: progress.lastTool ?? null });
    },
    onRecord(r) {
      progress.lastTool = r.tool;
      if (r.tool === 'run_lean') showState({ compile: `step ${r.step}: ${r.output.slice(0, 80)}`, compileBy: r.output.startsWith('The statement screen refused') ? 'screen' : 'lean' });
    },
  };

  enter('agent');
  const maxSteps = Math.min(Math.max(1, config.maxSteps), MAX_AGENT_STEPS);
  const loop = await runAgentLoop(ops, {
    statement: input.statement,
    tools: config.tools,
    maxSteps,
    tokenBudget: config.tokenBudget,
    wallClockSeconds: config.wallClockSeconds,
    ...(config.driftContext ? { context: { premises, examples } } : {}),
  });
  if (loop.summary.ending === 'budget-exhausted') notes.push(`agent: ${loop.summary.budget} budget exhausted after ${loop.summary.steps} steps`);

  // The answer is checked whatever the tools were: the result reports compile like a pipeline run.
  const statement = loop.file ?? '';
  let compileResult: CompileResult | null = loop.compileOfFile;
  if (loop.file !== null && !compileResult) {
    enter('compile');
    compileResult = await lean.compile.executeWithOptions({ summary: 'final check of the last written file' }, [{ code: loop.file }]);
  }
  if (loop.file === null) notes.push('agent: no Lean file was written');
  const checked = compileResult !== null && compileResult.status !== 'skipped' && compileResult.status !== 'refused';
  const compiled = compileResult?.status === 'ok';
  if (compileResult?.status === 'skipped') notes.push(`compile: skipped (${compileResult.reason ?? 'no Lean configured'})`);
  // Who decided: the screen refused the file (at the final check), or refused every write so
  // no file exists; then the run's verdict is the screen's, whatever budget remained.
  let refusal: string | null = null;
  if (compileResult?.status === 'refused') refusal = refusalReason(compileResult);
  else if (loop.file === null && loop.lastWriteRefusal) refusal = refusalReason({ messages: [loop.lastWriteRefusal.message] });
  if (refusal !== null) notes.push(`compile: refused by the screen: ${refusal} (nothing was sent to Lean)`);
  else if (loop.lastWriteRefusal) notes.push(`agent: the last write_file was refused by the screen (${refusalReason({ messages: [loop.lastWriteRefusal.message] })}); the file written before it stands`);

  let verdict: JudgeVerdict | null = null;
  let equivalent: EquivalenceResult | null = null;
  const checkEquivalence = Boolean(input.goldStatement) && compiled;
  if (loop.file !== null && (config.judge || checkEquivalence)) {
    enter('judge');
    const [judged, beq] = await Promise.all([
      config.judge ? llm.judge({ statement: input.statement, formalStatement: statement, compiled, checked, ...(refusal !== null ? { refused: refusal } : {}), ...meter }) : null,
      checkEquivalence
        ? lean.equivalence({ candidate: statement, gold: input.goldStatement! }).catch((err: Error) => {
            notes.push(`equivalence check failed: ${err.message}`);
            return null;
          })
        : null,
    ]);
    verdict = judged;
    equivalent = beq;
    if (beq) tools.push({ tool: 'equivalence', round: loop.summary.steps, input: input.goldStatement!, output: [beq.refused ? `${beq.refused} refused by the screen` : beq.equivalent ? 'equivalent' : 'not equivalent'] });
  }

  // What the run's LLM calls used (replies from the cache included), from the ledger.
  const usage = await readRunUsage();
  if (usage) upsertMemo({ usage: usage.usage, cache: usage.cache });

  // A refusal is the verdict even when the budget ran out: it is what the last attempt got.
  const outcome: Outcome = runOutcome({ compiled, checked, verdict, refused: refusal !== null, budgetSpent: refusal === null && loop.summary.ending === 'budget-exhausted' });
  enter('done');
  upsertSearchAttributes([{ key: OUTCOME_KEY, value: outcome }, ...(indexVersion ? [{ key: INDEX_KEY, value: indexVersion }] : [])]);
  showState({ outcome, ...(refusal !== null ? { refusal } : {}), ...(verdict ? { grade: verdict.grade } : {}) });
  // No file, every write refused: the refused write is the run's one attempt, so the result
  // shows what was refused and why.
  const refusedWrite = loop.file === null ? loop.lastWriteRefusal : null;
  const attempts: Attempt[] =
    compileResult && loop.file !== null
      ? [{ round: 0, statement, compile: compileResult }]
      : refusedWrite
        ? [{ round: 0, statement: refusedWrite.code, compile: { status: 'refused', messages: [refusedWrite.message], reason: refusalReason({ messages: [refusedWrite.message] }), durationMs: 0 } }]
        : [];
  return {
    statement: input.statement,
    library: input.library,
    ...(indexVersion ? { indexVersion } : {}),
    config,
    formalStatement: refusedWrite ? refusedWrite.code : statement,
    compiled,
    checked,
    outcome,
    attempts,
    judge: verdict,
    subqueries,
    premises,
    examples,
    notes,
    stages: [...progress.completed],
    tools,
    ...(input.goldStatement ? { equivalence: equivalent } : {}),
    steps: loop.steps,
    agent: loop.summary,
    ...(usage ? { usage: usage.usage, cache: usage.cache } : {}),
  };
}
