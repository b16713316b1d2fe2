// The one place that talks to an OpenAI-compatible chat endpoint. Settings come from the entry
// point (only entry points read configuration); retries are left to Temporal.
import OpenAI from 'openai';
import { notConfiguredError, toLlmError } from './errors';

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

export interface LlmSettings {
  /** OpenAI-compatible base URL, usually ending in `/v1`. Absent: no LLM configured. */
  baseURL?: string;
  apiKey?: string;
  models: LlmModels;
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

/** A chat message with tool calls, in the OpenAI wire shape. */
export type ToolChatMessage = OpenAI.Chat.ChatCompletionMessageParam;

export interface ToolChatReply {
  content: string | null;
  toolCalls: Array<{ id: string; name: string; arguments: string }>;
  usage: { prompt: number; completion: number; total: number };
  finishReason: string;
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

  /** The model a role uses; the agent falls back to the formalizer's model. */
  modelFor(role: LlmRole): string {
    const models = this.settings.models;
    return models[role] ?? (role === 'agent' ? models.formalizer : '') ?? '';
  }

  /** One chat completion with the role's model; returns the reply text ('' if none). */
  async complete(role: LlmRole, messages: ChatMessage[], opts: CompleteOptions = {}): Promise<string> {
    if (!this.openai) throw notConfiguredError();
    const model = this.modelFor(role);
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

  /**
   * One chat completion offering tools (the OpenAI tool-calling interface); returns the reply's
   * text and tool calls as sent (arguments unparsed: checking them is the caller's job) and the
   * token usage.
   */
  async completeWithTools(
    role: LlmRole,
    messages: ToolChatMessage[],
    tools: OpenAI.Chat.ChatCompletionFunctionTool[],
    opts: { signal?: AbortSignal } = {},
  ): Promise<ToolChatReply> {
    if (!this.openai) throw notConfiguredError();
    const model = this.modelFor(role);
    const body: OpenAI.Chat.ChatCompletionCreateParamsNonStreaming = {
      model,
      messages,
      ...(this.settings.temperature !== undefined ? { temperature: this.settings.temperature } : {}),
      // One call per step keeps the step budget meaningful; replies with several are handled anyway.
      ...(tools.length ? { tools, tool_choice: 'auto' as const, parallel_tool_calls: false } : {}),
    };
    try {
      const completion = await this.openai.chat.completions.create(body, opts.signal ? { signal: opts.signal } : undefined);
      const choice = completion.choices[0];
      const message = choice?.message;
      const toolCalls = (message?.tool_calls ?? []).flatMap((call) =>
        call.type === 'function' ? [{ id: call.id, name: call.function.name, arguments: call.function.arguments ?? '' }] : [],
      );
      const usage = completion.usage;
      return {
        content: message?.content ?? null,
        toolCalls,
        usage: { prompt: usage?.prompt_tokens ?? 0, completion: usage?.completion_tokens ?? 0, total: usage?.total_tokens ?? 0 },
        finishReason: choice?.finish_reason ?? 'unknown',
      };
    } catch (err) {
      throw toLlmError(err, { model, baseURL: this.settings.baseURL ?? '', timeoutMs: this.settings.timeoutMs }, opts.signal);
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
