// Asking for a reply we can parse, and asking again (showing what was wrong) when we can't.
// A bad reply is the model's fault, not the network's, so it is re-asked here rather than
// retried by Temporal; once the re-asks are spent the failure is final.
import { z } from 'zod';
import type { ChatMessage, JsonReplyFormat, LlmClient, LlmRole } from './client';
import { LLM_FAILURE } from '../../common/failures';
import { EngineError } from '../errors';
import { toStrictJsonSchema } from './strict-json-schema';
import { truncatedError } from './errors';

export interface AskOptions {
  signal?: AbortSignal;
  /** Overrides the client's `maxReasks`. */
  maxReasks?: number;
  json?: JsonReplyFormat;
  /** A GBNF grammar for a free-text reply of at most that many tokens (providers that take one). */
  grammar?: (maxTokens: number) => string;
}

/** Thrown by a reply parser: the message is shown to the model on the next try. */
export class ReplyError extends Error {}

/**
 * Calls the model and parses its reply with `parse`; a parser that throws makes us send the bad
 * reply back with the error, up to `maxReasks` times, then fail with `LlmBadReply`.
 */
export async function askParsed<T>(
  llm: LlmClient,
  role: LlmRole,
  messages: ChatMessage[],
  parse: (reply: string) => T,
  opts: AskOptions = {},
): Promise<T> {
  const maxReasks = opts.maxReasks ?? llm.settings.maxReasks;
  const conversation = [...messages];
  let problem = '';
  let maxTokens = llm.maxTokensFor(role);
  let enlarged = false;
  for (let attempt = 0; attempt <= maxReasks; attempt++) {
    const reply = await llm.chat(role, conversation, {
      json: opts.json,
      signal: opts.signal,
      maxTokens,
      ...(opts.grammar ? { grammar: opts.grammar(maxTokens) } : {}),
    });
    if (reply.finishReason === 'length') {
      // A reply cut off at the limit is incomplete: ask the same again with twice the room,
      // once (it uses up a re-ask, so the calls still fit the activity's time budget).
      if (enlarged || attempt === maxReasks) {
        throw truncatedError(
          role,
          { model: llm.modelFor(role), baseURL: llm.baseURLFor(role), timeoutMs: llm.settings.timeoutMs },
          maxTokens,
          enlarged,
        );
      }
      enlarged = true;
      maxTokens *= 2;
      continue;
    }
    try {
      return parse(reply.content);
    } catch (err) {
      problem = err instanceof Error ? err.message : String(err);
      conversation.push(
        { role: 'assistant', content: reply.content },
        { role: 'user', content: `That reply could not be used: ${problem}\nPlease answer again, following the required format exactly.` },
      );
    }
  }
  throw new EngineError(
    LLM_FAILURE.badReply,
    `The ${role} (model "${llm.modelFor(role)}" at ${llm.baseURLFor(role)}) gave no usable reply after ${maxReasks + 1} tries: ${problem}`,
  );
}

/** Extracts the JSON text from a reply, tolerating a ``` fence or prose around one object. */
export function jsonText(reply: string): string {
  const fenced = /```(?:json)?\s*\n?([\s\S]*?)```/i.exec(reply);
  const text = (fenced?.[1] ?? reply).trim();
  if (text.startsWith('{')) return text;
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  return start >= 0 && end > start ? text.slice(start, end + 1) : text;
}

/** Parses and validates a JSON reply, throwing a ReplyError that says what is wrong. */
export function parseJsonReply<T>(reply: string, schema: z.ZodType<T>): T {
  if (reply.trim() === '') throw new ReplyError('the reply was empty; a JSON object was expected');
  let value: unknown;
  try {
    value = JSON.parse(jsonText(reply));
  } catch (err) {
    throw new ReplyError(`the reply is not valid JSON (${(err as Error).message})`);
  }
  const result = schema.safeParse(value);
  if (!result.success) {
    throw new ReplyError(`the JSON does not match the schema:\n${z.prettifyError(result.error)}`);
  }
  return result.data;
}

/** Asks for a JSON object matching `schema` (sent to the server as a strict JSON schema). */
export async function askStructured<T>(
  llm: LlmClient,
  role: LlmRole,
  messages: ChatMessage[],
  schema: z.ZodType<T>,
  name: string,
  opts: Omit<AskOptions, 'json'> = {},
): Promise<T> {
  const json = { name, schema: toStrictJsonSchema(schema) };
  return askParsed(llm, role, messages, (reply) => parseJsonReply(reply, schema), { ...opts, json });
}
