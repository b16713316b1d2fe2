// Keeps a long activity visibly alive: heartbeats on a timer while the work runs, so Temporal
// notices a dead worker within the heartbeat timeout instead of the whole start-to-close timeout.
// The one heartbeat helper of every activity (the LLM stages, Lean, index builds).
import { Context } from '@temporalio/activity';

function activityContext(): Context | undefined {
  try {
    return Context.current();
  } catch {
    return undefined; // called outside an activity (unit tests): nothing to heartbeat
  }
}

export interface HeartbeatOptions {
  /** Time between timer heartbeats. Default 5 s. */
  intervalMs?: number;
  /** Progress sent with every heartbeat, so a retry can resume from it (`resumedDetails`). */
  details?: () => unknown;
}

/**
 * Runs `work` with the activity's cancellation signal, heartbeating at once, on a timer, and
 * whenever the work calls `beat` (e.g. after each batch, with fresh details).
 */
export async function withHeartbeat<T>(
  work: (signal?: AbortSignal, beat?: () => void) => Promise<T>,
  opts: HeartbeatOptions = {},
): Promise<T> {
  const ctx = activityContext();
  if (!ctx) return work();
  const beat = () => (opts.details ? ctx.heartbeat(opts.details()) : ctx.heartbeat());
  beat();
  const timer = setInterval(beat, opts.intervalMs ?? 5_000);
  try {
    return await work(ctx.cancellationSignal, beat);
  } finally {
    clearInterval(timer);
  }
}

/** The details of the last heartbeat of an earlier attempt of this activity, if any. */
export function resumedDetails<T>(): T | undefined {
  return activityContext()?.info.heartbeatDetails as T | undefined;
}
