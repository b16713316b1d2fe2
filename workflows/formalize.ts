// The `formalize` workflow: one formalization run, from an informal statement to a judged Lean
// statement. Deterministic code only: every side effect is an activity.
import { ActivityFailure, ApplicationFailure, defineQuery, proxyActivities, setCurrentDetails, setHandler, upsertMemo, upsertSearchAttributes, log } from '@temporalio/workflow';
import { LLM_FAILURE, NON_RETRYABLE_TYPES } from '../common/failures';
import { INDEX_KEY, OUTCOME_KEY, STAGE_KEY } from '../common/search-attributes';
import { runCurrentDetails, type RunState } from '../common/run-metadata';
import { refusalLabel, refusalReason, runOutcome } from '../common/verdict';
import { llmMeterFor, llmQueueFor, resolveRunConfig } from '../common/run-config';
import { DEFAULT_LLM_BUDGET, llmActivityTimeoutMs } from '../common/llm-budget';
import { openedNamespaces, unknownIdentifiers } from '../common/lean-messages';
import type {
  EquivalenceResult,
  Attempt,
  CompileResult,
  Example,
  FormalizeInput,
  FormalizeResult,
  JudgeVerdict,
  LlmBudget,
  LeanActivities,
  MainActivities,
  Premise,
  Progress,
  Stage,
  SubQuery,
  ToolUse,
} from '../common/types';
import { LEAN_TASK_QUEUE } from '../common/types';
import { readRunUsage } from './llm-usage';

export const progressQuery = defineQuery<Progress>('progress');

// Failures that no retry can fix: bad input, missing configuration, exhausted re-asks.
const NON_RETRYABLE = NON_RETRYABLE_TYPES;

const llmRetry = {
  initialInterval: '2s',
  backoffCoefficient: 2,
  maximumInterval: '1m',
  maximumAttempts: 8,
  nonRetryableErrorTypes: NON_RETRYABLE,
};

// Room for one LLM call with all its re-asks and fallbacks, from the settings the run was
// started with (common/llm-budget.ts). The activity heartbeats every few seconds while waiting
// on the LLM, so a dead worker is still noticed in seconds rather than after the whole budget.
// On the provider's task queue when the run has one for the role (its rate limit holds there).
const llmStages = (budget: LlmBudget | undefined, taskQueue: string | undefined) => proxyActivities<MainActivities>({
  ...(taskQueue ? { taskQueue } : {}),
  startToCloseTimeout: llmActivityTimeoutMs(budget ?? DEFAULT_LLM_BUDGET),
  heartbeatTimeout: '15s',
  retry: llmRetry,
});

/** A failure that ends the run `budget-exhausted` rather than failing it. */
function isBudgetExhausted(err: unknown): boolean {
  return err instanceof ActivityFailure && err.cause instanceof ApplicationFailure && err.cause.type === LLM_FAILURE.budgetExhausted;
}

const { retrieve, illustrate } = proxyActivities<MainActivities>({
  startToCloseTimeout: '2m',
  heartbeatTimeout: '15s',
  retry: { initialInterval: '1s', maximumAttempts: 5, nonRetryableErrorTypes: NON_RETRYABLE },
});

const leanActivities = (taskQueue: string) => proxyActivities<LeanActivities>({
  taskQueue,
  // Waiting for a free REPL counts against this too; the activity heartbeats meanwhile.
  startToCloseTimeout: '10m',
  heartbeatTimeout: '30s',
  retry: { initialInterval: '2s', backoffCoefficient: 2, maximumInterval: '30s', maximumAttempts: 5, nonRetryableErrorTypes: NON_RETRYABLE },
});

// Name lookups help the repair but are not essential: a failed lookup is noted, not fatal.
const leanTools = (taskQueue: string) => proxyActivities<LeanActivities>({
  taskQueue,
  startToCloseTimeout: '5m',
  heartbeatTimeout: '30s',
  retry: { initialInterval: '2s', maximumAttempts: 2, nonRetryableErrorTypes: NON_RETRYABLE },
});

/** At most this many unknown identifiers are resolved per repair round. */
const MAX_NAMES_PER_ROUND = 3;

