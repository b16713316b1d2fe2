// A chat model running on this machine: a GGUF file through node-llama-cpp (llama.cpp's CPU
// build, prebuilt in the npm package; nothing is compiled or downloaded at run time). It answers
// the same requests as an OpenAI-compatible endpoint — messages, a JSON schema, max tokens,
// temperature, seed — and a JSON schema becomes a grammar, so a structured reply is valid JSON
// of that shape by construction (when it is not cut off by max tokens: `finishReason: 'length'`,
// as a server would say). One request at a time per model: on two cores parallel decoding only
// slows every request down.
import type { Llama, LlamaContext, LlamaModel } from 'node-llama-cpp';

export interface LocalChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface LocalChatRequest {
  messages: LocalChatMessage[];
  /** A JSON schema the reply must follow (grammar-constrained decoding). */
  jsonSchema?: Record<string, unknown>;
  maxTokens: number;
  temperature?: number;
  seed?: number;
  signal?: AbortSignal;
}

export interface LocalChatReply {
  content: string;
  /** `stop` (the model ended its answer) or `length` (cut off at maxTokens). */
  finishReason: 'stop' | 'length';
  usage: { promptTokens: number; completionTokens: number };
}

export interface LocalGgufOptions {
  modelPath: string;
  /** Tokens of context; default 4096. */
  contextSize?: number;
  /** CPU threads; default: all cores. */
  threads?: number;
}

export class LocalModelError extends Error {}

/** The one way into node-llama-cpp; loaded lazily so processes that never use it pay nothing. */
export class LocalGgufChat {
  private loaded?: Promise<{ llama: Llama; model: LlamaModel; context: LlamaContext }>;
  private queue: Promise<unknown> = Promise.resolve();
  private readonly grammars = new Map<string, Promise<unknown>>();

  constructor(readonly options: LocalGgufOptions) {}

  /** A label for messages and accounting: `local:<file name>`. */
  get id(): string {
    return `local:${this.options.modelPath.split('/').pop()}`;
  }

  private load() {
    this.loaded ??= (async () => {
      const { getLlama } = await import('node-llama-cpp');
      try {
        // `build: 'never'`: use the prebuilt binary or fail; never compile or fetch at run time.
        const llama = await getLlama({ gpu: false, build: 'never', logLevel: 'error' as never });
        const model = await llama.loadModel({ modelPath: this.options.modelPath });
        const context = await model.createContext({
          contextSize: this.options.contextSize ?? 4096,
          sequences: 1,
          ...(this.options.threads ? { threads: this.options.threads } : {}),
        });
        return { llama, model, context };
      } catch (err) {
        throw new LocalModelError(`cannot load the local model ${this.options.modelPath}: ${(err as Error).message}`);
      }
    })();
    this.loaded.catch(() => (this.loaded = undefined));
    return this.loaded;
  }

  private grammarFor(llama: Llama, schema: Record<string, unknown>): Promise<unknown> {
    const key = JSON.stringify(schema);
    let g = this.grammars.get(key);
    if (!g) {
      g = llama.createGrammarForJsonSchema(toGbnfSchema(schema) as never);
      this.grammars.set(key, g);
      g.catch(() => this.grammars.delete(key));
    }
    return g;
  }

  /** One chat completion. Requests queue behind each other. */
  complete(req: LocalChatRequest): Promise<LocalChatReply> {
    const run = this.queue.then(() => this.completeNow(req));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async completeNow(req: LocalChatRequest): Promise<LocalChatReply> {
    req.signal?.throwIfAborted();
    const { llama, context } = await this.load();
    const { LlamaChatSession } = await import('node-llama-cpp');
    const last = req.messages.at(-1);
    if (!last || last.role !== 'user') throw new LocalModelError('a chat request must end with a user message');
    const sequence = context.getSequence();
    try {
      const session = new LlamaChatSession({ contextSequence: sequence, autoDisposeSequence: false });
      session.setChatHistory(
        req.messages.slice(0, -1).map((m) =>
          m.role === 'assistant' ? { type: 'model' as const, response: [m.content] } : m.role === 'system' ? { type: 'system' as const, text: m.content } : { type: 'user' as const, text: m.content },
        ),
      );
      const before = { input: sequence.tokenMeter.usedInputTokens, output: sequence.tokenMeter.usedOutputTokens };
      const grammar = req.jsonSchema ? await this.grammarFor(llama, req.jsonSchema) : undefined;
      const r = await session.promptWithMeta(last.content, {
        maxTokens: req.maxTokens,
        ...(req.temperature !== undefined ? { temperature: req.temperature } : {}),
        ...(req.seed !== undefined ? { seed: req.seed } : {}),
        ...(grammar ? { grammar: grammar as never } : {}),
        ...(req.signal ? { signal: req.signal } : {}),
      });
      session.dispose({ disposeSequence: false });
      return {
        content: r.responseText,
        finishReason: r.stopReason === 'maxTokens' ? 'length' : 'stop',
        usage: {
          promptTokens: sequence.tokenMeter.usedInputTokens - before.input,
          completionTokens: sequence.tokenMeter.usedOutputTokens - before.output,
        },
      };
    } finally {
      sequence.dispose();
    }
  }

  async close(): Promise<void> {
    const l = this.loaded;
    this.loaded = undefined;
    if (l) await (await l.catch(() => undefined))?.llama.dispose();
  }
}

/** Keywords llama.cpp's JSON-schema grammar does not take; zod still checks them afterwards. */
const DROPPED = new Set(['$schema', 'strict', 'title', 'description', 'default', 'examples']);

const GRAMMAR_MAX_ITEMS = 12;
const GRAMMAR_MAX_STRING = 400;

/** Our strict JSON schemas, reduced to what node-llama-cpp turns into a grammar. */
export function toGbnfSchema(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(toGbnfSchema);
  if (node === null || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) {
    if (DROPPED.has(k)) continue;
    // A grammar cannot count to 10 in integers cheaply; bounds are validated after the reply.
    if (k === 'minimum' || k === 'maximum' || k === 'exclusiveMinimum' || k === 'exclusiveMaximum') continue;
    out[k] = k === 'properties' ? Object.fromEntries(Object.entries(v as object).map(([p, s]) => [p, toGbnfSchema(s)])) : toGbnfSchema(v);
  }
  // A small model may add array items or string characters until max tokens runs out; bound
  // them in the grammar (generously: zod's own limits, if any, still apply afterwards).
  if (out.type === 'array' && out.maxItems === undefined) out.maxItems = GRAMMAR_MAX_ITEMS;
  if (out.type === 'string' && out.maxLength === undefined) out.maxLength = GRAMMAR_MAX_STRING;
  return out;
}
