// Types shared by workflows, activities, the API and the CLI.
// The run configuration's shape (and the agent's tool names) are defined once, in
// run-config-schema.ts, and re-exported here.

export type { RunConfig } from './run-config-schema';
export { AGENT_TOOL_NAMES, DEFAULT_RUN_CONFIG, MAX_AGENT_STEPS, type AgentToolName, type RunMode } from './run-config-schema';
import type { AgentToolName, RunConfig, LLM_ROLE_NAMES } from './run-config-schema';

/** How premises are found for a run. `drift`: top-1 per sub-query; `monolithic`: the whole
 * statement as one query, top-k (the RAutoformalizer baseline); `oracle`: the gold premises;
 * `none`: no premises at all. */
export type RetrievalMode = RunConfig['retrieval'];

/** The roles an LLM plays; each may have its own model. */
export type LlmRoleName = (typeof LLM_ROLE_NAMES)[number];

/** What an LLM activity needs to know of the run for the reply cache and the ledger. */
export interface LlmMeter {
  cache: boolean;
  /** Sample index: k samples of an item are k cache entries. */
  sample: number;
  models?: Partial<Record<LlmRoleName, string>>;
  /** The provider each routed role's calls go to (the one whose task queue ran the activity). */
  providers?: Partial<Record<LlmRoleName, string>>;
  temperature?: number;
  /** Stop before a call once the run's calls used this many tokens. */
  tokenBudget?: number;
  costBudgetUsd?: number;
}

/** Token usage of a run's LLM calls, summed (cached replies count: they are the run's replies). */
export interface RunUsage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  /** US dollars actually paid (cache hits cost nothing); absent when a model has no price. */
  costUsd?: number;
}

/** What the run's LLM calls used, from the ledger (`llmUsage` activity). */
export interface LlmUsageReport {
  usage: RunUsage;
  cache: { hits: number; misses: number };
}

/** How much of an item's own neighbourhood retrieval hides. `item`: the names in `exclude`
 * (the item's own declaration) are never retrieved or shown. `file`: besides, no theorem of the
 * source file (module) of an excluded declaration votes in analogy re-ranking, counts in the
 * usage prior or is shown as an example; definitions stay retrievable. */
export type LeaveOutPolicy = 'item' | 'file';

/** What a `formalize` workflow is started with. */
export interface FormalizeInput {
  statement: string;
  library: string;
  config: RunConfig;
  /** Full names that must never be retrieved or shown (the item under evaluation). */
  exclude?: string[];
  /** Leave-out policy over `exclude`; default `item`. */
  leaveOut?: LeaveOutPolicy;
  /** Gold premises, used by `oracle` retrieval. */
  goldPremises?: string[];
  /** Task queue of the Lean workers; default `lean`. */
  leanTaskQueue?: string;
  /** A reference formal statement: when given and the result compiles, a BEq+-style Lean
   * equivalence check runs beside the judge. */
  goldStatement?: string;
  /** The LLM settings the workers run with, from which the LLM activities' timeouts are derived
   * (common/llm-budget.ts); absent: the defaults. Set by whoever starts the run from config. */
  llm?: LlmBudget;
  /** Search this index version instead of the library alias's current one (a sweep pins it). */
  indexVersion?: string;
  /** 0-based sample index (a sweep's k samples of one item); default 0. */
  sample?: number;
}

/** The LLM settings an LLM activity's time budget depends on. */
export interface LlmBudget {
  /** Per LLM call (DRIFTLINE_LLM_TIMEOUT_MS). */
  timeoutMs: number;
  /** Re-asks after an unusable reply (DRIFTLINE_LLM_MAX_REASKS). */
  maxReasks: number;
  /** The deployment's provider per role (DRIFTLINE_ROLE_<ROLE>, DRIFTLINE_PROVIDERS). Set: each
   * role's activities are scheduled on its provider's task queue (`llm-<provider>`), where the
   * provider's rate limit holds; absent (older runs): on the workflow's own queue. */
  providers?: Partial<Record<LlmRoleName, string>>;
}

/** One atomic concept of a statement: an informal phrase and the decomposer's guess at its
 * formal form (e.g. `Nat.Prime p`). */
export interface SubQuery {
  phrase: string;
  formal: string;
}

/** A library declaration shown to the formalizer as a premise. */
export interface Premise {
  name: string;
  kind: string;
  /** The pretty-printed declaration (signature). */
  declaration: string;
  /** Source text where the corpus has it. */
  source?: string;
  module?: string;
  /** Index of the sub-query that found it, for `drift` retrieval. */
  subquery?: number;
  score?: number;
}

/** An example theorem chosen to show how premises are used. */
export interface Example {
  name: string;
  /** The formal statement of the theorem. */
  formal: string;
  /** Its informal statement, where the corpus has one. */
  informal?: string;
  /** The retrieved premises this example newly covered when it was chosen. */
  covers: string[];
}

