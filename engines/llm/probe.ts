// The start-of-work probe: one tiny structured request per mode, most precise first, to learn
// which `response_format` this provider accepts before a real request depends on it.
import { classifyApiError } from './api-errors';
import type { ChatMessage, ChatReply, JsonReplyFormat } from './messages';
import { refusesResponseFormat, responseFormatFor, withSchemaInstructions, type StructuredMode } from './structured-output-modes';

export interface ProbeOutcome {
  /** The mode to use; absent when the probe could not tell (no answer, a bad key, …). */
  mode?: StructuredMode;
  detail: string;
}

export type ProbeSend = (req: {
  messages: ChatMessage[];
  responseFormat?: Record<string, unknown>;
  maxTokens: number;
}) => Promise<ChatReply>;

const PROBE_FORMAT: JsonReplyFormat = {
  name: 'probe',
  schema: { type: 'object', properties: { answer: { type: 'integer' } }, required: ['answer'], additionalProperties: false },
};

const PROBE_MESSAGES: ChatMessage[] = [
  { role: 'user', content: 'What is 2 + 2? Reply with the JSON object {"answer": <the number>} and nothing else.' },
];

/** Enough for `{"answer": 4}`; a probe must never make a slow server write at length. */
export const PROBE_MAX_TOKENS = 16;

function why(err: unknown): string {
  const e = classifyApiError(err);
  switch (e.kind) {
    case 'refused':
    case 'transient':
      return `HTTP ${e.status}${e.detail}`;
    case 'timeout':
      return 'it timed out';
    case 'unreachable':
      return `unreachable${e.cause}`;
    default:
      return e.kind === 'cancelled' ? 'cancelled' : String((e.value as Error)?.message ?? e.value);
  }
}

export async function probeStructuredOutput(send: ProbeSend, model: string): Promise<ProbeOutcome> {
  const refusals: string[] = [];
  for (const mode of ['json_schema', 'json_object'] as const) {
    try {
      await send({
        messages: withSchemaInstructions(mode, PROBE_MESSAGES, PROBE_FORMAT),
        responseFormat: responseFormatFor(mode, PROBE_FORMAT)!,
        maxTokens: PROBE_MAX_TOKENS,
      });
      return { mode, detail: `probe with model "${model}": ${[...refusals, `${mode} accepted`].join('; ')}` };
    } catch (err) {
      const e = classifyApiError(err);
      if ((e.kind === 'refused' || e.kind === 'transient') && refusesResponseFormat(e.status, e.error.message)) {
        refusals.push(`${mode} refused (HTTP ${e.status})`);
        continue;
      }
      return { detail: `probe with model "${model}" got no answer to ${mode}: ${why(err)}` };
    }
  }
  return { mode: 'prompt', detail: `probe with model "${model}": ${refusals.join('; ')}; the schema goes in the prompt` };
}
