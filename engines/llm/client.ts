// The one place that talks to OpenAI-compatible chat endpoints. Settings come from the entry
// point (only entry points read configuration); retries are left to Temporal. Each role's
// requests go to the provider configured for it (or the one the run names); what is learnt about
// a provider (the structured-output mode that works, a back-off after a timeout) is kept in its
// Provider and shared by every call that goes there.
import OpenAI from 'openai';
import type { ChatMessage, ChatReply, JsonReplyFormat, LlmModels, LlmRole } from './messages';
import { DEFAULT_MAX_TOKENS, LLM_ROLES } from '../../common/llm-roles';
import { classifyApiError } from './api-errors';
import { currentLlmCallContext } from './call-context';
import {
  busyError,
  configuredModeError,
  notConfiguredError,
  unknownProviderError,
  refusalReason,
  structuredOutputError,
  toLlmError,
  truncatedError,
  type CallTarget,
  type ModeRefusal,
} from './errors';
import { foldSystemPrompt } from './fold-system';
import { Provider, type ProviderStatus } from './provider';
import { probeStructuredOutput } from './probe';
import {
  refusesResponseFormat,
  responseFormatFor,
  withSchemaInstructions,
  type StructuredMode,
  type StructuredModeSetting,
} from './structured-output-modes';

export type { ChatMessage, LlmModels, LlmRole } from './messages';

/** The run's temperature (a sweep factor) wins over the provider's, which wins over the
 * client's; the provider's seed is sent when it has one. */
function samplingParams(endpoint: Endpoint, configured: number | undefined): { temperature?: number; seed?: number } {
  const t = currentLlmCallContext()?.temperature ?? endpoint.settings.temperature ?? configured;
  const seed = endpoint.settings.seed;
  return { ...(t !== undefined ? { temperature: t } : {}), ...(seed !== undefined ? { seed } : {}) };
}

/** One provider: where a role's requests are sent, and with which defaults. */
export interface ProviderSettings {
  /** OpenAI-compatible base URL, usually ending in `/v1`. */
  baseURL: string;
  /** How messages and /readyz name this endpoint, when its base URL is not where requests really
   * go (a local model behind an in-process transport: its file). Default: baseURL. */
  label?: string;
  apiKey?: string;
  /** The model of roles on this provider that name none. */
  model?: string;
  temperature?: number;
  /** `max_tokens` for every role on this provider (default: the role's own limit). */
  maxTokens?: number;
  /** Sent as `seed` (providers that support it sample reproducibly). */
  seed?: number;
  structuredOutput?: StructuredModeSetting;
  foldSystemPrompt?: boolean;
  /** The provider takes a GBNF grammar for free-text replies in the request's `grammar` field (a
   * llama.cpp extension of the chat-completions protocol; the local provider takes it too). */
  acceptsGrammar?: boolean;
  /** The HTTP transport under the OpenAI client: the reply cache and ledger (metered-fetch.ts),
   * or anything else that answers the chat-completions protocol. Default: the network. */
  fetch?: typeof fetch;
  /** The longest wait of a request for the provider's shared budget inside `fetch`
   * (budgeted-fetch.ts): the call's timeout is extended by it, so waiting never eats the call's
   * own time. */
  budgetWaitMs?: number;
}

/** Which provider (and optionally which model) a role uses. */
export interface RoleRoute {
  provider: string;
  model?: string;
}

/** The provider built from the top-level settings (OPENAI_BASE_URL …). */
export const DEFAULT_PROVIDER = 'default';

