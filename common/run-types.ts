// A run (workflows `formalize` and `formalizeAgent`): what it is started with, its stages and
// progress, what it returns, and the inputs of its LLM stages (formalize, repair, judge).
import type { AgentStepRecord, AgentSummary } from './agent-types';
import type { CompileResult, EquivalenceResult, LeanMessage } from './lean-types';
import type { LlmCallPolicy } from './llm-call-policy';
import type { LlmMeter, RunUsage } from './llm-types';
import type { Example, LeaveOutPolicy, Premise, SubQuery } from './retrieval-types';
import type { RunConfig } from './run-config-schema';
import type { Stage } from './stages';

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
   * (common/llm-call-policy.ts); absent: the defaults. Set by whoever starts the run from config. */
  llm?: LlmCallPolicy;
  /** Search this index version instead of the library alias's current one (a sweep pins it). */
  indexVersion?: string;
  /** 0-based sample index (a sweep's k samples of one item); default 0. */
  sample?: number;
  /** Whose texts the run's Lean checks run (common/trust-domain.ts): its API key's, or a
   * predictions file's; absent, driftline's own. Texts of different domains never share a REPL. */
  trustDomain?: string;
}

/** What an `evaluateStatement` workflow is started with: a run's input (the informal statement,
 * the library, the judge's configuration, the gold statement) and a formal statement made
 * elsewhere (a predictions file), which is screened, compiled, compared and judged as it is. */
export interface EvaluateStatementInput extends FormalizeInput {
  formalStatement: string;
}

export type { Stage };

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

export type { Outcome } from './outcomes';
import type { Outcome } from './outcomes';

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

/** One call of a Lean tool by the workflow, as recorded in the result. */
export interface ToolUse {
  tool: 'resolveName' | 'inspectName' | 'equivalence';
  /** Repair round that needed it. */
  round: number;
  input: string;
  /** What it returned, briefly (e.g. the suggested names). */
  output: string[];
}

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
  /** `predictions`: the statement was given (workflow `evaluateStatement`), not generated. */
  source?: 'predictions';
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
  /** Replaces the judge's instructions (a rescore's rubric file); sent only when set. */
  rubric?: string;
  meter?: LlmMeter;
}
