// The batcher of one sweep, provider and model (common/llm-batch.ts): the runs' LLM calls are
// signalled here as they are made; it collects them, flushes a batch to the provider when enough
// are collected or the oldest has waited long enough, looks at each batch in flight on a durable
// timer, and when a batch ends has its answers written where the waiting calls read them. What
// is collected and what is in flight lives in this workflow's state, so a crash of any worker or
// of the server loses nothing, and the flush's ID (asked of the provider before a batch is made)
// keeps a retried submission from making a second batch. Lines that fail are collected again, up
// to the sweep's limit, then handed back to their callers to send one at a time.
import {
  ActivityFailure,
  condition,
  continueAsNew,
  defineQuery,
  defineSignal,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  sleep,
  workflowInfo,
} from '@temporalio/workflow';
import {
  batchEnded,
  LLM_BATCH_SIGNALS,
  type BatcherInput,
  type BatcherState,
  type BatchInFlightState,
  type LlmBatchActivities,
} from '../common/llm-batch';
import { NON_RETRYABLE_TYPES } from '../common/failures';

export const llmBatchCollectSignal = defineSignal<[{ customId: string }]>(LLM_BATCH_SIGNALS.collect);
export const llmBatchWithdrawSignal = defineSignal<[{ customId: string }]>(LLM_BATCH_SIGNALS.withdraw);
/** The sweep was cancelled: its batches are cancelled at the provider and the batcher ends. */
export const llmBatchCancelSignal = defineSignal(LLM_BATCH_SIGNALS.cancel);
export const llmBatcherStateQuery = defineQuery<BatcherState>('llmBatcherState');

// Provider calls are few and small; a provider that is down is waited for, with backoff.
const provider = proxyActivities<LlmBatchActivities>({
  startToCloseTimeout: '10m',
  heartbeatTimeout: '20s',
  retry: { initialInterval: '2s', backoffCoefficient: 2, maximumInterval: '5m', nonRetryableErrorTypes: NON_RETRYABLE_TYPES },
});

/** History events before the batcher hands its state to a new run of itself. */
const HISTORY_LIMIT = 5_000;

function freshState(): BatcherState {
  return {
    pending: [],
    pendingSince: null,
    failures: {},
    inFlight: [],
    flushes: 0,
    counts: { submitted: 0, completed: 0, failed: 0, requests: 0, resubmitted: 0, synchronous: 0 },
  };
}