export interface LlmSettings {
  /** Named providers beside the default one (the top-level baseURL). */
  providers?: Record<string, ProviderSettings>;
  /** Role → provider (and model); a role not named here uses the default provider. */
  roles?: Partial<Record<LlmRole, RoleRoute>>;
  /** OpenAI-compatible base URL of the default provider, usually ending in `/v1`. */
  baseURL?: string;
  apiKey?: string;
  models: LlmModels;
  timeoutMs: number;
  /** How many times a malformed structured reply is sent back for another try. */
  maxReasks: number;
  temperature?: number;
  /** `max_tokens` sent per role; default DEFAULT_MAX_TOKENS. */
  maxTokens?: Partial<Record<LlmRole, number>>;
  /** How this provider is asked for JSON; default `auto`. */
  structuredOutput?: StructuredModeSetting;
  /** Fold system messages into the first user message (for chat templates that drop them). */
  foldSystemPrompt?: boolean;
  /** Pause after a timeout before calling this provider again; default 60 s. */
  busyBackoffMs?: number;
  /** Told about every change of each provider's status, with the provider's name (for /readyz). */
  onProviderChange?: (status: ProviderStatus, provider: string) => void;
  /** The provider takes a GBNF grammar for free-text replies in the request's `grammar` field (a
   * llama.cpp extension of the chat-completions protocol; the local provider takes it too). */
  acceptsGrammar?: boolean;
  /** The HTTP transport under the OpenAI client: the reply cache and ledger (metered-fetch.ts).
   * Default: the network. */
  fetch?: typeof fetch;
}

export type { JsonReplyFormat } from './messages';

export interface CompleteOptions {
  json?: JsonReplyFormat;
  signal?: AbortSignal;
  /** Overrides the role's `max_tokens`. */
  maxTokens?: number;
  /** A GBNF grammar for a free-text reply, sent where the provider accepts one (acceptsGrammar). */
  grammar?: string;
}

export type { ChatReply } from './messages';

/** A chat message with tool calls, in the OpenAI wire shape. */
export type ToolChatMessage = OpenAI.Chat.ChatCompletionMessageParam;

export interface ToolChatReply {
  content: string | null;
  toolCalls: Array<{ id: string; name: string; arguments: string }>;
  usage: { prompt: number; completion: number; total: number };
  finishReason: string;
}

/** One request as sent, before the SDK: what `send` needs. */
interface Request {
  role: LlmRole;
  messages: ChatMessage[];
  responseFormat?: Record<string, unknown>;
  maxTokens: number;
  grammar?: string;
  signal?: AbortSignal;
}

/** The status listener of one provider: the client's, told that provider's name. */
function onChangeOf(name: string, onProviderChange: LlmSettings['onProviderChange']): ((status: ProviderStatus) => void) | undefined {
  return onProviderChange ? (status) => onProviderChange(status, name) : undefined;
}

/** A provider as the client holds it: its settings, its OpenAI client and what was learnt. */
class Endpoint {
  readonly openai: OpenAI;
  readonly provider: Provider;

  constructor(
    readonly name: string,
    readonly settings: ProviderSettings,
    shared: LlmSettings,
    onChange?: (status: ProviderStatus) => void,
  ) {
    this.openai = new OpenAI({
      baseURL: settings.baseURL,
      // Local servers need no key, but the SDK insists on one; a placeholder also stops it
      // from reading the environment behind the entry point's back.
      apiKey: settings.apiKey || 'no-key',
      organization: null,
      project: null,
      // Every HTTP request is one activity attempt: retries are Temporal's, after the provider's
      // task queue let the attempt through its rate limit.
      maxRetries: 0,
      timeout: shared.timeoutMs + (settings.budgetWaitMs ?? 0),
      ...(settings.fetch ? { fetch: settings.fetch } : {}),
    });
    this.provider = new Provider(settings.label ?? settings.baseURL, {
      structuredOutput: settings.structuredOutput ?? 'auto',
      foldSystemPrompt: settings.foldSystemPrompt ?? false,
      busyBackoffMs: shared.busyBackoffMs ?? 60_000,
      ...(onChange ? { onChange } : {}),
    });
  }
}

export class LlmClient {
  private readonly endpoints = new Map<string, Endpoint>();