export type Severity = 'error' | 'warning' | 'info';

/** A Lean message; positions are 1-based lines and 0-based columns, as Lean reports them. */
export interface LeanMessage {
  severity: Severity;
  line: number;
  column: number;
  endLine?: number;
  endColumn?: number;
  text: string;
}

/** `ok`: compiled (warnings about `sorry` allowed); `error`: Lean reported errors; `refused`:
 * the statement screen refused the text before Lean, nothing was sent to Lean (one error
 * message at the offending place, its text starting `refused before Lean:`, and `reason`);
 * `skipped`: no Lean is configured, nothing was checked; `timeout`: the check ran out of time. */
export type CompileStatus = 'ok' | 'error' | 'refused' | 'skipped' | 'timeout';

export interface CompileResult {
  status: CompileStatus;
  messages: LeanMessage[];
  /** Why the check was skipped or refused, in words. */
  reason?: string;
  durationMs: number;
}

/** One formalization attempt and what Lean said about it. Round 0 is the first attempt. */
export interface Attempt {
  round: number;
  statement: string;
  compile: CompileResult;
}

export interface JudgeVerdict {
  /** 0..10 */
  grade: number;
  /** true iff the statement compiled and the grade is at least 9. */
  faithful: boolean;
  explanation: string;
}

export type Stage =
  | 'starting'
  | 'decompose'
  | 'retrieve'
  | 'illustrate'
  | 'formalize'
  | 'compile'
  | 'repair'
  | 'judge'
  | 'agent'
  | 'done';

export interface Progress {
  stage: Stage;
  /** Repair round in progress (0 before any repair). */
  round: number;
  /** Stages finished so far, in order (repeated for repair rounds), for progress displays. */
  completed: Stage[];
  /** Agent runs: the LLM step in progress (1-based) and the last tool called (null: none yet,
   * or the last step was an answer without a tool). */
  step?: number;
  lastTool?: string | null;
}

/** `not-compiled`: Lean rejected the last attempt; `refused`: the statement screen refused the
 * last attempt before Lean (whether or not Lean is configured; Lean never saw it);
 * `budget-exhausted`: an agent run spent its steps, tokens or time before an accepted answer. */
export type Outcome = 'faithful' | 'unfaithful' | 'compiled' | 'not-compiled' | 'refused' | 'unchecked' | 'budget-exhausted';

export interface FormalizeResult {
  statement: string;
  library: string;
  /** The index version the run searched (absent when retrieval was off). */
  indexVersion?: string;
  config: RunConfig;
  /** The last attempt's Lean statement. */
  formalStatement: string;
  /** true iff Lean accepted the last attempt. */
  compiled: boolean;
  /** Whether Lean checked the last attempt: false when no Lean is configured or the screen
   * refused the attempt before Lean. */
  checked: boolean;
  outcome: Outcome;
  attempts: Attempt[];
  judge: JudgeVerdict | null;
  subqueries: SubQuery[];
  premises: Premise[];
  examples: Example[];
  /** Notes on how the run went (e.g. "retrieval: lexical only"). */
  notes: string[];
  /** The stages the run went through, in order (repeated for repair rounds). */
  stages: Stage[];
  /** Lean tools the repair loop called (e.g. resolveName for an unknown identifier). */
  tools?: ToolUse[];
  /** The Lean equivalence check against `goldStatement`, when one was given and it compiled. */
  equivalence?: EquivalenceResult | null;
  /** Set when the repair loop stopped before its rounds ran out because the next repair round
   * would have sent the formalizer a prompt already sent in this run (the same attempt and the
   * same Lean messages, so the same reply): `round` is the repair round not asked, `repeats` the
   * earlier one whose prompt it would have repeated. */
  repairStopped?: { reason: 'repeated-prompt'; round: number; repeats: number };
  /** Milliseconds spent per stage (workflow time from entering a stage to entering the next),
   * summed over repair rounds. */
  timings?: Partial<Record<Stage, number>>;
  /** Agent runs: every step in order (an LLM step with several tool calls gives one entry per
   * call, all with the same `step`). */
  steps?: AgentStepRecord[];
  /** Agent runs: how the loop ended. */
  agent?: AgentSummary;
  /** Tokens of the run's LLM calls, summed, and what they cost. */
  usage?: RunUsage;
  /** The run's LLM calls answered from the reply cache, and those sent to a provider. */
  cache?: { hits: number; misses: number };
}

export interface TokenUsage {
  prompt: number;
  completion: number;
  total: number;
}

