// The reply cache and the token ledger, as a `fetch` for the OpenAI client: every chat
// completion the service makes passes through here, whatever stage or tool asked for it. A
// request already answered (same provider, model, messages, tools, parameters and sample index)
// is answered from the cache at no cost; identical requests in flight at once are sent once; every
// reply used is recorded with its tokens and price (the batch price for a reply that came back
// through a provider batch, and what it would have cost sent alone). Errors are never cached.
import { isBatchReply } from './batch-fetch';
import { currentLlmCallContext } from './call-context';
import { replyKey } from './reply-key';
import { SingleFlight } from './single-flight';
import { costOf, type PriceTable, type TokenUsage } from './usage';

export interface StoredReply {
  status: number;
  body: string;
}

export interface LlmCallRecord {
  runId: string | null;
  stage: string | null;
  provider: string;
  model: string;
  key: string;
  usage: TokenUsage;
  /** USD actually paid for this call: 0 for a cache hit, undefined when the model has no price. */
  costUsd: number | undefined;
  /** USD the call would have cost sent one at a time: costUsd for a synchronous call, the full
   * price for a batch call, 0 for a cache hit, undefined when the model has no price. */
  costIfSyncUsd: number | undefined;
  cacheHit: boolean;
  /** The reply came back through a provider batch (and costUsd is the batch price). */
  batch: boolean;
}

/** Where replies and calls are kept (the results database). */
export interface ReplyLedger {
  getReply(key: string): Promise<StoredReply | undefined>;
  putReply(key: string, reply: StoredReply): Promise<void>;
  recordCall(call: LlmCallRecord): Promise<void>;
}

export interface MeteredFetchOptions {
  /** Provider identity in keys and records: its base URL. */
  provider: string;
  ledger: ReplyLedger;
  prices?: PriceTable;
  /** The transport underneath (default: global fetch). */
  fetch?: typeof fetch;
}

type Fetch = typeof fetch;

/** A reply as the transport gave it, and whether it came through a provider batch. */
interface Sent {
  reply: StoredReply;
  batch: boolean;
}

/** Token usage as an OpenAI-compatible reply reports it. */
export function usageOf(body: unknown): TokenUsage {
  const u = (body as { usage?: Record<string, unknown> } | null)?.usage ?? {};
  const n = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
  const details = (u.prompt_tokens_details ?? {}) as Record<string, unknown>;
  return { promptTokens: n(u.prompt_tokens), completionTokens: n(u.completion_tokens), cachedTokens: n(details.cached_tokens) };
}

function jsonResponse(reply: StoredReply, headers: Record<string, string> = {}): Response {
  return new Response(reply.body, { status: reply.status, headers: { 'content-type': 'application/json', ...headers } });
}

export function meteredFetch(opts: MeteredFetchOptions): Fetch {
  const inner: Fetch = opts.fetch ?? globalThis.fetch;
  const flights = new SingleFlight<Sent | Response>();
  const prices = opts.prices ?? {};

  return async (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const method = (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase();
    if (method !== 'POST' || !/\/chat\/completions$/.test(new URL(url).pathname) || typeof init?.body !== 'string') {
      return inner(input, init);
    }
    const ctx = currentLlmCallContext();
    const request = JSON.parse(init.body) as Record<string, unknown>;
    const { model, messages, tools, stream: _stream, ...params } = request;
    const key = replyKey({
      provider: opts.provider,
      model: String(model),
      messages: messages as unknown[],
      tools,
      params,
      sample: ctx?.sample ?? 0,
    });
    const useCache = ctx?.cache ?? true;
    const record = (reply: StoredReply, cacheHit: boolean, batch: boolean) => {
      const usage = usageOf(JSON.parse(reply.body));
      const full = cacheHit ? 0 : costOf(String(model), usage, prices);
      return opts.ledger.recordCall({
        runId: ctx?.runId ?? null,
        stage: ctx?.stage ?? null,
        provider: opts.provider,
        model: String(model),
        key,
        usage,
        costUsd: batch ? costOf(String(model), usage, prices, { batch }) : full,
        costIfSyncUsd: full,
        cacheHit,
        batch,
      });
    };

    if (useCache) {
      const hit = await opts.ledger.getReply(key);
      if (hit) {
        await record(hit, true, false);
        return jsonResponse(hit, { 'x-driftline-cache': 'hit' });
      }
    }
    const send = async (): Promise<Sent | Response> => {
      const res = await inner(input, init);
      if (!res.ok) return res;
      const reply = { status: res.status, body: await res.text() };
      if (useCache) await opts.ledger.putReply(key, reply);
      return { reply, batch: isBatchReply(res) };
    };
    // Only cacheable requests share a flight: with the cache off, each caller pays for its own.
    const { result, shared } = useCache ? flights.run(key, send) : { result: send(), shared: false };
    const got = await result;
    if (got instanceof Response) {
      // An error answer is the caller's to see; a shared one is re-sent as a fresh request.
      return shared ? inner(input, init) : got;
    }
    // A caller that shared another's flight paid nothing, whichever way the reply came.
    await record(got.reply, shared, got.batch && !shared);
    return jsonResponse(got.reply, shared ? { 'x-driftline-cache': 'shared' } : {});
  };
}