  constructor(readonly settings: LlmSettings) {
    if (settings.baseURL) {
      this.endpoints.set(
        DEFAULT_PROVIDER,
        new Endpoint(
          DEFAULT_PROVIDER,
          {
            baseURL: settings.baseURL,
            ...(settings.apiKey !== undefined ? { apiKey: settings.apiKey } : {}),
            ...(settings.structuredOutput ? { structuredOutput: settings.structuredOutput } : {}),
            ...(settings.foldSystemPrompt !== undefined ? { foldSystemPrompt: settings.foldSystemPrompt } : {}),
            ...(settings.acceptsGrammar !== undefined ? { acceptsGrammar: settings.acceptsGrammar } : {}),
            ...(settings.fetch ? { fetch: settings.fetch } : {}),
          },
          settings,
          onChangeOf(DEFAULT_PROVIDER, settings.onProviderChange),
        ),
      );
    }
    for (const [name, provider] of Object.entries(settings.providers ?? {})) {
      this.endpoints.set(name, new Endpoint(name, provider, settings, onChangeOf(name, settings.onProviderChange)));
    }
  }

  /** True when any provider is configured. */
  get configured(): boolean {
    return this.endpoints.size > 0;
  }

  /** The default provider's state (the first one's when there is no default). */
  get provider(): Provider | null {
    return (this.endpoints.get(DEFAULT_PROVIDER) ?? [...this.endpoints.values()][0])?.provider ?? null;
  }

  /** Each provider's status, by name: what the start probe (or configuration) settled. */
  providerStatuses(): Record<string, ProviderStatus> {
    return Object.fromEntries([...this.endpoints].map(([name, endpoint]) => [name, endpoint.provider.status()]));
  }

  /** Provider names, the default first. */
  get providerNames(): string[] {
    return [...this.endpoints.keys()];
  }

  /** True when the role has a provider of its own in the configuration (or the run names one). */
  routes(role: LlmRole): boolean {
    return Boolean(currentLlmCallContext()?.providers?.[role] ?? this.settings.roles?.[role]);
  }

  /** The provider a role's requests go to now: the run's choice, the configured one, or the
   * default. */
  providerFor(role: LlmRole): string {
    return currentLlmCallContext()?.providers?.[role] ?? this.settings.roles?.[role]?.provider ?? DEFAULT_PROVIDER;
  }

  private endpointFor(role: LlmRole): Endpoint | undefined {
    return this.endpoints.get(this.providerFor(role));
  }

  /** The endpoint a role uses, or the reason there is none. */
  private requireEndpoint(role: LlmRole): Endpoint {
    const endpoint = this.endpointFor(role);
    if (endpoint) return endpoint;
    if (this.endpoints.size === 0) throw notConfiguredError();
    throw unknownProviderError(role, this.providerFor(role), this.providerNames);
  }

  /** Where a role's requests go, as messages name it: the base URL, or the endpoint's label
   * (a local model's file) ('' when none). */
  baseURLFor(role: LlmRole): string {
    const settings = this.endpointFor(role)?.settings;
    return settings?.label ?? settings?.baseURL ?? '';
  }

  /** The model a role uses: the run's choice, the role's route, its provider's model, the
   * configured model per role; the agent falls back to the formalizer's model. */
  modelFor(role: LlmRole): string {
    // A run may choose its own model per role (a sweep factor).
    const override = currentLlmCallContext()?.models?.[role];
    if (override) return override;
    const routed = this.settings.roles?.[role];
    if (routed?.model && this.providerFor(role) === routed.provider) return routed.model;
    const providerModel = this.endpointFor(role)?.settings.model;
    if (providerModel) return providerModel;
    const models = this.settings.models;
    return models[role] ?? (role === 'agent' ? models.formalizer : '') ?? '';
  }

  maxTokensFor(role: LlmRole): number {
    return this.endpointFor(role)?.settings.maxTokens ?? this.settings.maxTokens?.[role] ?? DEFAULT_MAX_TOKENS[role];
  }