/** One step of an agent run, as recorded in the result. */
export interface AgentStepRecord {
  /** The LLM step (1-based) that made this call. */
  step: number;
  /** The function the model called, or null for an answer without a tool call. */
  tool: string | null;
  /** The call's arguments as parsed (absent when they did not parse). */
  arguments?: Record<string, unknown>;
  /** What the tool returned (or the answer said), shortened to a few hundred characters. */
  output: string;
  /** true when the call was malformed or the tool failed; the model was told why. */
  error?: boolean;
  /** Answers only: false when the answer was refused (e.g. nothing compiled yet). */
  accepted?: boolean;
  /** Tokens of the LLM step (on the first entry of a step only, so sums count each once). */
  tokens: TokenUsage;
  /** Milliseconds: the LLM call (first entry of a step) plus this tool call. */
  ms: number;
}

export type AgentEnding = 'success' | 'answered' | 'budget-exhausted';

export interface AgentSummary {
  /** `success`: the model declared success and it was accepted; `answered`: it answered
   * without declaring success; `budget-exhausted`: see `budget`. */
  ending: AgentEnding;
  budget?: 'steps' | 'tokens' | 'time';
  /** LLM steps taken. */
  steps: number;
  tokens: TokenUsage;
  /** Tool calls per function name. */
  toolCalls: Record<string, number>;
  /** The step whose `run_lean` first reported the working file compiled (null: never). */
  compiledAtStep: number | null;
}

/** One call of a Lean tool by the workflow, as recorded in the result. */
export interface ToolUse {
  tool: 'resolveName' | 'inspectName' | 'equivalence';
  /** Repair round that needed it. */
  round: number;
  input: string;
  /** What it returned, briefly (e.g. the suggested names). */
  output: string[];
}

// ---- Activity signatures (the workflow proxies these) ----

export interface RetrieveInput {
  library: string;
  statement: string;
  subqueries: SubQuery[];
  mode: RetrievalMode;
  topK: number;
  exclude: string[];
  /** Default `item`. */
  leaveOut?: LeaveOutPolicy;
  gold: string[];
  /** A pinned index version; absent: the library alias's current version. */
  indexVersion?: string;
}

export interface RetrieveOutput {
  premises: Premise[];
  notes: string[];
  /** The index version searched (the library's alias at that moment); later stages use it. */
  indexVersion?: string;
}

export interface IllustrateInput {
  library: string;
  statement: string;
  premises: string[];
  m: number;
  exclude: string[];
  /** The version retrieve searched; absent: the library's current version. */
  indexVersion?: string;
  /** Default `item`. */
  leaveOut?: LeaveOutPolicy;
}

export interface RepairContext {
  /** The previous attempt. */
  statement: string;
  messages: LeanMessage[];
  /** For unknown identifiers: the closest real names, by identifier. */
  suggestions?: Record<string, string[]>;
}

export interface FormalizeStageInput {
  statement: string;
  premises: Premise[];
  examples: Example[];
  /** Present on a repair round. */
  repair?: RepairContext;
  meter?: LlmMeter;
}

/** A repair round's input: the formalize stage's, with the attempt to repair. */
export type RepairStageInput = FormalizeStageInput & { repair: RepairContext };

export interface JudgeInput {
  statement: string;
  formalStatement: string;
  compiled: boolean;
  /** false when no Lean is configured: meaning is graded, but nothing can be called faithful. */
  checked?: boolean;
  /** The screen refused the statement before Lean, for this reason: never faithful either. */
  refused?: string;
  meter?: LlmMeter;
}

// ---- the agent's conversation, as kept in workflow state ----

/** A tool call exactly as the model sent it (`arguments` is the raw JSON text). */
export interface AgentToolCall {
  id: string;
  name: string;
  arguments: string;
}

/** The conversation after the system prompt and the first user message (those are rebuilt by
 * the step activity from the statement and configuration, so they never repeat in history). */
export type AgentTurn =
  | { role: 'assistant'; content: string | null; toolCalls?: AgentToolCall[] }
  | { role: 'tool'; toolCallId: string; content: string }
  | { role: 'user'; content: string };

/** A tool call checked against the offered tools and their argument schemas. */
export type ParsedToolCall =
  | { id: string; tool: AgentToolName; args: Record<string, unknown> }
  | { id: string; tool: string; error: string };

export interface AgentStepInput {
  statement: string;
  tools: AgentToolName[];
  /** DRIFT context for the first user message, when the configuration asks for it. */
  context?: { premises: Premise[]; examples: Example[] };
  transcript: AgentTurn[];
  /** The run's LLM choices (set when its roles have providers). */
  meter?: LlmMeter;
}

export interface AgentStepOutput {
  reply: Extract<AgentTurn, { role: 'assistant' }>;
  /** The reply's tool calls, parsed; empty: the reply is the final answer. */
  calls: ParsedToolCall[];
  /** The answer declares `{"status": "success"}`. */
  declaresSuccess: boolean;
  usage: TokenUsage;
}

