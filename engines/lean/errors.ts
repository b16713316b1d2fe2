// Temporal failure types raised on the Lean queue; activity retry policies refer to them.
import { ApplicationFailure } from '@temporalio/common';
import { ReplCrashedError } from './repl-process';

/** The REPL died mid-check (retryable: a fresh process takes the retry). */
export const LEAN_REPL_CRASHED = 'LeanReplCrashed';
/** Importing the header took too long (retryable: the machine may just be busy). */
export const LEAN_HEADER_TIMEOUT = 'LeanHeaderTimeout';
/** The library header does not import (non-retryable: configuration). */
export const LEAN_HEADER_FAILED = 'LeanHeaderFailed';

/** Crashes become retryable Temporal failures; anything already a failure, or a
 * cancellation, passes through unchanged. */
export function toFailure(error: unknown): unknown {
  if (error instanceof ReplCrashedError) {
    return ApplicationFailure.retryable(error.message, LEAN_REPL_CRASHED, { exitCode: error.exitCode, signal: error.exitSignal });
  }
  return error;
}
