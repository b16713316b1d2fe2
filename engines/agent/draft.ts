// The `draft` tool: a Lean draft from the translator, a second model role on its own
// OpenAI-compatible endpoint (e.g. a served fine-tuned formalizer). Its answer is free text for
// the agent to read, so it is only shortened, never parsed.
import type { LlmClient } from '../llm/client';

export const MAX_DRAFT_CHARS = 4000;

const TRANSLATOR_INSTRUCTIONS =
  'Translate the mathematical statement into a Lean 4 theorem statement for Mathlib, ending in `:= by sorry`. Reply with the Lean code.';

export async function draftWithTranslator(translator: LlmClient, statement: string, signal?: AbortSignal): Promise<string> {
  const reply = await translator.complete(
    'translator',
    [
      { role: 'system', content: TRANSLATOR_INSTRUCTIONS },
      { role: 'user', content: statement },
    ],
    { signal },
  );
  return reply.slice(0, MAX_DRAFT_CHARS);
}
