// Batch mode as a transport under the reply cache and ledger (metered-fetch.ts): a chat
// completion made for a batch-mode run is not sent; it is handed to its sweep's batcher (the
// mailbox: stored, then signalled) and the call waits until the batch's answer for it is stored,
// then returns that answer as the provider's reply (known to the ledger as a batch reply, which
// it prices at the batch rate). The request's `custom_id` names the run, the stage, the activity
// and the request, and is the same in every retry of the activity: a worker killed while it
// waits comes back to the same request and never makes a second one. A request whose
// resubmissions ran out is sent one at a time. Every other request passes through unchanged.
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { batcherWorkflowId } from '../../common/llm-batch';
import type { BatchRequestRow, CollectedRequest } from '../results/llm-batches';
import { currentLlmCallContext, type BatchCallContext } from './call-context';

/** Where batch requests are handed over and their answers read (activities/llm-batch-mailbox.ts). */
export interface BatchMailbox {
  /** Stores the request (once) and tells its batcher. */
  post(req: CollectedRequest, ctx: BatchCallContext): Promise<void>;
  read(customId: string): Promise<BatchRequestRow | undefined>;
  /** The caller stopped waiting (its run was cancelled). */
  withdraw(customId: string, batcher: string): Promise<void>;
}

export interface BatchFetchOptions {
  /** The provider's name (the batcher is per provider and model). */
  provider: string;
  mailbox: BatchMailbox;
  /** Between reads of the mailbox while a call waits. */
  pollMs: number;
  /** The time of a request sent one at a time (the provider's call timeout). */
  callTimeoutMs: number;
  /** The transport for requests not batched and for synchronous fallbacks. */
  fetch?: typeof fetch;
}

/** The replies this transport made from a batch's answers. A set of objects, not a header: a
 * provider's own reply can carry any header, and must not get itself priced as a batch call. */
const batchReplies = new WeakSet<Response>();

/** A batch's answer as the provider's reply, known to the ledger as a batch call (isBatchReply). */
export function batchReply(body: string): Response {
  const res = new Response(body, { status: 200, headers: { 'content-type': 'application/json' } });
  batchReplies.add(res);
  return res;
}

/** Whether this reply came back through a provider batch (the ledger prices it at the batch factor). */
export function isBatchReply(res: Response): boolean {
  return batchReplies.has(res);
}

/** `custom_id` of a request: readable where it can be, bounded (providers limit its length). */
export function batchCustomId(ctx: BatchCallContext, body: string): string {
  const digest = createHash('sha256').update(body).digest('hex').slice(0, 16);
  const n = ctx.seen.get(digest) ?? 0;
  ctx.seen.set(digest, n + 1);
  const id = `${ctx.requestPrefix}/${digest}${n ? `#${n}` : ''}`;
  if (id.length <= 200) return id;
  // A long run ID: keep its tail readable, and the whole of it in the hash.
  const whole = createHash('sha256').update(id).digest('hex').slice(0, 24);
  return `${whole}:${id.slice(-150)}`;
}

function isChatCompletion(input: Parameters<typeof fetch>[0], init?: RequestInit): boolean {
  const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
  const method = (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase();
  return method === 'POST' && /\/chat\/completions$/.test(new URL(url).pathname) && typeof init?.body === 'string';
}

export function batchFetch(opts: BatchFetchOptions): typeof fetch {
  const inner: typeof fetch = opts.fetch ?? globalThis.fetch;
  return async (input, init) => {
    const ctx = currentLlmCallContext();
    if (!ctx?.batch || !isChatCompletion(input, init)) return inner(input, init);
    const batch = ctx.batch;
    const body = init!.body as string;
    const model = String((JSON.parse(body) as { model?: unknown }).model ?? '');
    const customId = batchCustomId(batch, body);
    const batcher = batcherWorkflowId(batch.sweep, opts.provider, model);
    const signal = init?.signal ?? undefined;

    let row = await opts.mailbox.read(customId);
    // Still only collected: an earlier attempt may have stored it but died (or met the server
    // down) before its batcher was told, so tell it again; a batcher that holds it ignores this.
    if (!row || row.state === 'withdrawn' || row.state === 'collected') {
      await opts.mailbox.post(
        {
          customId,
          sweep: batch.sweep,
          batcher,
          provider: opts.provider,
          model,
          runId: ctx.runId ?? '',
          stage: ctx.stage ?? '',
          body,
        },
        batch,
      );
      row = { state: 'collected', reply: null, error: null, submissions: 0 };
    }
    for (;;) {
      if (row?.state === 'answered' && row.reply !== null) {
        return batchReply(row.reply);
      }
      // One at a time, within one call's own time (the SDK's timeout is the batch wait's).
      if (row?.state === 'synchronous') {
        const timeout = AbortSignal.timeout(opts.callTimeoutMs);
        return inner(input, { ...init, signal: signal ? AbortSignal.any([signal, timeout]) : timeout });
      }
      try {
        await sleep(opts.pollMs, undefined, signal ? { signal } : {});
      } catch (err) {
        // Cancelled (or the call's own timeout): the batcher need not keep the request for us.
        await opts.mailbox.withdraw(customId, batcher).catch(() => undefined);
        throw err;
      }
      row = await opts.mailbox.read(customId);
    }
  };
}
