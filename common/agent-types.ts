// Agent mode's types: the conversation as kept in workflow state, one LLM step's input and output,
// and the steps and summary an agent run's result records.
import type { LlmMeter, TokenUsage } from './llm-types';
import type { Example, Premise } from './retrieval-types';
import type { AgentToolName } from './run-config-schema';

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
  { id: string; tool: AgentToolName; args: Record<string, unknown> } | { id: string; tool: string; error: string };

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
