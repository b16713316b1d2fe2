// The one error type the engines throw when the caller must decide about retrying: it carries a
// failure type from common/failures.ts and nothing of Temporal. The activities turn it into a
// Temporal failure of the same type (activities/failures.ts); other callers (the CLI, the
// evaluation) just show its message.
import { isRetryable, type FailureType } from '../common/failures';

export interface EngineErrorOptions {
  cause?: unknown;
  /** The delay the service asked for (Retry-After), in ms. */
  retryAfterMs?: number;
  /** Facts for whoever handles the failure (exit code, signal, …). */
  details?: Record<string, unknown>;
}

export class EngineError extends Error {
  override readonly name: string = 'EngineError';
  /** Whether no retry can help: decided by the type (common/failures.ts). */
  readonly nonRetryable: boolean;
  readonly retryAfterMs?: number;
  readonly details?: Record<string, unknown>;

  constructor(
    readonly type: FailureType,
    message: string,
    opts: EngineErrorOptions = {},
  ) {
    super(message, opts.cause !== undefined ? { cause: opts.cause } : undefined);
    this.nonRetryable = !isRetryable(type);
    if (opts.retryAfterMs !== undefined) this.retryAfterMs = opts.retryAfterMs;
    if (opts.details !== undefined) this.details = opts.details;
  }
}
