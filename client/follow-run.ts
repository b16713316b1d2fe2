// Following a run to its end, for every door that waits on one (the CLI's `formalize`, the MCP
// tool `formalize`): its events as they happen, resumed after the last one seen when a long poll
// runs out of time while Temporal still answers, or when Temporal comes back within a grace
// period; then the run's view. The doors keep their wording.
import type { Client } from '@temporalio/client';
import { followRunEvents, type RunEvent } from './run-events';
import { getFormalization, type RunView } from './runs';

const GRPC_DEADLINE_EXCEEDED = 4;
const PROBE_TIMEOUT_MS = 5000;

/** Temporal did not answer for longer than the grace period; `cause` is the last error. */
export class TemporalLostError extends Error {
  override name = 'TemporalLostError';
  constructor(readonly cause: unknown) {
    super(`Temporal does not answer: ${(cause as Error)?.message ?? String(cause)}`);
  }
}

export interface FollowRunOptions {
  /** Called for each event, in order, before the next is read. */
  onEvent: (event: RunEvent) => void | Promise<void>;
  /** Stop waiting (the run goes on); the error is thrown as the history call's. */
  signal?: AbortSignal;
  /** One long poll's deadline (and the final read's). */
  pollTimeoutMs: number;
  /** How long Temporal may not answer before following gives up (default 0: at once). */
  graceMs?: number;
}

/** Whether Temporal answers a quick question. */
export async function temporalAnswers(client: Client): Promise<boolean> {
  return client.connection
    .withDeadline(Date.now() + PROBE_TIMEOUT_MS, () => client.workflowService.getSystemInfo({}))
    .then(
      () => true,
      () => false,
    );
}

/** Follows run `id` to its end and returns its view (null: it disappeared). Throws
 * TemporalLostError when Temporal stays away past the grace period, and any other error a live
 * Temporal gives (or the abort, when `signal` fires). */
export async function followRunToEnd(client: Client, id: string, options: FollowRunOptions): Promise<RunView | null> {
  let after = 0;
  let lostSince: number | undefined;
  for (;;) {
    try {
      const events = followRunEvents(client, id, {
        after,
        pollTimeoutMs: options.pollTimeoutMs,
        onAnswer: () => (lostSince = undefined),
        ...(options.signal ? { signal: options.signal } : {}),
      });
      for await (const event of events) {
        after = event.seq;
        await options.onEvent(event);
      }
      break;
    } catch (err) {
      if (options.signal?.aborted) throw err;
      lostSince ??= Date.now();
      // A long poll that ran out of time while nothing happened is no news, if Temporal answers
      // a quick question; anything else from a live Temporal is a real error.
      if (await temporalAnswers(client)) {
        if ((err as { code?: number }).code !== GRPC_DEADLINE_EXCEEDED) throw err;
        lostSince = undefined;
        continue;
      }
      if (Date.now() - lostSince >= (options.graceMs ?? 0)) throw new TemporalLostError(err);
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
  return client.connection.withDeadline(Date.now() + options.pollTimeoutMs, () => getFormalization(client, id));
}