  private target(role: LlmRole): CallTarget {
    return { model: this.modelFor(role), baseURL: this.baseURLFor(role), timeoutMs: this.settings.timeoutMs };
  }

  /** One HTTP request; errors come back as the SDK threw them. */
  private async send(endpoint: Endpoint, req: Request): Promise<ChatReply> {
    const messages = endpoint.provider.foldSystemPrompt ? foldSystemPrompt(req.messages) : req.messages;
    const body = {
      model: this.modelFor(req.role),
      messages,
      max_tokens: req.maxTokens,
      ...samplingParams(endpoint, this.settings.temperature),
      ...(req.responseFormat ? { response_format: req.responseFormat } : {}),
      ...(req.grammar && !req.responseFormat && endpoint.settings.acceptsGrammar ? { grammar: req.grammar } : {}),
    } as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming;
    const completion = await endpoint.openai.chat.completions.create(body, requestOptions(req.signal));
    const choice = completion.choices[0];
    return { content: choice?.message?.content ?? '', finishReason: choice?.finish_reason ?? 'stop', maxTokens: req.maxTokens };
  }

  /**
   * One chat completion with the role's model. With `json`, the reply is asked for in the
   * provider's structured-output mode; a refusal of that mode's response_format moves the
   * provider to the next mode (remembered) and the request is sent again, once per mode.
   */
  async chat(role: LlmRole, messages: ChatMessage[], opts: CompleteOptions = {}): Promise<ChatReply> {
    const endpoint = this.requireEndpoint(role);
    const provider = endpoint.provider;
    const target = this.target(role);
    // Wait for the start probe, but never longer than one call: the activity's time budget
    // (common/llm-call-policy.ts) counts one call for it.
    if (opts.json && provider.probing) await waitAtMost(provider.probing, this.settings.timeoutMs);
    const maxTokens = opts.maxTokens ?? this.maxTokensFor(role);
    const tried: ModeRefusal[] = [];
    let mode: StructuredMode | undefined = opts.json ? provider.mode : undefined;
    for (;;) {
      const waitMs = provider.busyForMs();
      if (waitMs > 0) throw busyError(target, waitMs, provider.earlierTimeout);
      const req: Request = {
        role,
        messages,
        maxTokens,
        ...(opts.grammar ? { grammar: opts.grammar } : {}),
        ...(opts.signal ? { signal: opts.signal } : {}),
      };
      if (opts.json && mode) {
        req.messages = withSchemaInstructions(mode, messages, opts.json);
        const format = responseFormatFor(mode, opts.json);
        if (format) req.responseFormat = format;
      }
      try {
        const reply = await this.send(endpoint, req);
        provider.answered();
        return reply;
      } catch (err) {
        const kind = classifyApiError(err, opts.signal).kind;
        if (kind === 'refused' || kind === 'transient') provider.answered();
        const refused = refusalReason(err);
        const reason = refused ? `HTTP ${refused.status} (${refused.message})` : '';
        if (refused && mode && req.responseFormat && refusesResponseFormat(refused.status, refused.message)) {
          if (!provider.auto) throw configuredModeError(target, mode, reason, err as Error);
          tried.push({ mode, reason });
          const next = provider.refused(mode, reason);
          if (next) {
            mode = next;
            continue;
          }
        }
        // After a fallback, any refusal (not a rate limit or a timeout) means no mode works.
        if (tried.length > 0 && refused && mode && (kind === 'refused' || refused.status === 500)) {
          throw structuredOutputError(target, [...tried, { mode, reason }], err as Error);
        }
        throw toLlmError(err, target, opts.signal, () => provider.timedOut(this.settings.timeoutMs));
      }
    }
  }

