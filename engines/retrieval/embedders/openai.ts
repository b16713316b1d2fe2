// An Embedder over any OpenAI-compatible `/v1/embeddings` endpoint (OpenAI's models, a served
// BGE-M3, a local inference server), through the official `openai` client. Texts go in batches;
// failures are classified the way LLM calls are: transient ones (429, 5xx, timeouts, connection
// loss) are retryable engine errors carrying the server's Retry-After, the rest are not.
import OpenAI from 'openai';
import { EMBEDDER_FAILURE } from '../../../common/failures';
import { EngineError } from '../../errors';
import { classifyApiError, retryHint, transientLabel } from '../../llm/api-errors';
import { prefixIdSuffix, type EmbedKind, type Embedder } from '../embedder';

/** Vector sizes of well-known models, so no probe call is needed for them. */
export const KNOWN_DIMENSIONS: Record<string, number> = {
  'text-embedding-3-small': 1536,
  'text-embedding-3-large': 3072,
  'text-embedding-ada-002': 1536,
  'BAAI/bge-m3': 1024,
  'bge-m3': 1024,
  'BAAI/bge-small-en-v1.5': 384,
  'BAAI/bge-base-en-v1.5': 768,
  'BAAI/bge-large-en-v1.5': 1024,
};

/** The instruction BGE v1.5 models want before short retrieval queries (not before documents). */
export const BGE_QUERY_INSTRUCTION = 'Represent this sentence for searching relevant passages: ';

export interface OpenAIEmbedderOptions {
  /** OpenAI-compatible base URL, usually ending in `/v1`. */
  baseURL: string;
  apiKey?: string;
  model: string;
  /** Vector size. Unknown: taken from KNOWN_DIMENSIONS, else probed once by `createOpenAIEmbedder`. */
  dimensions?: number;
  /** Ask the server for this many dimensions (OpenAI's `dimensions` parameter, v3 models only). */
  requestDimensions?: boolean;
  /** Prepended to every query text (BGE-style instruction); documents are sent as they are. */
  queryPrefix?: string;
  /** Prepended to every document text (e5-style `passage: `). */
  documentPrefix?: string;
  /** Texts per request (default 64). */
  batchSize?: number;
  timeoutMs?: number;
  /** Client-side retries; 0 (the default) leaves retrying to Temporal. */
  maxRetries?: number;
  /** `base64` (the default, as OpenAI's client asks) or `float`, for servers without base64. */
  encodingFormat?: 'base64' | 'float';
  /** Texts longer than this many characters are cut (servers reject over-long inputs). */
  maxChars?: number;
}

interface Target {
  model: string;
  baseURL: string;
  timeoutMs: number;
}

type EmbedderFailure = (typeof EMBEDDER_FAILURE)[keyof typeof EMBEDDER_FAILURE];

// Whether a retry can help follows from the type (common/failures.ts).
function failure(type: EmbedderFailure, message: string, cause?: Error, retryAfterMs?: number): EngineError {
  return new EngineError(type, message, { cause, retryAfterMs });
}

/** Maps an error of the `openai` client to an EngineError; cancellation passes through. */
export function toEmbedderError(err: unknown, target: Target, signal?: AbortSignal): unknown {
  const where = `embedding model "${target.model}" at ${target.baseURL}`;
  const e = classifyApiError(err, signal);
  switch (e.kind) {
    case 'cancelled':
    case 'other':
      return e.value;
    case 'timeout':
      return failure(EMBEDDER_FAILURE.unavailable, `Embedding call to ${where} timed out after ${target.timeoutMs} ms`, e.error);
    case 'unreachable':
      return failure(EMBEDDER_FAILURE.unavailable, `Could not reach the embeddings endpoint ${target.baseURL}${e.cause}`, e.error);
    case 'transient':
      return failure(
        EMBEDDER_FAILURE.unavailable,
        `Embeddings endpoint ${transientLabel(e.status)} for ${where}${retryHint(e.delayMs)}${e.detail}`,
        e.error,
        e.delayMs,
      );
    case 'refused':
      if (e.status === 401 || e.status === 403) {
        return failure(
          EMBEDDER_FAILURE.unauthorized,
          `Embeddings endpoint refused the credentials (HTTP ${e.status}) for ${where}: check DRIFTLINE_EMBEDDINGS_API_KEY or OPENAI_API_KEY${e.detail}`,
          e.error,
        );
      }
      if (e.status === 404) {
        return failure(
          EMBEDDER_FAILURE.notFound,
          `Embeddings endpoint or model not found (HTTP 404) for ${where}: check DRIFTLINE_EMBEDDINGS_BASE_URL (it usually ends in /v1) and DRIFTLINE_EMBEDDING_MODEL${e.detail}`,
          e.error,
        );
      }
      return failure(
        EMBEDDER_FAILURE.rejected,
        `Embeddings endpoint rejected the request (HTTP ${e.status}) for ${where}${e.detail}`,
        e.error,
      );
  }
}