/** Activities of the main task queue. */
export interface MainActivities {
  decompose(input: { statement: string; meter?: LlmMeter }): Promise<SubQuery[]>;
  /** What the run's LLM calls used so far (the ledger in the results database). */
  llmUsage(input: { runId: string }): Promise<LlmUsageReport>;
  retrieve(input: RetrieveInput): Promise<RetrieveOutput>;
  illustrate(input: IllustrateInput): Promise<Example[]>;
  /** The formalize stage: the first Lean statement of a run. */
  formalize(input: FormalizeStageInput): Promise<string>;
  /** The repair stage: a new Lean statement from the last attempt and Lean's messages on it. */
  repair(input: RepairStageInput): Promise<string>;
  /** Both stages under their old activity name (a repair when `repair` is set): runs started
   * before the 'formalize-repair-activities' patch call it. */
  draftStatement(input: FormalizeStageInput): Promise<string>;
  judge(input: JudgeInput): Promise<JudgeVerdict>;
  /** One LLM step of the agent: the conversation so far in, the model's next message out. */
  agentStep(input: AgentStepInput): Promise<AgentStepOutput>;
  /** The `draft` tool: a Lean draft from the translator model (free text). */
  draft(input: { statement: string; meter?: LlmMeter }): Promise<string>;
}

export interface InspectNameInput {
  /** A Lean name such as `Nat.Prime`. */
  name: string;
  /** Also `#print` it (its definition or statement). Default true. */
  includePrint?: boolean;
  /** Header to look it up under; default the worker's library header. */
  header?: string;
}

/** What Lean says about a name: `#check @name` and `#print name`. */
export interface NameInfo {
  name: string;
  exists: boolean;
  /** Its type, from `#check`. */
  type?: string;
  /** `#print` output. */
  text?: string;
  /** Why it does not exist or could not be looked up, in words. */
  reason?: string;
}

export interface ResolveNameInput {
  /** The identifier Lean did not know. */
  token: string;
  /** Library whose names are searched. */
  library: string;
  /** Namespaces the statement opens or uses; their names rank first. */
  namespaceHints?: string[];
  /** How many confirmed names to return. Default 5. */
  topK?: number;
  header?: string;
}

export interface NameSuggestion {
  name: string;
  /** From `#check`: Lean confirmed the name exists. */
  type?: string;
  /** How it matched (suffix, case, typo, namespace swap). */
  why: string;
}

export interface ResolveNameResult {
  token: string;
  /** Real names close to the token, best first, each confirmed by Lean. */
  suggestions: NameSuggestion[];
  /** Candidates the index offered before Lean confirmed them. */
  considered: number;
}

export interface EquivalenceInput {
  /** The formalization under test: one theorem statement. */
  candidate: string;
  /** The reference statement. */
  gold: string;
  header?: string;
  /** Budget for the whole check. Default: the worker's equivalence timeout. */
  timeoutMs?: number;
}

export interface DirectionResult {
  /** true when a tactic proved this direction and the proof needed the hypothesis. */
  proved: boolean;
  /** The tactic that proved it. */
  tactic?: string;
  /** Tactics that closed the goal without using the hypothesis (they prove nothing here). */
  withoutHypothesis: string[];
  tried: number;
}

/** BEq+-style equivalence: each statement proves the other. */
export interface EquivalenceResult {
  equivalent: boolean;
  candidateToGold: DirectionResult;
  goldToCandidate: DirectionResult;
  /** Set when the check could not run (a statement does not compile, was refused, timed out). */
  reason?: string;
  /** Which statement the screen refused before Lean (then `reason` starts `refused before Lean:`). */
  refused?: 'candidate' | 'gold';
  durationMs: number;
}

/** Activities of the `lean` task queue. */
export interface LeanActivities {
  compile(input: { code: string }): Promise<CompileResult>;
  /** The statement sandbox alone (no Lean): why the code may not reach Lean, or null. */
  screenStatement(input: { code: string }): Promise<LeanMessage | null>;
  inspectName(input: InspectNameInput): Promise<NameInfo>;
  resolveName(input: ResolveNameInput): Promise<ResolveNameResult>;
  equivalence(input: EquivalenceInput): Promise<EquivalenceResult>;
}

export const MAIN_TASK_QUEUE = 'driftline';
export const LEAN_TASK_QUEUE = 'lean';

/** Search attributes registered on the dev server and set by the workflow. */
export const SEARCH_ATTRIBUTES = {
  stage: 'DriftlineStage',
  outcome: 'DriftlineOutcome',
  library: 'DriftlineLibrary',
  config: 'DriftlineConfig',
  sweep: 'DriftlineSweep',
  index: 'DriftlineIndex',
} as const;