export async function llmBatcher(input: BatcherInput): Promise<BatcherState> {
  const state: BatcherState = input.carried ?? freshState();
  const known = new Set<string>([...state.pending, ...state.inFlight.flatMap((b) => b.customIds)]);
  let cancelled = false;
  let changed = false;

  const collect = (customId: string): void => {
    known.add(customId);
    state.pending.push(customId);
    // The loop sleeps until the oldest request is due: only the first one moves that time.
    if (state.pendingSince === null) {
      state.pendingSince = Date.now();
      changed = true;
    }
  };
  setHandler(llmBatchCollectSignal, ({ customId }) => {
    if (known.has(customId)) return; // a retried call re-signals what it asked before
    collect(customId);
  });
  // A call that stopped waiting (its run cancelled, or its worker shutting down: its retry will
  // ask again) takes back what is not yet sent. What is at the provider stays there: a retry may
  // still want its answer, and a cancelled sweep cancels its batches itself.
  setHandler(llmBatchWithdrawSignal, ({ customId }) => {
    const at = state.pending.indexOf(customId);
    if (at < 0) return;
    state.pending.splice(at, 1);
    known.delete(customId);
    if (state.pending.length === 0) state.pendingSince = null;
  });
  setHandler(llmBatchCancelSignal, () => {
    cancelled = true;
  });
  setHandler(llmBatcherStateQuery, () => state);

  const show = (): void => {
    const lines = state.inFlight.map(
      (b) => `- \`${b.id}\`: ${b.customIds.length} requests, ${b.status} since ${new Date(b.since).toISOString()}`,
    );
    const c = state.counts;
    setCurrentDetails(
      [
        `**${input.provider} / ${input.model}** for sweep \`${input.sweep}\``,
        `collected: ${state.pending.length}; batches in flight: ${state.inFlight.length}`,
        ...lines,
        `submitted ${c.submitted} batches (${c.requests} requests, ${c.resubmitted} resubmitted); completed ${c.completed}, failed ${c.failed}; sent one at a time: ${c.synchronous}`,
      ].join('\n'),
    );
  };

  const flush = async (): Promise<void> => {
    const ids = state.pending.splice(0, input.maxRequests);
    state.pendingSince = state.pending.length ? Date.now() : null;
    const flushId = `${workflowInfo().workflowId}#${workflowInfo().runId}#${state.flushes++}`;
    let sent;
    try {
      sent = await provider.submitLlmBatch({
        sweep: input.sweep,
        batcher: workflowInfo().workflowId,
        provider: input.provider,
        model: input.model,
        flushId,
        customIds: ids,
      });
    } catch (err) {
      // Refused for good (a transient fault is retried inside the activity): the callers send
      // their requests one at a time rather than wait for a batch that will not come.
      if (!(err instanceof ActivityFailure)) throw err;
      await handBack(ids);
      return;
    }
    const carried = new Set(sent.customIds);
    // Requests no longer waiting (answered meanwhile, or withdrawn) are forgotten.
    for (const id of ids) if (!carried.has(id)) known.delete(id);
    if (sent.batchId === null) return;
    state.inFlight.push({ id: sent.batchId, flushId, customIds: sent.customIds, status: sent.status, since: Date.now() });
    state.counts.submitted++;
    state.counts.requests += sent.customIds.length;
    state.counts.resubmitted += sent.resubmitted;
  };

  /** Requests whose batch cannot be made or read: their callers send them one at a time. */
  const handBack = async (ids: string[]): Promise<void> => {
    await provider.releaseLlmRequests({ customIds: ids, to: 'synchronous' });
    state.counts.synchronous += ids.length;
    for (const id of ids) {
      known.delete(id);
      delete state.failures[id];
    }
  };

  const forget = (batch: BatchInFlightState): void => {
    state.inFlight.splice(state.inFlight.indexOf(batch), 1);
    for (const id of batch.customIds) known.delete(id);
  };

  const settle = async (batch: BatchInFlightState): Promise<void> => {
    const lastTry = batch.customIds.filter((id) => (state.failures[id] ?? 0) >= input.resubmits);
    const got = await provider.collectLlmBatch({ provider: input.provider, batchId: batch.id, customIds: batch.customIds, lastTry });
    if (batch.status === 'completed') state.counts.completed++;
    else state.counts.failed++;
    forget(batch);
    const failed = new Set(got.failed);
    for (const id of got.failed) {
      state.failures[id] = (state.failures[id] ?? 0) + 1;
      collect(id);
    }
    state.counts.synchronous += got.synchronous.length;
    for (const id of batch.customIds) {
      if (failed.has(id)) continue;
      delete state.failures[id];
    }
  };

  const poll = async (): Promise<void> => {
    for (const batch of [...state.inFlight]) {
      try {
        batch.status = (await provider.pollLlmBatch({ provider: input.provider, batchId: batch.id })).status;
        if (batchEnded(batch.status)) await settle(batch);
      } catch (err) {
        // The provider refuses for good to say how the batch went (it lost it): its lines go
        // one at a time.
        if (!(err instanceof ActivityFailure)) throw err;
        state.counts.failed++;
        forget(batch);
        await handBack(batch.customIds);
      }
    }
  };

  let idleSince = Date.now();
  let lastPoll = Date.now();
  show();
  for (;;) {
    const now = Date.now();
    const flushAt = state.pendingSince === null ? Infinity : state.pendingSince + input.maxAgeMs;
    const pollAt = state.inFlight.length ? lastPoll + input.pollMs : Infinity;
    const idleAt = state.pending.length || state.inFlight.length ? Infinity : idleSince + input.idleMs;
    const wake = Math.min(flushAt, pollAt, idleAt);
    changed = false;
    if (wake > now) {
      await condition(() => cancelled || changed || state.pending.length >= input.maxRequests, Math.max(1, wake - now));
    }
    if (cancelled) break;
    const t = Date.now();
    if (state.pending.length >= input.maxRequests || (state.pendingSince !== null && t >= state.pendingSince + input.maxAgeMs)) {
      await flush();
    }
    if (state.inFlight.length && t >= lastPoll + input.pollMs) {
      lastPoll = Date.now();
      await poll();
    }
    if (state.pending.length || state.inFlight.length) idleSince = Date.now();
    else if (Date.now() >= idleSince + input.idleMs) break;
    show();
    const info = workflowInfo();
    if (info.historyLength > HISTORY_LIMIT || info.continueAsNewSuggested) {
      await continueAsNew<typeof llmBatcher>({ ...input, carried: state });
    }
  }

  if (cancelled) {
    // The sweep was cancelled: what is at the provider is cancelled there, and nobody waits for
    // what was collected.
    for (const batch of state.inFlight) {
      if (!batchEnded(batch.status)) await provider.cancelLlmBatch({ provider: input.provider, batchId: batch.id });
    }
    const left = [...state.pending, ...state.inFlight.flatMap((b) => b.customIds)];
    if (left.length) await provider.releaseLlmRequests({ customIds: left, to: 'withdrawn' });
    state.pending = [];
    state.pendingSince = null;
    // A provider takes a while to cancel: look until each batch has ended, so that its status is
    // recorded and the sweep's counts stop showing it in flight.
    while (state.inFlight.some((b) => !batchEnded(b.status))) {
      await sleep(input.pollMs);
      for (const batch of state.inFlight) {
        if (batchEnded(batch.status)) continue;
        batch.status = (await provider.pollLlmBatch({ provider: input.provider, batchId: batch.id })).status;
        if (batch.status === 'completed') state.counts.completed++;
        else if (batchEnded(batch.status)) state.counts.failed++;
      }
      show();
    }
    state.inFlight = [];
  }
  show();
  return state;
}
