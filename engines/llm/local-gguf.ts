// A chat model running on this machine: a GGUF file through node-llama-cpp (llama.cpp's CPU
// build, prebuilt in its npm packages; nothing is compiled or downloaded at run time). It answers
// the same requests as an OpenAI-compatible endpoint — messages, a JSON schema, max tokens,
// temperature, seed — and a JSON schema becomes a grammar, so a structured reply is JSON of that
// shape by construction (unless cut off by max tokens: `finishReason: 'length'`, as a server
// would say). Requests run one at a time on one context sequence: on a small CPU, decoding two
// at once only slows both down.
import type { Llama, LlamaContext, LlamaGrammar, LlamaModel } from 'node-llama-cpp';

export interface LocalChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface LocalChatRequest {
  messages: LocalChatMessage[];
  /** A JSON schema the reply must follow (grammar-constrained decoding). */
  jsonSchema?: Record<string, unknown>;
  /** A GBNF grammar for a free-text reply (used when there is no jsonSchema). */
  grammar?: string;
  maxTokens: number;
  temperature?: number;
  seed?: number;
  signal?: AbortSignal;
}

export interface LocalChatReply {
  content: string;
  /** `stop` (the model ended its answer) or `length` (cut off at maxTokens). */
  finishReason: 'stop' | 'length';
  /** Tokens the model read and wrote for this request, from llama.cpp's own counts. */
  usage: { promptTokens: number; completionTokens: number };
}

export interface LocalGgufOptions {
  modelPath: string;
  /** Tokens of context (prompt and reply together); default 4096. */
  contextSize?: number;
  /** CPU threads; default 1. llama.cpp's threads wait for each other by spinning, so on a busy
   * machine two threads on two cores ran 16 times slower than one (measured here). */
  threads?: number;
  /** Bounds put into every grammar, so a small model cannot ramble until max tokens. */
  grammarBounds?: GrammarBounds;
}

export interface GrammarBounds {
  /** Characters of a string that has no maxLength of its own. */
  maxString: number;
  /** Items of an array that has no maxItems of its own. */
  maxItems: number;
}

export const DEFAULT_GRAMMAR_BOUNDS: GrammarBounds = { maxString: 400, maxItems: 12 };

export class LocalModelError extends Error {}

/** The prompt and the reply's max tokens do not fit in the context (a server's 400). */
export class LocalContextError extends LocalModelError {}

interface Loaded {
  llama: Llama;
  model: LlamaModel;
  context: LlamaContext;
}

/** The one way into node-llama-cpp; loaded lazily, so processes that never use it pay nothing. */
export class LocalGgufChat {
  private loaded?: Promise<Loaded>;
  private queue: Promise<unknown> = Promise.resolve();
  private readonly grammars = new Map<string, Promise<LlamaGrammar>>();

  constructor(readonly options: LocalGgufOptions) {}

  /** A label for messages and accounting: `local:<file name>`. */
  get id(): string {
    return `local:${this.options.modelPath.split('/').pop()}`;
  }

  private load(): Promise<Loaded> {
    this.loaded ??= (async () => {
      const { getLlama, LlamaLogLevel } = await import('node-llama-cpp');
      const threads = this.options.threads ?? 1;
      try {
        // `build: 'never'`: the prebuilt binary or a clear failure; never a compile or a download.
        const llama = await getLlama({ gpu: false, build: 'never', logLevel: LlamaLogLevel.error, maxThreads: threads });
        const model = await llama.loadModel({ modelPath: this.options.modelPath });
        const context = await model.createContext({ contextSize: this.options.contextSize ?? 4096, sequences: 1, threads });
        return { llama, model, context };
      } catch (err) {
        throw new LocalModelError(`cannot load the local model ${this.options.modelPath}: ${(err as Error).message}`);
      }
    })();
    this.loaded.catch(() => (this.loaded = undefined));
    return this.loaded;
  }

  /** The grammar for a schema, sized so that the JSON ends within `maxTokens`. */
  private grammarFor(llama: Llama, schema: Record<string, unknown>, maxTokens: number): Promise<LlamaGrammar> {
    const bounds = fitGrammarBounds(schema, maxTokens, this.options.grammarBounds);
    const key = JSON.stringify([schema, bounds]);
    let g = this.grammars.get(key);
    if (!g) {
      g = llama.createGrammarForJsonSchema(toGrammarSchema(schema, bounds) as never) as Promise<LlamaGrammar>;
      this.grammars.set(key, g);
      g.catch(() => this.grammars.delete(key));
    }
    return g;
  }