  /** The reply text; a reply cut off at max_tokens is never returned as if complete. */
  async complete(role: LlmRole, messages: ChatMessage[], opts: CompleteOptions = {}): Promise<string> {
    const reply = await this.chat(role, messages, opts);
    if (reply.finishReason === 'length') throw truncatedError(role, this.target(role), reply.maxTokens, false);
    return reply.content;
  }

  /**
   * Finds the structured-output mode each provider accepts with one small request per mode
   * (only in `auto`); structured calls made meanwhile wait for it. Returns the default
   * provider's status. Never throws.
   */
  async probe(signal?: AbortSignal): Promise<ProviderStatus | undefined> {
    await Promise.all([...this.endpoints.values()].map((endpoint) => this.probeEndpoint(endpoint, signal)));
    return this.provider?.status();
  }

  private async probeEndpoint(endpoint: Endpoint, signal?: AbortSignal): Promise<void> {
    const provider = endpoint.provider;
    if (!provider.auto) return;
    // A model this provider serves: the first role routed to it, else its own or the decomposer's.
    const role = LLM_ROLES.find((r) => this.settings.roles?.[r]?.provider === endpoint.name) ?? 'decomposer';
    const model =
      this.settings.roles?.[role]?.provider === endpoint.name
        ? this.modelFor(role)
        : (endpoint.settings.model ?? this.settings.models.decomposer);
    const run = probeStructuredOutput((req) => this.send(endpoint, { role, ...req, ...(signal ? { signal } : {}) }), model).then(
      (outcome) => {
        if (outcome.mode) provider.detected(outcome.mode, outcome.detail);
        else provider.probeFailed(outcome.detail);
      },
    );
    provider.probing = run;
    try {
      await run;
    } finally {
      provider.probing = undefined;
    }
  }

  /**
   * One chat completion offering tools (the OpenAI tool-calling interface); returns the reply's
   * text and tool calls as sent (arguments unparsed: checking them is the caller's job) and the
   * token usage. It carries the role's max_tokens and keeps to the provider's back-off after a
   * timeout; `finishReason` is the caller's to check (`length`: the reply was cut off).
   */
  async completeWithTools(
    role: LlmRole,
    messages: ToolChatMessage[],
    tools: OpenAI.Chat.ChatCompletionFunctionTool[],
    opts: { signal?: AbortSignal } = {},
  ): Promise<ToolChatReply> {
    const endpoint = this.requireEndpoint(role);
    const provider = endpoint.provider;
    const target = this.target(role);
    const waitMs = provider.busyForMs();
    if (waitMs > 0) throw busyError(target, waitMs, provider.earlierTimeout);
    const body: OpenAI.Chat.ChatCompletionCreateParamsNonStreaming = {
      model: target.model,
      messages,
      max_tokens: this.maxTokensFor(role),
      ...samplingParams(endpoint, this.settings.temperature),
      // One call per step keeps the step budget meaningful; replies with several are handled anyway.
      ...(tools.length ? { tools, tool_choice: 'auto' as const, parallel_tool_calls: false } : {}),
    };
    try {
      const completion = await endpoint.openai.chat.completions.create(body, requestOptions(opts.signal));
      provider.answered();
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
      const kind = classifyApiError(err, opts.signal).kind;
      if (kind === 'refused' || kind === 'transient') provider.answered();
      throw toLlmError(err, target, opts.signal, () => provider.timedOut(this.settings.timeoutMs));
    }
  }
}

/** The SDK's options for one request: the caller's signal, and in batch mode a timeout that
 * lets the call wait for its batch (batch-fetch.ts) on top of its own time. */
function requestOptions(signal: AbortSignal | undefined): { signal?: AbortSignal; timeout?: number } | undefined {
  const batch = currentLlmCallContext()?.batch;
  if (!signal && !batch) return undefined;
  return { ...(signal ? { signal } : {}), ...(batch ? { timeout: batch.waitMs } : {}) };
}

async function waitAtMost(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([work.catch(() => undefined), new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
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
