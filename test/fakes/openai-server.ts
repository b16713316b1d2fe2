// A fake OpenAI-compatible server for tests: real HTTP, real chat-completions wire format,
// replies from scripts (per model) or a handler. The code under test talks to it exactly as it
// would talk to a real provider.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FakeQuota, type FakeLimits } from './openai-quota';
import { errorBody, readBody, sendError, sendJson, sleep } from './fake-http';
import { FakeBatches, type FakeBatchOptions, type LineAnswer } from './openai-batches';

export type { FakeLimits, QuotaRecord } from './openai-quota';
export type { FakeBatchCounts, FakeBatchFault, FakeBatchOptions, FakeBatches } from './openai-batches';

export interface FakeToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface FakeMessage {
  role: string;
  /** '' where the wire had null (an assistant message that only calls tools). */
  content: string;
  tool_calls?: FakeToolCall[];
  tool_call_id?: string;
}

export interface FakeToolDefinition {
  type: string;
  function: { name: string; description?: string; parameters?: Record<string, unknown> };
}

export interface FakeRequest {
  model: string;
  messages: FakeMessage[];
  response_format?: { type: string; json_schema?: { name: string; schema: unknown; strict?: boolean }; schema?: unknown };
  /** The function definitions offered (tool-calling requests). */
  tools?: FakeToolDefinition[];
  body: Record<string, unknown>;
  /** The Authorization header as received. */
  authorization?: string;
  /** When the request arrived (ms since the epoch), e.g. to measure the rate a provider sees. */
  at: number;
  /** The batch whose line this request was; absent for a synchronous request. */
  batch?: string;
}

/** A tool call the fake makes; `arguments` given as an object is sent as its JSON text, a string
 * is sent as is (so a test can send malformed JSON). `id` defaults to a fresh `call_…`. */
export interface ScriptedToolCall {
  name: string;
  arguments: string | Record<string, unknown>;
  id?: string;
}

/** What the fake answers. `delayMs` works with any reply (to provoke client timeouts).
 * `repeat`: the reply stays at the head of its script and answers every later request. */
export type FakeReply =
  /** `finishReason` defaults to `stop` (or `length` when `max_tokens` cuts the content). */
  | { content: string; delayMs?: number; repeat?: boolean; finishReason?: string }
  | { content?: string | null; toolCalls: ScriptedToolCall[]; delayMs?: number; repeat?: boolean }
  | {
      status: number;
      /** Sent as `Retry-After`: seconds, or an HTTP date string. */
      retryAfter?: number | string;
      /** Sent as `retry-after-ms`. */
      retryAfterMs?: number;
      message?: string;
      delayMs?: number;
    }
  /** Drop the connection without answering. */
  | { hangUp: true; delayMs?: number };

export type FakeHandler = (req: FakeRequest) => FakeReply | Promise<FakeReply>;

// ---- embeddings ----

export interface FakeEmbeddingRequest {
  model: string;
  input: string[];
  encoding_format?: string;
  dimensions?: number;
  body: Record<string, unknown>;
  authorization?: string;
}

/** What the fake answers to an embeddings request: the toy embedding (`embed`), or a failure. */
export type FakeEmbeddingReply = { embed: true; delayMs?: number } | Exclude<FakeReply, { content: string }>;

/** Dimensions of the toy embedding when the request does not ask for `dimensions`. */
export const FAKE_EMBEDDING_DIMENSIONS = 32;

function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/**
 * A deterministic toy embedding: every lower-cased word is hashed to one dimension (with a
 * sign), counts are summed and the vector is L2-normalised. Texts sharing words are similar,
 * texts sharing none are orthogonal (up to collisions), so retrieval over it is predictable.
 */
export function toyEmbedding(text: string, dimensions = FAKE_EMBEDDING_DIMENSIONS): Float32Array {
  const v = new Float32Array(dimensions);
  for (const word of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    const h = fnv1a(word);
    v[h % dimensions]! += h & 0x80000000 ? -1 : 1;
  }
  let norm = 0;
  for (const x of v) norm += x * x;
  norm = Math.sqrt(norm);
  if (norm > 0) for (let i = 0; i < v.length; i++) v[i]! /= norm;
  return v;
}

