// The shapes every part of the LLM engine shares (client, prompts, probe, modes), kept apart
// from the client so that the modules it uses need not import it.

/** `agent`: the tool-calling orchestrator (its model defaults to the formalizer's);
 * `translator`: the specialised drafting model behind the agent's `draft` tool (its own client). */
export type LlmRole = 'decomposer' | 'formalizer' | 'judge' | 'agent' | 'translator';

export interface LlmModels {
  decomposer: string;
  formalizer: string;
  judge: string;
  agent?: string;
  translator?: string;
}

/** A chat message as our prompt builders produce it (plain text content only). */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface JsonReplyFormat {
  /** Schema name as OpenAI wants it: letters, digits, `_` and `-`, at most 64. */
  name: string;
  schema: Record<string, unknown>;
}

export interface ChatReply {
  content: string;
  /** As the server said it: `stop`, `length`, … (`length`: cut off at max_tokens). */
  finishReason: string;
  maxTokens: number;
}