/** An `embedding` field as servers send it: base64 of little-endian float32, or numbers. */
export function decodeEmbedding(value: unknown): Float32Array | undefined {
  if (typeof value === 'string') {
    const bytes = Buffer.from(value, 'base64');
    if (bytes.length % 4 !== 0) return undefined;
    const out = new Float32Array(bytes.length / 4);
    for (let i = 0; i < out.length; i++) out[i] = bytes.readFloatLE(i * 4);
    return out;
  }
  if (ArrayBuffer.isView(value) && value instanceof Float32Array) return Float32Array.from(value);
  if (Array.isArray(value) && value.every((x) => typeof x === 'number')) return Float32Array.from(value as number[]);
  return undefined;
}

export class OpenAIEmbedder implements Embedder {
  readonly id: string;
  private readonly client: OpenAI;
  private readonly batchSize: number;
  private readonly target: Target;

  constructor(private readonly opts: OpenAIEmbedderOptions & { dimensions: number }) {
    if (!opts.model) throw new Error('an embedding model name is needed (DRIFTLINE_EMBEDDING_MODEL)');
    this.batchSize = Math.max(1, opts.batchSize ?? 64);
    const timeoutMs = opts.timeoutMs ?? 60_000;
    this.target = { model: opts.model, baseURL: opts.baseURL, timeoutMs };
    this.client = new OpenAI({
      baseURL: opts.baseURL,
      apiKey: opts.apiKey || 'no-key',
      organization: null,
      project: null,
      maxRetries: opts.maxRetries ?? 0,
      timeout: timeoutMs,
    });
    // The prefixes change the vectors, so they are part of the identity.
    this.id = `openai:${opts.model}@${opts.dimensions}${prefixIdSuffix(opts)}`;
  }

  get dimensions(): number {
    return this.opts.dimensions;
  }

  async embed(texts: string[], opts: { kind?: EmbedKind; signal?: AbortSignal } = {}): Promise<Float32Array[]> {
    const prefix = (opts.kind ?? 'document') === 'query' ? (this.opts.queryPrefix ?? '') : (this.opts.documentPrefix ?? '');
    const maxChars = this.opts.maxChars ?? 8000;
    // Servers reject empty strings; a lone space embeds as "nothing" everywhere.
    const prepared = texts.map((t) => (prefix + t).slice(0, maxChars) || ' ');
    const out: Float32Array[] = [];
    for (let i = 0; i < prepared.length; i += this.batchSize) {
      opts.signal?.throwIfAborted();
      out.push(...(await this.embedBatch(prepared.slice(i, i + this.batchSize), opts.signal)));
    }
    return out;
  }

  private async embedBatch(input: string[], signal?: AbortSignal): Promise<Float32Array[]> {
    const format = this.opts.encodingFormat ?? 'base64';
    let data: { index: number; embedding: unknown }[];
    try {
      const res = await this.client.embeddings.create(
        {
          model: this.opts.model,
          input,
          encoding_format: format,
          ...(this.opts.requestDimensions ? { dimensions: this.opts.dimensions } : {}),
        },
        signal ? { signal } : undefined,
      );
      data = res.data as { index: number; embedding: unknown }[];
    } catch (err) {
      throw toEmbedderError(err, this.target, signal);
    }
    const bad = (why: string) =>
      failure(
        EMBEDDER_FAILURE.badReply,
        `Embeddings endpoint ${this.target.baseURL} (model "${this.opts.model}") sent a bad reply: ${why}`,
      );
    if (!Array.isArray(data) || data.length !== input.length) {
      throw bad(`${Array.isArray(data) ? data.length : 'no'} embeddings for ${input.length} inputs`);
    }
    const vectors: (Float32Array | undefined)[] = new Array(input.length);
    for (const [pos, item] of data.entries()) {
      const index = typeof item.index === 'number' ? item.index : pos;
      const v = decodeEmbedding(item.embedding);
      if (!v) throw bad(`embedding ${index} is neither base64 float32 nor an array of numbers`);
      // dimensions 0: not known yet (the probe of createOpenAIEmbedder).
      if (this.opts.dimensions > 0 && v.length !== this.opts.dimensions) {
        throw bad(`embedding ${index} has ${v.length} dimensions, expected ${this.opts.dimensions} (set DRIFTLINE_EMBEDDING_DIMENSIONS)`);
      }
      if (index < 0 || index >= input.length || vectors[index]) throw bad(`index ${index} is out of range or repeated`);
      vectors[index] = v;
    }
    return vectors as Float32Array[];
  }
}

/** Builds the embedder; when the vector size is unknown, one probe call finds it. */
export async function createOpenAIEmbedder(opts: OpenAIEmbedderOptions, signal?: AbortSignal): Promise<OpenAIEmbedder> {
  const known = opts.dimensions ?? KNOWN_DIMENSIONS[opts.model];
  if (known !== undefined) return new OpenAIEmbedder({ ...opts, dimensions: known });
  const probe = new OpenAIEmbedder({ ...opts, dimensions: 0, requestDimensions: false });
  const [v] = await probe.embed(['dimension probe'], { signal });
  return new OpenAIEmbedder({ ...opts, dimensions: v!.length });
}