function float32Base64(v: Float32Array): string {
  return Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64');
}

/** Model names tests configure per role; the default brain recognizes them. */
export const FAKE_MODELS = {
  decomposer: 'fake-decomposer',
  formalizer: 'fake-formalizer',
  judge: 'fake-judge',
  agent: 'fake-agent',
} as const;

/** A scripted reply that calls one tool. */
export function toolCall(
  name: string,
  args: string | Record<string, unknown> = {},
  extra: { id?: string; delayMs?: number; repeat?: boolean } = {},
): FakeReply {
  const { id, ...rest } = extra;
  return { content: null, toolCalls: [{ name, arguments: args, ...(id ? { id } : {}) }], ...rest };
}

/** A scripted final answer (no tool call). */
export function answer(content = '{"status": "success"}', extra: { delayMs?: number; repeat?: boolean } = {}): FakeReply {
  return { content, ...extra };
}

/**
 * Behaviours of llama-cpp-python's server (0.3.x) that a real run met (issue 14), each on its own
 * switch. Generation is simulated at `msPerToken`, so even a context-long reply ends in seconds.
 */
export interface LlamaCppBehaviour {
  /** `response_format` of type `json_schema` fails its request validation with HTTP 500; type
   * `json_object` with a `schema` is honoured (constrained decoding: the reply is the JSON). */
  refuseJsonSchema?: boolean;
  /** The chat template has no system role: system messages are dropped, and with them the
   * instructions, so the model answers as one that was told nothing. */
  dropSystem?: boolean;
  /** Free text never ends by itself (a base model): it runs on until `max_tokens`, or, when
   * none is sent, until the context is full; `finish_reason` is then `length`. */
  neverStops?: boolean;
  /** Context window in tokens (prompt and reply); default 6000. */
  contextTokens?: number;
  /** Simulated time per generated token; default 0.5 ms. */
  msPerToken?: number;
}

/** The fake's token count: about four characters a token. */
export function fakeTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** What llama-cpp-python's validation says about `response_format: {type: "json_schema"}`. */
export const LLAMA_CPP_JSON_SCHEMA_ERROR =
  "1 validation error for ChatCompletionRequestResponseFormat\ntype\n  Input should be 'text' or 'json_object' " +
  "[type=literal_error, input_value='json_schema', input_type=str]";

export interface FakeOpenAIOptions {
  /** Behave like llama-cpp-python's server in the ways chosen. */
  llamaCpp?: LlamaCppBehaviour;
  /** Answers requests no script covers; defaults to {@link defaultBrain}. */
  handler?: FakeHandler;
  /** Initial scripts: model name (or `*` for any model) → replies, used in order. */
  script?: Record<string, FakeReply[]>;
  /** When set, requests without `Authorization: Bearer <apiKey>` get HTTP 401. */
  apiKey?: string;
  /** An account's rate limits and a reply latency that grows with the tokens generated
   * (openai-quota.ts): requests over a limit get 429 with OpenAI's headers. */
  limits?: FakeLimits;
  /** The Batch API's pace and faults (openai-batches.ts). */
  batches?: FakeBatchOptions;
}

export interface FakeOpenAI {
  /** Base URL ending in `/v1`. */
  url: string;
  /** Every chat-completions request received, in order, batch lines included (`batch` set). */
  requests: FakeRequest[];
  /** The `usage` of every successful chat completion sent, in order (what a provider bills);
   * `batch` marks a batch line's. */
  usageServed: { model: string; prompt_tokens: number; completion_tokens: number; batch?: string }[];
  /** Every `/v1/embeddings` request received, in order. */
  embeddingRequests: FakeEmbeddingRequest[];
  /** Queues replies for embeddings requests (any model), served before the toy embedding. */
  scriptEmbeddings(...replies: FakeEmbeddingReply[]): void;
  /** Queues replies for a model (or `*`), served before the handler. */
  script(model: string, ...replies: FakeReply[]): void;
  /** Number of requests received for a model. */
  callsTo(model: string): number;
  /** The rate limits in force (with `limits`): what each chat completion was charged and how it
   * ended; `set` changes them from now on. */
  quota: FakeQuota | undefined;
  /** The files and batches endpoints: faults on demand (`failNext`), pace, submission counts. */
  batches: FakeBatches;
  close(): Promise<void>;
}

