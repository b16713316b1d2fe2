// Keeps a long activity visibly alive: heartbeats on a timer while the work runs, so Temporal
// notices a dead worker within the heartbeat timeout instead of the whole start-to-close timeout.
import { Context } from '@temporalio/activity';

function activityContext(): Context | undefined {
  try {
    return Context.current();
  } catch {
    return undefined; // called outside an activity (unit tests): nothing to heartbeat
  }
}

export async function withHeartbeat<T>(work: (signal?: AbortSignal) => Promise<T>, intervalMs = 5_000): Promise<T> {
  const ctx = activityContext();
  if (!ctx) return work();
  ctx.heartbeat();
  const timer = setInterval(() => ctx.heartbeat(), intervalMs);
  try {
    return await work(ctx.cancellationSignal);
  } finally {
    clearInterval(timer);
  }
}
