// Structured-output modes: how a provider is asked for JSON that follows a schema. Providers
// differ (OpenAI: `json_schema`; llama.cpp-based servers: `json_object` with a `schema`; some
// only follow the prompt), so the mode is a per-provider fact, detected or configured.
import type { ChatMessage, JsonReplyFormat } from './messages';

/** The modes in the order they are tried: the most precise first. */
export const STRUCTURED_MODES = ['json_schema', 'json_object', 'prompt'] as const;
export type StructuredMode = (typeof STRUCTURED_MODES)[number];
/** A setting: one mode, or `auto` (probe at start, fall back when refused). */
export type StructuredModeSetting = StructuredMode | 'auto';

export function nextMode(mode: StructuredMode): StructuredMode | undefined {
  return STRUCTURED_MODES[STRUCTURED_MODES.indexOf(mode) + 1];
}

/** The `response_format` a mode sends; none in `prompt` mode. */
export function responseFormatFor(mode: StructuredMode, json: JsonReplyFormat): Record<string, unknown> | undefined {
  switch (mode) {
    case 'json_schema':
      return { type: 'json_schema', json_schema: { name: json.name, schema: json.schema, strict: true } };
    case 'json_object':
      // llama.cpp-based servers turn `schema` into a grammar; others ignore it and keep to JSON.
      return { type: 'json_object', schema: json.schema };
    case 'prompt':
      return undefined;
  }
}

/**
 * Without `json_schema` the server may not know the schema, so the instructions carry it: added
 * to the system message (or, without one, to the first user message).
 */
export function withSchemaInstructions(mode: StructuredMode, messages: ChatMessage[], json: JsonReplyFormat): ChatMessage[] {
  if (mode === 'json_schema') return messages;
  const note = `\n\nYour reply must be one JSON object that satisfies this JSON Schema:\n${JSON.stringify(json.schema)}`;
  const at = messages.findIndex((m) => m.role === 'system');
  const target = at >= 0 ? at : messages.findIndex((m) => m.role === 'user');
  if (target < 0) return messages;
  return messages.map((m, i) => (i === target ? { ...m, content: m.content + note } : m));
}

/**
 * Whether an HTTP refusal is about the `response_format` we sent: a 400, 422 or 500 whose text
 * names it. (llama-cpp-python answers `json_schema` with a 500 from its request validation.)
 */
export function refusesResponseFormat(status: number, message: string): boolean {
  return [400, 422, 500].includes(status) && /response_?format|json_schema|json_object/i.test(message);
}