  private gbnf(llama: Llama, text: string): Promise<LlamaGrammar> {
    let g = this.grammars.get(text);
    if (!g) {
      g = llama.createGrammar({ grammar: text });
      this.grammars.set(text, g);
      g.catch(() => this.grammars.delete(text));
    }
    return g;
  }

  /** One chat completion; requests wait for the one before them. */
  complete(req: LocalChatRequest): Promise<LocalChatReply> {
    const run = this.queue.then(() => this.completeNow(req));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async completeNow(req: LocalChatRequest): Promise<LocalChatReply> {
    req.signal?.throwIfAborted();
    const last = req.messages.at(-1);
    if (!last || last.role !== 'user') throw new LocalModelError('a chat request must end with a user message');
    const { llama, model, context } = await this.load();
    const { LlamaChatSession } = await import('node-llama-cpp');
    const grammar = req.jsonSchema
      ? await this.grammarFor(llama, req.jsonSchema, req.maxTokens)
      : req.grammar
        ? await this.gbnf(llama, req.grammar)
        : undefined;
    // A fresh sequence per request: no state carries over from one request to the next, and its
    // token meter counts exactly this request. Its disposal is awaited: the context takes the
    // sequence back asynchronously, and the next request needs it.
    const sequence = context.getSequence();
    try {
      const session = new LlamaChatSession({ contextSequence: sequence, autoDisposeSequence: false });
      try {
        const history = req.messages
          .slice(0, -1)
          .map((m) =>
            m.role === 'assistant'
              ? { type: 'model' as const, response: [m.content] }
              : m.role === 'system'
                ? { type: 'system' as const, text: m.content }
                : { type: 'user' as const, text: m.content },
          );
        // A prompt that does not fit would be cut from the front without a word (the system
        // prompt first); refuse it as a server does, with the numbers.
        const { contextText } = session.chatWrapper.generateContextState({
          chatHistory: [...history, { type: 'user', text: last.content }, { type: 'model', response: [] }],
        });
        const promptTokens = contextText.tokenize(model.tokenizer).length;
        if (promptTokens + req.maxTokens > context.contextSize) {
          throw new LocalContextError(
            `the prompt (${promptTokens} tokens) and max_tokens (${req.maxTokens}) do not fit in the local model's context of ${context.contextSize} tokens: raise DRIFTLINE_LOCAL_LLM_CONTEXT or lower the role's max tokens`,
          );
        }
        session.setChatHistory(history);
        const r = await session.promptWithMeta(last.content, {
          maxTokens: req.maxTokens,
          ...(req.temperature !== undefined ? { temperature: req.temperature } : {}),
          ...(req.seed !== undefined ? { seed: req.seed } : {}),
          ...(grammar ? { grammar } : {}),
          ...(req.signal ? { signal: req.signal } : {}),
        });
        return {
          content: r.responseText,
          finishReason: r.stopReason === 'maxTokens' ? 'length' : 'stop',
          usage: { promptTokens: sequence.tokenMeter.usedInputTokens, completionTokens: sequence.tokenMeter.usedOutputTokens },
        };
      } finally {
        session.dispose({ disposeSequence: false });
      }
    } finally {
      await sequence.dispose();
    }
  }

  async close(): Promise<void> {
    const l = this.loaded;
    this.loaded = undefined;
    this.grammars.clear();
    if (l) await (await l.catch(() => undefined))?.llama.dispose();
  }
}

/** Tokens after the JSON: node-llama-cpp's JSON grammar ends in four newlines, its stop signal. */
const STOP_TOKENS = 4;
/** Strings shorter than this are not worth keeping more array items for. */
const USEFUL_STRING = 64;

/**
 * Grammar bounds under which a reply of this schema cannot outgrow `maxTokens`, so decoding ends
 * with complete JSON rather than being cut off. Counted at worst one character per token (a token
 * is at least one character; in practice three or four); only a reply full of escapes such as
 * \u00e9 could still be cut off, and is then reported `length`, as any server would. Array items
 * are given up before strings get shorter than USEFUL_STRING; the configured bounds are never
 * exceeded.
 */
export function fitGrammarBounds(schema: unknown, maxTokens: number, limit: GrammarBounds = DEFAULT_GRAMMAR_BOUNDS): GrammarBounds {
  const budget = maxTokens - STOP_TOKENS;
  // The longest string bound that fits with n items (0: none does); the size grows with it.
  const longest = (n: number) => {
    let lo = 0;
    let hi = limit.maxString;
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      if (worstCaseChars(schema, { maxString: mid, maxItems: n }, 0) <= budget) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  };
  const minItems = Math.max(1, minItemsIn(schema));
  for (let n = limit.maxItems; n >= minItems; n--) {
    const s = longest(n);
    if (s >= Math.min(USEFUL_STRING, limit.maxString)) return { maxString: s, maxItems: n };
  }
  return { maxString: Math.max(1, longest(minItems)), maxItems: Math.min(limit.maxItems, minItems) };
}

function minItemsIn(node: unknown): number {
  if (!node || typeof node !== 'object') return 0;
  const own = Number((node as Record<string, unknown>).minItems ?? 0);
  return Math.max(own, ...Object.values(node as object).map(minItemsIn));
}

/** The most characters JSON of `node` can take under the grammar toGrammarSchema builds. */
function worstCaseChars(node: unknown, bounds: GrammarBounds, depth: number): number {
  if (!node || typeof node !== 'object') return 0;
  const g = toGrammarSchema(node, bounds) as Record<string, unknown>;
  const indent = 1 + 4 * (depth + 1); // a newline and the indentation the grammar may add
  if (Array.isArray(g.enum)) return Math.max(...g.enum.map((v) => JSON.stringify(v).length));
  if (g.const !== undefined) return JSON.stringify(g.const).length;
  switch (g.type) {
    case 'string':
      return 2 + Number(g.maxLength ?? bounds.maxString);
    case 'integer':
      return 20;
    case 'number':
      return 32;
    case 'boolean':
      return 5;
    case 'null':
      return 4;
    case 'array': {
      const item = worstCaseChars((node as Record<string, unknown>).items, bounds, depth + 1);
      return 2 + indent + Number(g.maxItems ?? bounds.maxItems) * (item + indent + 1);
    }
    case 'object': {
      const props = Object.entries(((node as Record<string, unknown>).properties ?? {}) as Record<string, unknown>);
      return (
        2 +
        indent +
        props.reduce((sum, [k, v]) => sum + JSON.stringify(k).length + 2 + worstCaseChars(v, bounds, depth + 1) + indent + 1, 0)
      );
    }
    default:
      return 200;
  }
}

/** Keywords llama.cpp's JSON-schema grammar does not take; zod still checks the reply after. */
const DROPPED = new Set(['$schema', 'strict', 'title', 'description', 'default', 'examples']);
const BOUNDS = new Set(['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum']);

/** A small integer range a grammar can list; wider ones are left to zod. */
const MAX_LISTED_INTEGERS = 32;

/**
 * Our strict JSON schemas (strict-json-schema.ts), made into what node-llama-cpp turns into a grammar
 * that keeps a small model inside them. Every change only narrows what the grammar allows, so
 * whatever it lets through is still valid under the original schema: a small integer range
 * becomes an enum (a grammar cannot compare numbers), strings are never empty and have a length
 * limit, arrays an item limit.
 */
export function toGrammarSchema(node: unknown, bounds: GrammarBounds = DEFAULT_GRAMMAR_BOUNDS): unknown {
  if (Array.isArray(node)) return node.map((n) => toGrammarSchema(n, bounds));
  if (node === null || typeof node !== 'object') return node;
  const src = node as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(src)) {
    if (DROPPED.has(k) || BOUNDS.has(k)) continue;
    out[k] =
      k === 'properties' || k === '$defs'
        ? Object.fromEntries(Object.entries(v as object).map(([p, s]) => [p, toGrammarSchema(s, bounds)]))
        : toGrammarSchema(v, bounds);
  }
  if (out.type === 'integer') {
    const lo = typeof src.minimum === 'number' ? Math.ceil(src.minimum) : undefined;
    const hi = typeof src.maximum === 'number' ? Math.floor(src.maximum) : undefined;
    if (lo !== undefined && hi !== undefined && hi >= lo && hi - lo < MAX_LISTED_INTEGERS) {
      return { enum: Array.from({ length: hi - lo + 1 }, (_, i) => lo + i) };
    }
  }
  if (out.type === 'string' && out.enum === undefined && out.const === undefined && out.format === undefined) {
    out.minLength = Math.max(1, Number(out.minLength ?? 1));
    out.maxLength = Math.max(out.minLength as number, Math.min(Number(out.maxLength ?? bounds.maxString), bounds.maxString));
  }
  if (out.type === 'array') {
    const min = Number(out.minItems ?? 0);
    out.maxItems = Math.max(min, Math.min(Number(out.maxItems ?? bounds.maxItems), bounds.maxItems));
  }
  return out;
}