export async function formalize(input: FormalizeInput): Promise<FormalizeResult> {
  const config = resolveRunConfig(input.config);
  const exclude = input.exclude ?? [];
  // Each role's activities go to its provider's task queue (`llm-<provider>`) when the run or
  // the deployment names one; runs started without (older inputs) schedule what they always did.
  const { decompose } = llmStages(input.llm, llmQueueFor('decomposer', config, input.llm));
  const { draftStatement } = llmStages(input.llm, llmQueueFor('formalizer', config, input.llm));
  const { judge } = llmStages(input.llm, llmQueueFor('judge', config, input.llm));
  // Cache, sample, model and provider choices and budgets for the LLM activities (the ledger).
  const meter = llmMeterFor(config, input.sample ?? 0, input.llm);
  // Passed on only when set, so runs without it send the activities what they always did.
  const leaveOut = input.leaveOut ? { leaveOut: input.leaveOut } : {};
  const { compile } = leanActivities(input.leanTaskQueue ?? LEAN_TASK_QUEUE);
  const { resolveName, equivalence } = leanTools(input.leanTaskQueue ?? LEAN_TASK_QUEUE);
  const tools: ToolUse[] = [];
  const notes: string[] = [];
  const progress: Progress = { stage: 'starting', round: 0, completed: [] };
  setHandler(progressQuery, () => progress);
  // What the Temporal UI shows as the run's current details (asked of a worker, no history).
  const state: RunState = { library: input.library, config, stage: 'starting', round: 0 };
  const showState = (change: Partial<RunState>): void => {
    Object.assign(state, change);
    setCurrentDetails(runCurrentDetails(state));
  };
  showState({});

  // Per-stage wall time from the workflow's own clock (deterministic: the time of the workflow
  // task), so no extra command or activity is needed to measure it.
  const timings: Partial<Record<Stage, number>> = {};
  let enteredAt = Date.now();
  const enter = (stage: Stage): void => {
    const now = Date.now();
    if (progress.stage !== 'starting') {
      progress.completed.push(progress.stage);
      timings[progress.stage] = (timings[progress.stage] ?? 0) + (now - enteredAt);
    }
    enteredAt = now;
    progress.stage = stage;
    upsertSearchAttributes([{ key: STAGE_KEY, value: stage }]);
    showState({ stage, round: progress.round });
  };

  // What the stages found; a spent LLM budget ends the run with what it has so far.
  let subqueries: SubQuery[] = [];
  let premises: Premise[] = [];
  // The index version retrieve searched: illustrate reads the same one, so a promotion during
  // the run never mixes versions, and the result records it.
  let indexVersion: string | undefined;
  let examples: Example[] = [];
  const attempts: Attempt[] = [];
  let statement = '';
  let checked = false;
  let compiled = false;
  let refusal: string | null = null;
  let verdict: JudgeVerdict | null = null;
  let equivalent: EquivalenceResult | null = null;
  let budgetSpent = false;
  try {
    // 1. Decompose: atomic sub-queries, only where DRIFT retrieval will use them.
    if (config.retrieval === 'drift') {
      if (config.decompose) {
        enter('decompose');
        subqueries = await decompose({ statement: input.statement, meter });
      } else {
        subqueries = [{ phrase: input.statement, formal: '' }];
        notes.push('decompose: off; the whole statement is the only sub-query');
      }
    }

    // 2. Retrieve premises.
    if (config.retrieval !== 'none') {
      enter('retrieve');
      const retrieved = await retrieve({
        library: input.library,
        statement: input.statement,
        subqueries,
        mode: config.retrieval,
        topK: config.topK,
        exclude,
        ...leaveOut,
        gold: input.goldPremises ?? [],
        ...(input.indexVersion ? { indexVersion: input.indexVersion } : {}),
      });
      premises = retrieved.premises;
      indexVersion = retrieved.indexVersion;
      notes.push(...retrieved.notes);
      showState({ indexVersion });
    } else {
      notes.push('retrieve: off');
    }

    // 3. Illustrate: example theorems that use the premises.
    if (config.illustrate && config.examples > 0 && premises.length > 0) {
      enter('illustrate');
      examples = await illustrate({
        library: input.library,
        statement: input.statement,
        premises: premises.map((p) => p.name),
        m: config.examples,
        exclude,
        ...(indexVersion ? { indexVersion } : {}),
        ...leaveOut,
      });
    }

    // 4. Formalize, compile, repair: at most `repairRounds` repairs after the first attempt.
    enter('formalize');
    statement = await draftStatement({ statement: input.statement, premises, examples, meter });
    let result: CompileResult;
    for (let round = 0; ; round++) {
      enter('compile');
      result = await compile({ code: statement });
      attempts.push({ round, statement, compile: result });
      showState(
        result.status === 'refused'
          ? { compile: `round ${round}: ${refusalLabel(result)}`, compileBy: 'screen' }
          : { compile: `round ${round}: ${result.status}${result.status === 'error' ? ` (${result.messages.filter((m) => m.severity === 'error').length} errors)` : ''}`, compileBy: 'lean' },
      );
      if (result.status === 'ok' || result.status === 'skipped') break;
      if (round >= config.repairRounds) {
        log.info('repair budget exhausted', { rounds: config.repairRounds });
        break;
      }
      progress.round = round + 1;
      enter('repair');
      // Unknown names: ask the Lean worker for the closest real ones (found in the library,
      // confirmed by Lean) and show them to the formalizer.
      const unknown = unknownIdentifiers(result.messages).slice(0, MAX_NAMES_PER_ROUND);
      let suggestions: Record<string, string[]> | undefined;
      if (unknown.length > 0) {
        suggestions = {};
        const namespaceHints = openedNamespaces(statement);
        const resolved = await Promise.all(
          unknown.map((token) =>
            resolveName({ token, library: input.library, namespaceHints, topK: 5 }).catch((err: Error) => {
              notes.push(`resolveName(${token}) failed: ${err.message}`);
              return undefined;
            }),
          ),
        );
        resolved.forEach((found, i) => {
          if (!found) return;
          const names = found.suggestions.map((s) => s.name);
          suggestions![found.token] = names;
          tools.push({ tool: 'resolveName', round: round + 1, input: unknown[i]!, output: names });
        });
      }
      statement = await draftStatement({
        statement: input.statement,
        premises,
        examples,
        repair: { statement, messages: result.messages, ...(suggestions ? { suggestions } : {}) },
        meter,
      });
    }
    checked = result.status !== 'skipped' && result.status !== 'refused';
    compiled = result.status === 'ok';
    if (result.status === 'refused') {
      refusal = refusalReason(result);
      notes.push(`compile: ${refusalLabel(result)} (nothing was sent to Lean)`);
    } else if (!checked) notes.push(`compile: skipped (${result.reason ?? 'no Lean configured'})`);

    // 5. Judge faithfulness; against a gold statement, Lean's equivalence check runs beside it.
    const checkEquivalence = Boolean(input.goldStatement) && compiled;
    if (config.judge || checkEquivalence) {
      enter('judge');
      const [judged, beq] = await Promise.all([
        config.judge ? judge({ statement: input.statement, formalStatement: statement, compiled, checked, ...(refusal !== null ? { refused: refusal } : {}), meter }) : null,
        checkEquivalence
          ? equivalence({ candidate: statement, gold: input.goldStatement! }).catch((err: Error) => {
              notes.push(`equivalence check failed: ${err.message}`);
              return null;
            })
          : null,
      ]);
      verdict = judged;
      equivalent = beq;
      if (beq) tools.push({ tool: 'equivalence', round: attempts.length - 1, input: input.goldStatement!, output: [beq.refused ? `${beq.refused} refused by the screen` : beq.equivalent ? 'equivalent' : 'not equivalent'] });
    }
  } catch (err) {
    if (!isBudgetExhausted(err)) throw err;
    budgetSpent = true;
    notes.push(`budget: ${(err as ActivityFailure).cause?.message ?? 'spent'}; the run stopped at ${progress.stage}`);
  }

  const outcome = runOutcome({ compiled, checked, verdict, budgetSpent, refused: refusal !== null });
  enter('done');
  // What the run's LLM calls used (replies from the cache included), from the ledger.
  const llm = await readRunUsage();
  if (llm) upsertMemo({ usage: llm.usage, cache: llm.cache });
  upsertSearchAttributes([{ key: OUTCOME_KEY, value: outcome }, ...(indexVersion ? [{ key: INDEX_KEY, value: indexVersion }] : [])]);
  showState({ outcome, ...(refusal !== null ? { refusal } : {}), ...(verdict ? { grade: verdict.grade } : {}) });
  return {
    statement: input.statement,
    library: input.library,
    ...(indexVersion ? { indexVersion } : {}),
    config,
    formalStatement: statement,
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
    timings,
    ...(llm ? { usage: llm.usage, cache: llm.cache } : {}),
  };
}
