// The shapes every part of the LLM engine shares (client, prompts, probe, modes), kept apart
// from the client so that the modules it uses need not import it.

import type { LlmRole } from '../../common/llm-roles';

/** The roles (common/llm-roles.ts: what each does). */
export type { LlmRole } from '../../common/llm-roles';

/** The configured model of each role; the agent's defaults to the formalizer's, and the
 * translator's comes with its own endpoint. */
export type LlmModels = Record<Exclude<LlmRole, 'agent' | 'translator'>, string> & Partial<Record<'agent' | 'translator', string>>;

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
