// What both run workflows share: `formalize` (the pipeline) and `formalizeAgent` (agent mode).
// The activity proxies and their retry and timeout policies, the run's progress (query, stage
// search attribute, current details, per-stage timings), the DRIFT context stages (decompose,
// retrieve, illustrate), the judge with the equivalence check beside it, and the end of the run
// (outcome, usage, search attributes, the result). Deterministic code only.
import {
  ActivityFailure,
  ApplicationFailure,
  defineQuery,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  upsertMemo,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import { LLM_FAILURE, NON_RETRYABLE_TYPES } from '../common/failures';
import { INDEX_KEY, OUTCOME_KEY, STAGE_KEY } from '../common/search-attributes';
import { runCurrentDetails, type RunState } from '../common/run-metadata';
import { refusalLabel, refusalReason, runOutcome } from '../common/verdict';
import { llmQueueFor, resolveRunConfig } from '../common/run-config';
import { DEFAULT_LLM_CALL_POLICY, llmActivityTimeoutMs } from '../common/llm-call-policy';
import { LLM_BATCH_TASK_QUEUE } from '../common/llm-batch';
import type { LeanActivities, MainActivities } from '../common/activities';
import type { CompileResult, EquivalenceResult, RefusedBy } from '../common/lean-types';
import type { LlmMeter } from '../common/llm-types';
import type { LlmRole } from '../common/llm-roles';
import type { Example, LeaveOutPolicy, Premise, SubQuery } from '../common/retrieval-types';
import type { RunConfig } from '../common/run-config-schema';
import type {
  Attempt,
  FormalizeInput,
  FormalizeResult,
  JudgeInput,
  JudgeVerdict,
  Outcome,
  Progress,
  Stage,
  ToolUse,
} from '../common/run-types';
import { LEAN_TASK_QUEUE } from '../common/activities';
import { readRunUsage } from './llm-usage';

/** Both run workflows answer it (the API's and the CLI's progress view). */
export const progressQuery = defineQuery<Progress>('progress');

// ---- Activity proxies and their policies ----

// Failures that no retry can fix: bad input, missing configuration, exhausted re-asks.
const NON_RETRYABLE = NON_RETRYABLE_TYPES;

const LLM_RETRY = {
  initialInterval: '2s',
  backoffCoefficient: 2,
  maximumInterval: '1m',
  maximumAttempts: 8,
  nonRetryableErrorTypes: NON_RETRYABLE,
};

// Room for one LLM call with all its re-asks and fallbacks, from the settings the run was
// started with (common/llm-call-policy.ts). The activity heartbeats every few seconds while waiting
// on the LLM, so a dead worker is still noticed in seconds rather than after the whole budget.
// On the provider's task queue when the run has one for the role (its rate limit holds there).
function llmActivities(input: FormalizeInput, config: RunConfig, role: LlmRole) {
  // Batch mode: the calls mostly wait for their batch, on a queue with many slots.
  const taskQueue = input.llm?.batch ? LLM_BATCH_TASK_QUEUE : llmQueueFor(role, config, input.llm);
  return proxyActivities<MainActivities>({
    ...(taskQueue ? { taskQueue } : {}),
    startToCloseTimeout: llmActivityTimeoutMs(input.llm ?? DEFAULT_LLM_CALL_POLICY),
    heartbeatTimeout: '15s',
    retry: LLM_RETRY,
  });
}

// Searches heartbeat (opening an index may build it first): a worker killed during one is
// noticed within the heartbeat timeout, not after the whole start-to-close timeout.
const search = proxyActivities<MainActivities>({
  startToCloseTimeout: '2m',
  heartbeatTimeout: '15s',
  retry: { initialInterval: '1s', maximumAttempts: 5, nonRetryableErrorTypes: NON_RETRYABLE },
});

/** The Lean stages' proxies (compile, screen, …) on a Lean task queue, with their policy. */
export function leanActivities(taskQueue: string) {
  return proxyActivities<LeanActivities>({
    taskQueue,
    // Waiting for a free REPL counts against this too; the activity heartbeats meanwhile.
    startToCloseTimeout: '10m',
    heartbeatTimeout: '30s',
    retry: {
      initialInterval: '2s',
      backoffCoefficient: 2,
      maximumInterval: '30s',
      maximumAttempts: 5,
      nonRetryableErrorTypes: NON_RETRYABLE,
    },
  });
}

// Name lookups and the equivalence check help but are not essential: a failure is noted, not fatal.
function leanToolActivities(taskQueue: string) {
  return proxyActivities<LeanActivities>({
    taskQueue,
    startToCloseTimeout: '5m',
    heartbeatTimeout: '30s',
    retry: { initialInterval: '2s', maximumAttempts: 2, nonRetryableErrorTypes: NON_RETRYABLE },
  });
}

// ---- The run ----

/** One run in progress: its input, configuration, what it found and noted, and its progress. */
export interface Run {
  input: FormalizeInput;
  config: RunConfig;
  /** The LLM activities of a role, on its provider's queue, with the budgeted timeout. */
  llm(role: LlmRole): ReturnType<typeof llmActivities>;
  /** Library searches: retrieve and illustrate (main queue). */
  search: typeof search;
  /** compile and screenStatement on the Lean queue. */
  lean: ReturnType<typeof leanActivities>;
  /** Name lookups and the equivalence check on the Lean queue. */
  leanTools: ReturnType<typeof leanToolActivities>;
  /** The run's LLM choices for the activities (the reply cache and the ledger), when it passes them. */
  meter: { meter?: LlmMeter };
  /** The run's trust domain for the Lean activities, when its input names one. */
  domain: { domain?: string };
  /** What retrieval hides around the item (`exclude`, and the leave-out policy when set). */
  exclude: string[];
  leaveOut: { leaveOut?: LeaveOutPolicy };
  subqueries: SubQuery[];
  premises: Premise[];
  examples: Example[];
  notes: string[];
  tools: ToolUse[];
  progress: Progress;
  /** Milliseconds per stage, summed over repeated stages. */
  timings: Partial<Record<Stage, number>>;
  /** The index version the run searched: the pinned one, else the first one a search found. */
  indexVersion: string | undefined;
  /** How the run stands: its last statement and attempts, how the last check went, the
   * judge's verdict, a spent budget. What finishRun reports. */
  end: RunEnd;
  /** Updates the run's current details in the Temporal UI. */
  showState(change: Partial<RunState>): void;
  /** Enters a stage: progress, stage search attribute, current details and timings. */
  enter(stage: Stage): void;
}

export function startRun(
  input: FormalizeInput,
  opts: { meter: (config: RunConfig) => LlmMeter | undefined; progress?: Partial<Progress> },
): Run {
  const config = resolveRunConfig(input.config);
  const leanQueue = input.leanTaskQueue ?? LEAN_TASK_QUEUE;
  const meter = opts.meter(config);
  const progress: Progress = { stage: 'starting', round: 0, completed: [], ...opts.progress };
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
    if (progress.stage === stage) return;
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

  return {
    input,
    config,
    llm: (role) => llmActivities(input, config, role),
    search,
    lean: leanActivities(leanQueue),
    leanTools: leanToolActivities(leanQueue),
    meter: meter ? { meter } : {},
    // Passed on only when set, so runs without it send the activities what they always did.
    domain: input.trustDomain ? { domain: input.trustDomain } : {},
    exclude: input.exclude ?? [],
    // Passed on only when set, so runs without it send the activities what they always did.
    leaveOut: input.leaveOut ? { leaveOut: input.leaveOut } : {},
    subqueries: [],
    premises: [],
    examples: [],
    notes: [],
    tools: [],
    progress,
    timings,
    indexVersion: undefined,
    end: {
      statement: '',
      compiled: false,
      checked: false,
      refusal: null,
      verdict: null,
      equivalent: null,
      budgetSpent: false,
      attempts: [],
    },
    showState,
    enter,
  };
}

/** The index version a search of this run must read: the one the run was pinned to (a sweep
 * pins it), else the one its first search found, so a promotion during the run never mixes
 * versions. Empty before any search of an unpinned run. */
export function indexPin(run: Run): { indexVersion?: string } {
  const version = run.input.indexVersion ?? run.indexVersion;
  return version ? { indexVersion: version } : {};
}

/** Records the version a search read (the first one stands). */
function searched(run: Run, version: string | undefined): void {
  if (run.indexVersion !== undefined || version === undefined) return;
  run.indexVersion = version;
  run.showState({ indexVersion: version });
}

/** A library search for `query` (monolithic, top `topK`), in the run's index version. */
export async function searchPremises(run: Run, query: string, topK: number, options: { summary?: string } = {}): Promise<Premise[]> {
  const found = await run.search.retrieve.executeWithOptions(options, [
    {
      library: run.input.library,
      statement: query,
      subqueries: [],
      mode: 'monolithic',
      topK,
      exclude: run.exclude,
      gold: [],
      ...run.leaveOut,
      ...indexPin(run),
    },
  ]);
  searched(run, found.indexVersion);
  return found.premises;
}

/**
 * The DRIFT context: decompose (atomic sub-queries, where DRIFT retrieval uses them), retrieve
 * premises, illustrate them with example theorems. What each stage finds is kept on the run as
 * it comes, so a run that stops part-way still reports it.
 */
export async function driftContext(run: Run): Promise<void> {
  const { input, config } = run;
  // 1. Decompose: atomic sub-queries, only where DRIFT retrieval will use them.
  if (config.retrieval === 'drift') {
    if (config.decompose) {
      run.enter('decompose');
      run.subqueries = await run.llm('decomposer').decompose({ statement: input.statement, ...run.meter });
    } else {
      run.subqueries = [{ phrase: input.statement, formal: '' }];
      run.notes.push('decompose: off; the whole statement is the only sub-query');
    }
  }

  // 2. Retrieve premises.
  if (config.retrieval === 'none') {
    run.notes.push('retrieve: off');
    return;
  }
  run.enter('retrieve');
  const retrieved = await run.search.retrieve({
    library: input.library,
    statement: input.statement,
    subqueries: run.subqueries,
    mode: config.retrieval,
    topK: config.topK,
    exclude: run.exclude,
    ...run.leaveOut,
    gold: input.goldPremises ?? [],
    ...indexPin(run),
  });
  run.premises = retrieved.premises;
  searched(run, retrieved.indexVersion);
  run.notes.push(...retrieved.notes);

  // 3. Illustrate: example theorems that use the premises, from the version retrieve searched.
  if (config.illustrate && config.examples > 0 && run.premises.length > 0) {
    run.enter('illustrate');
    run.examples = await run.search.illustrate({
      library: input.library,
      statement: input.statement,
      premises: run.premises.map((p) => p.name),
      m: config.examples,
      exclude: run.exclude,
      ...indexPin(run),
      ...run.leaveOut,
    });
  }
}

export interface Checked {
  /** The statement judged: the last attempt, or the last file written. */
  statement: string;
  compiled: boolean;
  checked: boolean;
  /** The reason the statement was refused: the screen's before Lean, unless `refusedBy`. */
  refusal: string | null;
  /** Set when the refusal was not the screen's: a forged REPL reply or a screen/Lean parse
   * disagreement (decision 0017). */
  refusedBy?: RefusedBy;
}

/** The one home of the checked/refused decision: what a statement's last compile result says
 * for the judge and the result (who decided), with a note when the screen refused it or no Lean
 * checked it. No result (nothing was written): unchecked. Kept on the run (`run.end`). */
export function decide(run: Run, statement: string, result: CompileResult | null): Checked {
  const checked = result !== null && result.status !== 'skipped' && result.status !== 'refused';
  const compiled = result?.status === 'ok';
  let refusal: string | null = null;
  if (result?.status === 'refused') {
    refusal = refusalReason(result);
    // A tampering or a disagreement was found by Lean's REPL: the text was sent.
    run.notes.push(`compile: ${refusalLabel(result)}${result.refusedBy ? '' : ' (nothing was sent to Lean)'}`);
  } else if (result?.status === 'skipped') run.notes.push(`compile: skipped (${result.reason ?? 'no Lean configured'})`);
  const decided: Checked = {
    statement,
    compiled,
    checked,
    refusal,
    ...(result?.status === 'refused' && result.refusedBy ? { refusedBy: result.refusedBy } : {}),
  };
  // Another attempt's refusedBy must not outlive it.
  delete run.end.refusedBy;
  Object.assign(run.end, decided);
  return decided;
}

/** A failure that ends the run `budget-exhausted` rather than failing it. */
function isBudgetExhausted(err: unknown): boolean {
  return err instanceof ActivityFailure && err.cause instanceof ApplicationFailure && err.cause.type === LLM_FAILURE.budgetExhausted;
}

/** Runs the run's LLM stages; a spent LLM budget ends them with what the run has so far (noted,
 * and `budgetSpent` on the run) instead of failing the run. The one place the budget is caught. */
export async function untilBudget(run: Run, stages: () => Promise<void>): Promise<void> {
  try {
    await stages();
  } catch (err) {
    if (!isBudgetExhausted(err)) throw err;
    run.end.budgetSpent = true;
    run.notes.push(`budget: ${(err as ActivityFailure).cause?.message ?? 'spent'}; the run stopped at ${run.progress.stage}`);
  }
}

/** The judge (and the equivalence check) on the run's decided statement, kept on the run. */
export async function judgeRun(run: Run, round: number): Promise<void> {
  Object.assign(run.end, await judgeAndCompare(run, run.end, round));
}

/** Judge faithfulness; against a gold statement, Lean's equivalence check runs beside it (only
 * on a statement that compiled). `round` labels the equivalence check in `tools`; `judgeWith`
 * adds to the judge's input (a rescore's rubric), sent only when given. */
export async function judgeAndCompare(
  run: Run,
  c: Checked,
  round: number,
  judgeWith: Pick<JudgeInput, 'rubric'> = {},
): Promise<{ verdict: JudgeVerdict | null; equivalent: EquivalenceResult | null }> {
  const { input, config } = run;
  const gold = input.goldStatement;
  const checkEquivalence = gold !== undefined && gold !== '' && c.compiled;
  if (!config.judge && !checkEquivalence) return { verdict: null, equivalent: null };
  run.enter('judge');
  const [verdict, equivalent] = await Promise.all([
    config.judge
      ? run.llm('judge').judge({
          statement: input.statement,
          formalStatement: c.statement,
          compiled: c.compiled,
          checked: c.checked,
          ...(c.refusal !== null ? { refused: c.refusal } : {}),
          ...judgeWith,
          ...run.meter,
        })
      : null,
    checkEquivalence
      ? run.leanTools.equivalence({ candidate: c.statement, gold, ...run.domain }).catch((err: Error) => {
          run.notes.push(`equivalence check failed: ${err.message}`);
          return null;
        })
      : null,
  ]);
  if (equivalent) {
    const said = equivalent.refused
      ? `${equivalent.refused} refused by the screen`
      : equivalent.refusedBy
        ? `not compared (a check was refused for ${equivalent.refusedBy})`
        : equivalent.notComparable
          ? 'not comparable'
          : equivalent.equivalent
            ? 'equivalent'
            : 'not equivalent';
    run.tools.push({ tool: 'equivalence', round, input: gold!, output: [said] });
  }
  return { verdict, equivalent };
}

export interface RunEnd extends Checked {
  verdict: JudgeVerdict | null;
  equivalent: EquivalenceResult | null;
  /** The run stopped on a spent budget (LLM tokens or cost; an agent's steps, tokens or time). */
  budgetSpent: boolean;
  attempts: Attempt[];
}

/**
 * Ends the run: its outcome, the `done` stage, what its LLM calls used (from the ledger), the
 * outcome and index search attributes, and the result. `extra` adds what only one workflow has.
 * `usageFirst`: read the usage before entering `done` (the order agent runs recorded before
 * the run core; their histories replay only so).
 */
export async function finishRun(run: Run, end: RunEnd, extra: Partial<FormalizeResult> = {}, usageFirst = false): Promise<FormalizeResult> {
  const { input } = run;
  const outcome: Outcome = runOutcome({
    compiled: end.compiled,
    checked: end.checked,
    verdict: end.verdict,
    budgetSpent: end.budgetSpent,
    refused: end.refusal !== null,
  });
  // What the run's LLM calls used (replies from the cache included), from the ledger.
  const readUsage = async () => {
    const report = await readRunUsage();
    if (report) upsertMemo({ usage: report.usage, cache: report.cache });
    return report;
  };
  const early = usageFirst ? await readUsage() : undefined;
  run.enter('done');
  const usage = usageFirst ? early : await readUsage();
  const { indexVersion } = run;
  upsertSearchAttributes([{ key: OUTCOME_KEY, value: outcome }, ...(indexVersion ? [{ key: INDEX_KEY, value: indexVersion }] : [])]);
  run.showState({
    outcome,
    ...(end.refusal !== null ? { refusal: end.refusal } : {}),
    ...(end.refusal !== null && end.refusedBy ? { refusedBy: end.refusedBy } : {}),
    ...(end.verdict ? { grade: end.verdict.grade } : {}),
  });
  return {
    statement: input.statement,
    library: input.library,
    ...(indexVersion ? { indexVersion } : {}),
    config: run.config,
    formalStatement: end.statement,
    compiled: end.compiled,
    checked: end.checked,
    outcome,
    attempts: end.attempts,
    judge: end.verdict,
    subqueries: run.subqueries,
    premises: run.premises,
    examples: run.examples,
    notes: run.notes,
    stages: [...run.progress.completed],
    tools: run.tools,
    ...(input.goldStatement ? { equivalence: end.equivalent } : {}),
    timings: run.timings,
    ...extra,
    ...(usage ? { usage: usage.usage, cache: usage.cache } : {}),
  };
}
