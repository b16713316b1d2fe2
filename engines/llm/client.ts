// The one place that talks to an OpenAI-compatible chat endpoint. Settings come from the entry
// point (only entry points read configuration); retries are left to Temporal.
import OpenAI from 'openai';
import { notConfiguredError, toLlmError } from './errors';

export type LlmRole = 'decomposer' | 'formalizer' | 'judge';

/** A chat message as our prompt builders produce it (plain text content only). */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface LlmSettings {
  /** OpenAI-compatible base URL, usually ending in `/v1`. Absent: no LLM configured. */
  baseURL?: string;
  apiKey?: string;
  models: Record<LlmRole, string>;
  timeoutMs: number;
  /** How many times a malformed structured reply is sent back for another try. */
  maxReasks: number;
  temperature?: number;
}

export interface JsonReplyFormat {
  /** Schema name as OpenAI wants it: letters, digits, `_` and `-`, at most 64. */
  name: string;
  schema: Record<string, unknown>;
}

export interface CompleteOptions {
  json?: JsonReplyFormat;
  signal?: AbortSignal;
}

export class LlmClient {
  private readonly openai: OpenAI | null;

  constructor(readonly settings: LlmSettings) {
    this.openai = settings.baseURL
      ? new OpenAI({
          baseURL: settings.baseURL,
          // Local servers need no key, but the SDK insists on one; a placeholder also stops it
          // from reading the environment behind the entry point's back.
          apiKey: settings.apiKey || 'no-key',
          organization: null,
          project: null,
          maxRetries: 0,
          timeout: settings.timeoutMs,
        })
      : null;
  }

  get configured(): boolean {
    return this.openai !== null;
  }

  /** One chat completion with the role's model; returns the reply text ('' if none). */
  async complete(role: LlmRole, messages: ChatMessage[], opts: CompleteOptions = {}): Promise<string> {
    if (!this.openai) throw notConfiguredError();
    const model = this.settings.models[role];
    const body: OpenAI.Chat.ChatCompletionCreateParamsNonStreaming = {
      model,
      messages,
      ...(this.settings.temperature !== undefined ? { temperature: this.settings.temperature } : {}),
      ...(opts.json
        ? {
            response_format: {
              type: 'json_schema',
              json_schema: { name: opts.json.name, schema: opts.json.schema, strict: true },
            },
          }
        : {}),
    };
    try {
      const completion = await this.openai.chat.completions.create(
        body,
        opts.signal ? { signal: opts.signal } : undefined,
      );
      return completion.choices[0]?.message?.content ?? '';
    } catch (err) {
      throw toLlmError(
        err,
        { model, baseURL: this.settings.baseURL ?? '', timeoutMs: this.settings.timeoutMs },
        opts.signal,
      );
    }
  }
}

const UNCONFIGURED: LlmSettings = {
  models: { decomposer: '', formalizer: '', judge: '' },
  timeoutMs: 0,
  maxReasks: 0,
};

/** A client for the settings; without a base URL every call fails with `LlmNotConfigured`. */
export function createLlmClient(settings: LlmSettings | null): LlmClient {
  return new LlmClient(settings ?? UNCONFIGURED);
}
