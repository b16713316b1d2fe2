// The provider's quota, as a `fetch` under the reply cache (so a cached reply costs nothing):
// before a chat completion is sent it takes its estimated tokens (prompt + max_tokens), a request
// and a slot from the provider's shared budget (budget.ts), waiting for them if need be; after the
// reply it gives back what the reply's usage did not use, and tells the budget what the provider's
// rate-limit headers and 429s said. Within one process the waiting requests queue in order and
// only the head asks the shared store, so the store sees a few steps per request, not a storm.
import { randomUUID } from 'node:crypto';
import { settle, take, type Binding, type BudgetStore, type Outcome, type ProviderLimits, type Slot } from './budget';
import { usageOf } from './metered-fetch';
import { readRateLimitHeaders } from './rate-limit-headers';

export interface BudgetedFetchOptions {
  /** The provider's name: its budget's key in the store. */
  provider: string;
  limits: ProviderLimits;
  store: BudgetStore;
  /** Longest wait for the budget before the request is answered with a local 429 whose
   * Retry-After is the wait still expected (Temporal then retries the activity later). */
  maxWaitMs: number;
  /** The call's own time once admitted: the request is aborted (as a timeout) after it. The
   * client's timeout is this plus maxWaitMs, so waiting never eats the call's time. */
  callTimeoutMs?: number;
  /** How long a slot is held at most if never given back (a killed process). */
  leaseMs: number;
  /** The transport underneath (default: global fetch). */
  fetch?: typeof fetch;
  /** Told when a request waited for the budget, and about each 429 the provider sent. */
  onEvent?: (event: BudgetEvent) => void;
}

export type BudgetEvent =
  { kind: 'waited'; provider: string; waitedMs: number; binding: Binding } | { kind: 'throttled'; provider: string; retryAfterMs?: number };

/** Marks the 429 a budget answers itself when the wait would be too long. */
export const LOCAL_BUDGET_HEADER = 'x-driftline-budget';

/** Tokens a request may use: its prompt (about four characters a token, counted on the JSON the
 * provider receives, so on the high side) plus the most it may generate. Corrected afterwards from
 * the reply's usage. */
export function estimateTokens(body: Record<string, unknown>): number {
  const prompt = Math.ceil((JSON.stringify(body.messages ?? []).length + JSON.stringify(body.tools ?? []).length) / 4);
  const max = body.max_tokens ?? body.max_completion_tokens;
  return prompt + (typeof max === 'number' && Number.isFinite(max) && max > 0 ? max : 1024);
}

const abortError = () => new DOMException('This operation was aborted', 'AbortError');

/** The requests of one process waiting for one provider's budget, served in order. */
class LocalQueue {
  private tail: Promise<unknown> = Promise.resolve();
  private wake: (() => void) | undefined;

  /** Runs `fn` when every earlier caller's turn is over. */
  turn<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.tail.then(fn);
    this.tail = run.catch(() => undefined);
    return run;
  }

  /** Sleeps `ms`, or less when a slot of this process is given back. */
  sleep(ms: number, signal?: AbortSignal | null): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(abortError());
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        this.wake = undefined;
        resolve();
      };
      const onAbort = () => {
        done();
        reject(abortError());
      };
      const timer = setTimeout(done, ms);
      this.wake = done;
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  released(): void {
    this.wake?.();
  }
}

export function budgetedFetch(opts: BudgetedFetchOptions): typeof fetch {
  const inner = opts.fetch ?? globalThis.fetch;
  const queue = new LocalQueue();

  const acquire = (tokens: number, signal: AbortSignal | null | undefined): Promise<Slot | { waitMs: number }> => {
    // The wait counts from arrival: time queued behind this process's earlier requests too.
    const started = Date.now();
    return queue.turn(async () => {
      let binding: Binding | undefined;
      for (;;) {
        if (signal?.aborted) throw abortError();
        const id = randomUUID();
        const got = await opts.store.update(opts.provider, (s, now) => take(s, opts.limits, { tokens, leaseMs: opts.leaseMs, id }, now));
        if (got.granted) {
          if (binding) opts.onEvent?.({ kind: 'waited', provider: opts.provider, waitedMs: Date.now() - started, binding });
          return got.slot;
        }
        binding = got.binding;
        const waited = Date.now() - started;
        if (waited + got.waitMs > opts.maxWaitMs) return { waitMs: got.waitMs };
        await queue.sleep(Math.max(1, got.waitMs), signal);
      }
    });
  };

  const finish = async (slot: Slot, outcome: Outcome) => {
    try {
      await opts.store.update(opts.provider, (s, now) => settle(s, opts.limits, slot, outcome, now));
    } finally {
      queue.released();
    }
  };

  return async (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const method = (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase();
    if (method !== 'POST' || !/\/chat\/completions$/.test(new URL(url).pathname) || typeof init?.body !== 'string') {
      return inner(input, init);
    }
    const estimatedTokens = estimateTokens(JSON.parse(init.body) as Record<string, unknown>);
    const got = await acquire(estimatedTokens, init.signal);
    if (!('id' in got)) {
      // Waiting longer would eat the call's own time: the activity is retried after the wait.
      const seconds = Math.max(1, Math.ceil(got.waitMs / 1000));
      const message = `driftline's shared budget for LLM provider "${opts.provider}" has no room for ${Math.ceil(got.waitMs / 1000)} s; retrying then`;
      return new Response(JSON.stringify({ error: { message, type: 'rate_limit_exceeded', param: null, code: 'driftline_budget' } }), {
        status: 429,
        headers: { 'content-type': 'application/json', 'retry-after': String(seconds), [LOCAL_BUDGET_HEADER]: 'wait' },
      });
    }
    let res: Response;
    const call = new AbortController();
    const onAbort = () => call.abort(abortError());
    init.signal?.addEventListener('abort', onAbort, { once: true });
    if (init.signal?.aborted) onAbort();
    const timer = opts.callTimeoutMs !== undefined ? setTimeout(onAbort, opts.callTimeoutMs) : undefined;
    try {
      res = await inner(input, { ...init, signal: call.signal });
    } catch (err) {
      await finish(got, { kind: 'failed', estimatedTokens, headers: {} });
      throw err;
    } finally {
      clearTimeout(timer);
      init.signal?.removeEventListener('abort', onAbort);
    }
    const headers = readRateLimitHeaders(res.headers);
    if (res.status === 429) {
      opts.onEvent?.({
        kind: 'throttled',
        provider: opts.provider,
        ...(headers.retryAfterMs !== undefined ? { retryAfterMs: headers.retryAfterMs } : {}),
      });
      await finish(got, { kind: 'throttled', estimatedTokens, headers });
      return res;
    }
    if (!res.ok) {
      await finish(got, { kind: 'failed', estimatedTokens, headers });
      return res;
    }
    let text: string;
    try {
      text = await res.text();
    } catch (err) {
      await finish(got, { kind: 'failed', estimatedTokens, headers });
      throw err;
    }
    let usedTokens: number | undefined;
    try {
      const usage = usageOf(JSON.parse(text));
      const total = usage.promptTokens + usage.completionTokens;
      if (total > 0) usedTokens = total;
    } catch {
      // Not JSON: the SDK will say so; the estimate stands.
    }
    await finish(got, { kind: 'answered', estimatedTokens, ...(usedTokens !== undefined ? { usedTokens } : {}), headers });
    return new Response(text, { status: res.status, statusText: res.statusText, headers: res.headers });
  };
}