// ---- the default brain: plausible answers by role, for end-to-end runs ----

type FakeRole = 'decomposer' | 'formalizer' | 'judge' | 'agent';

function roleOf(req: FakeRequest): FakeRole {
  const model = req.model.toLowerCase();
  if (req.tools?.length) return 'agent';
  if (model.includes('decompos')) return 'decomposer';
  if (model.includes('judge')) return 'judge';
  if (model.includes('formaliz')) return 'formalizer';
  // Other model names: go by the schema asked for, then by the instructions.
  const schema = JSON.stringify(req.response_format?.json_schema?.schema ?? req.response_format?.schema ?? '');
  if (schema.includes('subqueries')) return 'decomposer';
  if (schema.includes('grade')) return 'judge';
  // The instructions: the system message, or the first user message they were folded into.
  const system =
    (req.messages.find((m) => m.role === 'system') ?? req.messages.find((m) => m.role === 'user'))?.content.toLowerCase() ?? '';
  if (system.includes('sub-quer')) return 'decomposer';
  if (system.includes('grade')) return 'judge';
  return 'formalizer';
}

function firstUserText(req: FakeRequest): string {
  return req.messages.find((m) => m.role === 'user')?.content ?? '';
}

/** The informal statement inside a prompt: after the last `Statement` heading, if any. */
function statementIn(text: string): string {
  const heading = [...text.matchAll(/^(?:#+[ \t]*)?statement[^\n]*\n+/gim)].at(-1);
  if (!heading) return text.trim();
  const rest = text.slice((heading.index ?? 0) + heading[0].length);
  return rest.split(/\n\s*\n(?=#|[A-Z][\w ]*:)/)[0]!.trim();
}

const CONCEPTS: Array<[RegExp, string, string]> = [
  [/\bprimes?\b/i, 'p is a prime number', 'Nat.Prime p'],
  [/\beven\b/i, 'n is even', 'Even n'],
  [/\bodd\b/i, 'n is odd', 'Odd n'],
  [/\bdivid/i, 'a divides b', 'a ∣ b'],
  [/\bprimitive root/i, 'a is a primitive root modulo p', 'IsPrimitiveRoot a (p - 1)'],
  [/\border\b/i, 'the multiplicative order of a', 'orderOf a'],
  [/\bgroups?\b/i, 'G is a group', 'Group G'],
  [/\bcontinuous/i, 'f is continuous', 'Continuous f'],
  [/\breal\b/i, 'a real number', 'x : ℝ'],
  [/\bintegers?\b/i, 'an integer', 'n : ℤ'],
  [/\bnatural\b/i, 'a natural number', 'n : ℕ'],
  [/\bsum\b/i, 'a finite sum', 'Finset.sum s f'],
  [/\bsquare/i, 'the square of x', 'x ^ 2'],
];

function brainDecompose(req: FakeRequest): string {
  const statement = statementIn(firstUserText(req));
  const subqueries = CONCEPTS.filter(([re]) => re.test(statement)).map(([, phrase, formal]) => ({ phrase, formal }));
  if (subqueries.length === 0) subqueries.push({ phrase: statement.slice(0, 200) || 'the statement', formal: 'Prop' });
  return JSON.stringify({ subqueries });
}

/** A plausible formalization: the statement's main concept as the claim, every other concept
 * it names (CONCEPTS) as a hypothesis, and its numbers kept, so that the default judge finds it
 * faithful; tests that want an unfaithful one script the formalizer. */
function brainFormalize(req: FakeRequest): string {
  const statement = statementIn(firstUserText(req));
  const binders: string[] = [];
  let claim = 'True';
  let main: RegExp | undefined;
  if (/\bprimes?\b/i.test(statement)) {
    binders.push('(p : ℕ)', '(hp : Nat.Prime p)');
    claim = '2 ≤ p';
    main = CONCEPTS[0]![0];
  } else if (/\beven\b/i.test(statement)) {
    binders.push('(n : ℕ)');
    claim = 'Even (2 * n)';
    main = CONCEPTS[1]![0];
  }
  CONCEPTS.filter(([re]) => re !== main && re.test(statement)).forEach(([, , formal], i) => binders.push(`(h${i + 1} : ${formal})`));
  const numbers = [...new Set(statement.match(/\b\d+\b/g) ?? [])].filter((n) => !new RegExp(`(?<![\\d.])${n}(?![\\d.])`).test(claim));
  numbers.forEach((n, i) => binders.push(`(k${i + 1} : (${n} : ℕ) = ${n})`));
  const header = ['theorem fake_formalization', ...binders].join(' ');
  return `Here is the statement.\n\n\`\`\`lean\n${header} : ${claim} := by sorry\n\`\`\``;
}

/** What the formal statement must mention for each concept of the informal one (judge rule). */
const CONCEPT_MARKS: Array<[RegExp, string, RegExp]> = CONCEPTS.map(([re, phrase, formal]) => {
  const head = /^[^\s]+/.exec(formal)![0];
  const mark = head === 'x' || head === 'n' || head === 'a' ? formal.split(/\s+/).at(-1)! : head;
  return [re, phrase, new RegExp(mark.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'u')];
});

/**
 * The judge's rule, on meaning only: every concept the informal statement names (CONCEPTS) must
 * show up in the Lean statement, and so must every number it mentions; the grade is the share
 * that does, out of 10. Whether Lean accepted the statement is deliberately ignored, as a
 * careless model might: the rubric's hard rules are the code's job (enforceVerdict).
 */
export function judgeByRule(informal: string, formal: string): { grade: number; faithful: boolean; explanation: string } {
  // The whole text but the theorem's proof: the definitions before it count, as for a real judge
  // (the theorem's `:=` is the last one; a definition's comes before it).
  const proof = formal.lastIndexOf(':=');
  const signature = proof >= 0 ? formal.slice(0, proof) : formal;
  const wanted: Array<[string, boolean]> = [];
  for (const [re, phrase, mark] of CONCEPT_MARKS) if (re.test(informal)) wanted.push([phrase, mark.test(signature)]);
  for (const n of new Set(informal.match(/\b\d+\b/g) ?? [])) wanted.push([n, new RegExp(`(?<![\\d.])${n}(?![\\d.])`).test(signature)]);
  const missing = wanted.filter(([, found]) => !found).map(([what]) => what);
  const grade = wanted.length === 0 ? 5 : Math.round((10 * (wanted.length - missing.length)) / wanted.length);
  return {
    grade,
    faithful: grade >= 9,
    explanation:
      missing.length === 0 ? 'The Lean statement says the same as the informal one.' : `The Lean statement misses: ${missing.join(', ')}.`,
  };
}

function brainJudge(req: FakeRequest): string {
  const text = firstUserText(req);
  const informal = /informal statement:\s*\n([\s\S]*?)\n\s*\n/i.exec(text)?.[1] ?? statementIn(text);
  const formal = /```lean\n([\s\S]*?)```/.exec(text)?.[1] ?? '';
  return JSON.stringify(judgeByRule(informal, formal));
}

/** The agent without a script: write the file, run Lean if it can, then declare success. */
function brainAgent(req: FakeRequest): FakeReply {
  const first = firstUserText(req);
  const statement = (/Statement to formalize:\n([\s\S]*?)(?:\n\n|$)/.exec(first)?.[1] ?? first).trim();
  const called = req.messages.flatMap((m) => m.tool_calls ?? []).map((c) => c.function.name);
  const offered = new Set((req.tools ?? []).map((t) => t.function.name));
  if (!called.includes('write_file')) {
    const code = brainFormalize({ ...req, messages: [{ role: 'user', content: `Statement:\n${statement}` }] }).replace(
      /^[\s\S]*?```lean\n|```[\s\S]*$/g,
      '',
    );
    return toolCall('write_file', { code: `import Mathlib\n\n${code.trim()}` });
  }
  if (offered.has('run_lean') && called.at(-1) !== 'run_lean') return toolCall('run_lean');
  return answer();
}

/** Answers every role sensibly, so end-to-end tests need no scripts. */
export const defaultBrain: FakeHandler = (req) => {
  switch (roleOf(req)) {
    case 'agent':
      return brainAgent(req);
    case 'decomposer':
      return { content: brainDecompose(req) };
    case 'judge':
      return { content: brainJudge(req) };
    default:
      return { content: brainFormalize(req) };
  }
};

// ---- strict-schema check, as a real provider does it ----

/** Why a strict JSON schema would be refused, or null when it is acceptable. */
function strictSchemaProblem(node: unknown, path = '$'): string | null {
  if (Array.isArray(node)) {
    for (const [i, n] of node.entries()) {
      const p = strictSchemaProblem(n, `${path}[${i}]`);
      if (p) return p;
    }
    return null;
  }
  if (node === null || typeof node !== 'object') return null;
  const obj = node as Record<string, unknown>;
  if (obj.type === 'object' || obj.properties) {
    if (obj.additionalProperties !== false) return `${path}: additionalProperties must be false`;
    const keys = Object.keys((obj.properties ?? {}) as object);
    const required = new Set((obj.required as string[] | undefined) ?? []);
    const missing = keys.filter((k) => !required.has(k));
    if (missing.length) return `${path}: every property must be required (missing ${missing.join(', ')})`;
  }
  for (const [key, value] of Object.entries(obj)) {
    const sub =
      key === 'properties' && value && typeof value === 'object'
        ? (Object.entries(value)
            .map(([k, v]) => strictSchemaProblem(v, `${path}.${k}`))
            .find(Boolean) ?? null)
        : strictSchemaProblem(value, path);
    if (sub) return sub;
  }
  return null;
}

// ---- HTTP ----

/** A scripted hang-up or HTTP error, sent as a real provider would; false for a normal reply. */
function sendScriptedFault<R extends object>(res: ServerResponse, reply: R): reply is Extract<R, { hangUp: true } | { status: number }> {
  if ('hangUp' in reply) {
    res.socket?.destroy();
    return true;
  }
  if ('status' in reply && typeof reply.status === 'number') {
    const r = reply as { status: number; retryAfter?: number | string; retryAfterMs?: number; message?: string };
    const headers: Record<string, string> = {};
    if (r.retryAfter !== undefined) headers['retry-after'] = String(r.retryAfter);
    if (r.retryAfterMs !== undefined) headers['retry-after-ms'] = String(r.retryAfterMs);
    sendError(res, r.status, r.message ?? `Scripted HTTP ${r.status}`, headers);
    return true;
  }
  return false;
}

let completionCounter = 0;
let toolCallCounter = 0;

/** Token counts as a provider reports them (a rough four characters per token). */
function usageOf(request: FakeRequest, reply: string): { prompt_tokens: number; completion_tokens: number; total_tokens: number } {
  const prompt = (JSON.stringify(request.messages).length + JSON.stringify(request.tools ?? []).length) >> 2;
  const completion = reply.length >> 2;
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

const FUNCTION_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** What a real provider refuses in a tool-calling conversation: malformed function
 * definitions, and tool calls left without an answer or answers to calls never made. */
function toolProtocolProblem(req: FakeRequest): string | null {
  for (const [i, tool] of (req.tools ?? []).entries()) {
    if (tool.type !== 'function' || !tool.function || !FUNCTION_NAME.test(tool.function.name ?? '')) {
      return `Invalid 'tools[${i}]': expected a function with a name matching ${FUNCTION_NAME.source}`;
    }
    const params = tool.function.parameters;
    if (params !== undefined && (params as { type?: string }).type !== 'object')
      return `Invalid 'tools[${i}].function.parameters': must be a JSON schema of type object`;
  }
  const messages = req.messages;
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    if (m.role === 'tool') {
      const owner = messages
        .slice(0, i)
        .reverse()
        .find((p) => p.role === 'assistant');
      if (!owner?.tool_calls?.some((c) => c.id === m.tool_call_id)) {
        return `Invalid parameter: messages with role 'tool' must be a response to a preceding message with 'tool_calls' (tool_call_id ${m.tool_call_id}).`;
      }
    }
    if (m.role === 'assistant' && m.tool_calls?.length) {
      const answered = new Set<string>();
      for (let j = i + 1; j < messages.length && messages[j]!.role === 'tool'; j++) answered.add(messages[j]!.tool_call_id ?? '');
      const missing = m.tool_calls.filter((c) => !answered.has(c.id));
      if (missing.length) {
        return `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${missing.map((c) => c.id).join(', ')}`;
      }
    }
  }
  return null;
}

export async function startFakeOpenAI(opts: FakeOpenAIOptions = {}): Promise<FakeOpenAI> {
  const handler = opts.handler ?? defaultBrain;
  const quota = opts.limits ? new FakeQuota(opts.limits) : undefined;
  const queues = new Map<string, FakeReply[]>();
  const requests: FakeRequest[] = [];
  const usageServed: FakeOpenAI['usageServed'] = [];
  const served = (model: string, usage: { prompt_tokens: number; completion_tokens: number }, batch?: string): void => {
    usageServed.push({
      model,
      prompt_tokens: usage.prompt_tokens,
      completion_tokens: usage.completion_tokens,
      ...(batch ? { batch } : {}),
    });
  };
  const script = (model: string, ...replies: FakeReply[]) => {
    queues.set(model, [...(queues.get(model) ?? []), ...replies]);
  };
  for (const [model, replies] of Object.entries(opts.script ?? {})) script(model, ...replies);
  const embeddingRequests: FakeEmbeddingRequest[] = [];
  const embeddingQueue: FakeEmbeddingReply[] = [];

  const answerEmbeddings = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(await readBody(req)) as Record<string, unknown>;
    } catch {
      return sendError(res, 400, 'Request body is not valid JSON');
    }
    const rawInput = body.input;
    const input = typeof rawInput === 'string' ? [rawInput] : Array.isArray(rawInput) ? rawInput : undefined;
    const request: FakeEmbeddingRequest = {
      model: String(body.model ?? ''),
      input: (input ?? []).map(String),
      encoding_format: body.encoding_format as string | undefined,
      dimensions: body.dimensions as number | undefined,
      body,
      authorization: req.headers.authorization,
    };
    embeddingRequests.push(request);
    if (opts.apiKey !== undefined && request.authorization !== `Bearer ${opts.apiKey}`) {
      return sendError(res, 401, 'Incorrect API key provided.');
    }
    if (!input || input.length === 0 || input.some((t) => typeof t !== 'string' || t === '')) {
      return sendError(res, 400, "'input' must be a non-empty string or array of non-empty strings");
    }
    if (request.model === '') return sendError(res, 400, "'model' is required");
    const fmt = request.encoding_format ?? 'float';
    if (fmt !== 'float' && fmt !== 'base64') return sendError(res, 400, `unknown encoding_format '${fmt}'`);
    const reply: FakeEmbeddingReply = embeddingQueue.shift() ?? { embed: true };
    if (reply.delayMs) await sleep(reply.delayMs);
    if (sendScriptedFault(res, reply)) return;
    const dims = request.dimensions ?? FAKE_EMBEDDING_DIMENSIONS;
    const tokens = request.input.reduce((n, t) => n + (t.length >> 2) + 1, 0);
    sendJson(res, 200, {
      object: 'list',
      data: request.input.map((text, index) => {
        const v = toyEmbedding(text, dims);
        return { object: 'embedding', index, embedding: fmt === 'base64' ? float32Base64(v) : Array.from(v) };
      }),
      model: request.model,
      usage: { prompt_tokens: tokens, total_tokens: tokens },
    });
  };

  const take = (queue: FakeReply[] | undefined): FakeReply | undefined => {
    const head = queue?.[0];
    if (head && !('repeat' in head && head.repeat)) queue!.shift();
    return head;
  };
  const next = async (req: FakeRequest): Promise<FakeReply> => take(queues.get(req.model)) ?? take(queues.get('*')) ?? handler(req);

  /** The request as the fake reads a chat-completions body (`batch`: the batch of a batch line). */
  const chatRequest = (body: Record<string, unknown>, authorization: string | undefined, at: number, batch?: string): FakeRequest => ({
    model: String(body.model ?? ''),
    messages: ((Array.isArray(body.messages) ? body.messages : []) as Array<Omit<FakeMessage, 'content'> & { content: string | null }>).map(
      (m) => ({ ...m, content: m.content ?? '' }),
    ),
    response_format: body.response_format as FakeRequest['response_format'],
    ...(body.tools !== undefined ? { tools: body.tools as FakeToolDefinition[] } : {}),
    body,
    authorization,
    at,
    ...(batch !== undefined ? { batch } : {}),
  });

  const llama = opts.llamaCpp;
  /** What a provider refuses before answering: a schema it cannot take, a broken tool protocol. */
  const refusalOf = (request: FakeRequest): { status: number; message: string } | null => {
    const format = request.response_format;
    if (llama?.refuseJsonSchema && format && format.type !== 'text' && format.type !== 'json_object') {
      return { status: 500, message: LLAMA_CPP_JSON_SCHEMA_ERROR };
    }
    if (format?.type === 'json_schema' && format.json_schema?.strict) {
      const problem = strictSchemaProblem(format.json_schema.schema);
      if (problem) return { status: 400, message: `Invalid schema for response_format '${format.json_schema.name}': ${problem}` };
    }
    const protocolProblem = toolProtocolProblem(request);
    return protocolProblem ? { status: 400, message: protocolProblem } : null;
  };

  /** The reply chosen for a request: scripts, then the handler; without a system role in the
   * template, the instructions are gone and the model answers as one told nothing. */
  const replyTo = async (request: FakeRequest): Promise<FakeReply> => {
    const droppedSystem = Boolean(llama?.dropSystem) && request.messages.some((m) => m.role === 'system');
    return droppedSystem ? { content: 'Sure! What would you like me to do?' } : next(request);
  };

  /** The chat.completion for a reply that is no fault, its usage, and how long a llama-cpp
   * server would take to generate it. */
  const completionOf = (
    request: FakeRequest,
    reply: Extract<FakeReply, { content: string } | { toolCalls: ScriptedToolCall[] }>,
  ): {
    completion: Record<string, unknown>;
    usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
    generationMs: number;
  } => {
    const envelope = (
      message: Record<string, unknown>,
      finishReason: string,
      usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number },
    ) => ({
      id: `chatcmpl-fake-${++completionCounter}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: request.model,
      choices: [{ index: 0, message: { role: 'assistant', ...message, refusal: null }, logprobs: null, finish_reason: finishReason }],
      usage,
    });
    if ('toolCalls' in reply) {
      const toolCalls: FakeToolCall[] = reply.toolCalls.map((c) => ({
        id: c.id ?? `call_fake_${++toolCallCounter}`,
        type: 'function',
        function: { name: c.name, arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments) },
      }));
      const usage = usageOf(request, JSON.stringify(toolCalls));
      return {
        completion: envelope({ content: reply.content ?? null, tool_calls: toolCalls }, 'tool_calls', usage),
        usage,
        generationMs: 0,
      };
    }
    const format = request.response_format;
    const promptTokens = fakeTokens(JSON.stringify(request.messages));
    const maxTokens = typeof request.body.max_tokens === 'number' ? request.body.max_tokens : undefined;
    let content = reply.content;
    let finishReason = reply.finishReason ?? 'stop';
    // Constrained decoding ends with the JSON object; free text from a model that never
    // stops runs on until the limit.
    const constrained = llama?.refuseJsonSchema && format?.type === 'json_object' && format.schema !== undefined;
    if (llama?.neverStops && !constrained) {
      const limit = maxTokens ?? Math.max(0, (llama.contextTokens ?? 6000) - promptTokens);
      while (fakeTokens(content) < limit) content += '\nAnd furthermore, as noted above, the statement holds.';
      finishReason = 'length';
    }
    if (maxTokens !== undefined && fakeTokens(content) > maxTokens) {
      content = content.slice(0, maxTokens * 4);
      finishReason = 'length';
    }
    const usage = { ...usageOf(request, content), completion_tokens: fakeTokens(content) };
    const generationMs = llama ? fakeTokens(content) * (llama.msPerToken ?? 0.5) : 0;
    return { completion: envelope({ content }, finishReason, usage), usage, generationMs };
  };

  /** One batch line, answered as the same synchronous request would be (no rate limits, no
   * scripted delays: the batch's own pace stands for them). */
  const answerBatchLine = async (body: Record<string, unknown>, batch: string): Promise<LineAnswer> => {
    const request = chatRequest(body, undefined, Date.now(), batch);
    requests.push(request);
    const refused = refusalOf(request);
    if (refused) return { statusCode: refused.status, body: errorBody(refused.status, refused.message) };
    const reply = await replyTo(request);
    if ('hangUp' in reply) return { statusCode: 500, body: errorBody(500, 'The server had an error while processing your request.') };
    if ('status' in reply)
      return { statusCode: reply.status, body: errorBody(reply.status, reply.message ?? `Scripted HTTP ${reply.status}`) };
    const { completion, usage } = completionOf(request, reply);
    served(request.model, usage, batch);
    return { statusCode: 200, body: completion };
  };
  const batches = new FakeBatches(opts.batches ?? {}, answerBatchLine);

  const server = createServer(async (req, res) => {
    const at = Date.now();
    // A request admitted by the quota that ends without a reply (a scripted fault, a failure):
    // its slot is free again, its charge stands.
    let releaseQuota = () => {};
    try {
      const [path = '', search = ''] = (req.url ?? '').split('?');
      const method = req.method ?? '';
      if (method === 'POST' && path === '/v1/embeddings') return await answerEmbeddings(req, res);
      if (/^\/v1\/(files|batches)(\/|$)/.test(path)) {
        if (opts.apiKey !== undefined && req.headers.authorization !== `Bearer ${opts.apiKey}`) {
          return sendError(res, 401, 'Incorrect API key provided.');
        }
        if (await batches.route(req, res, method, path, new URLSearchParams(search))) return;
      }
      if (method !== 'POST' || path !== '/v1/chat/completions') {
        return sendError(res, 404, `No route for ${req.method} ${req.url}`);
      }
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(await readBody(req)) as Record<string, unknown>;
      } catch {
        return sendError(res, 400, 'Request body is not valid JSON');
      }
      const request = chatRequest(body, req.headers.authorization, at);
      requests.push(request);

      if (opts.apiKey !== undefined && request.authorization !== `Bearer ${opts.apiKey}`) {
        return sendError(res, 401, 'Incorrect API key provided.');
      }
      const refused = refusalOf(request);
      if (refused) return sendError(res, refused.status, refused.message);

      // The account's limits: charged the prompt and max_tokens now, corrected to the usage when
      // done; the reply takes longer the more tokens it generates.
      const requestedMax = typeof body.max_tokens === 'number' ? body.max_tokens : 1024;
      const charge = usageOf(request, '').prompt_tokens + requestedMax;
      let quotaOpen = false;
      if (quota) {
        const admitted = quota.admit(charge, at);
        if (!admitted.ok) return sendError(res, 429, admitted.message, admitted.headers);
        quotaOpen = true;
        releaseQuota = () => {
          if (quotaOpen) quota.release();
          quotaOpen = false;
        };
      }
      const quotaDone = async (usage: { prompt_tokens: number; completion_tokens: number }): Promise<Record<string, string>> => {
        if (!quota || !quotaOpen) return {};
        await sleep(quota.latencyMs(usage.completion_tokens));
        quotaOpen = false;
        return quota.done(charge, usage.prompt_tokens + usage.completion_tokens, at);
      };
      const reply = await replyTo(request);
      if (reply.delayMs) await sleep(reply.delayMs);
      if (sendScriptedFault(res, reply)) return releaseQuota();
      const { completion, usage, generationMs } = completionOf(request, reply);
      if (generationMs) await sleep(generationMs);
      served(request.model, usage);
      const headers = await quotaDone(usage);
      sendJson(res, 200, completion, headers);
    } catch (err) {
      releaseQuota();
      sendError(res, 500, `Fake server failure: ${(err as Error).message}`);
    }
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    usageServed,
    embeddingRequests,
    scriptEmbeddings: (...replies) => void embeddingQueue.push(...replies),
    script,
    callsTo: (model) => requests.filter((r) => r.model === model).length,
    quota,
    batches,
    close: () =>
      new Promise<void>((resolve, reject) => {
        batches.close();
        // Slow scripted replies may still hold sockets open; don't wait for them.
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}
