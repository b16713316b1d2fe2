// The one map from engine errors to Temporal failures. The engines throw EngineErrors typed
// with the names in common/failures.ts; here they become ApplicationFailures of the same type,
// retryable or not as the type says, with the server's Retry-After as the next retry's delay.
// Anything else (a cancellation, a failure already made here) passes through unchanged.
import { ApplicationFailure } from '@temporalio/common';
import { isRetryable, type FailureType } from '../common/failures';
import { EngineError } from '../engines/errors';

export function toTemporalFailure(err: unknown): unknown {
  if (!(err instanceof EngineError)) return err;
  return ApplicationFailure.create({
    type: err.type,
    message: err.message,
    nonRetryable: err.nonRetryable,
    ...(err.cause instanceof Error ? { cause: err.cause } : {}),
    ...(err.retryAfterMs !== undefined ? { nextRetryDelay: err.retryAfterMs } : {}),
    ...(err.details !== undefined ? { details: [err.details] } : {}),
  });
}

/** Awaits engine work, turning its EngineErrors into Temporal failures. */
export async function mapEngineErrors<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (err) {
    throw toTemporalFailure(err);
  }
}

/** A failure raised by an activity itself (bad input, a missing library), typed like the engines'. */
export function activityFailure(type: FailureType, message: string): ApplicationFailure {
  return ApplicationFailure.create({ type, message, nonRetryable: !isRetryable(type) });
}
