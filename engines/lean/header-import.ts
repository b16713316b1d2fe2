// Importing a check's header into a REPL process: the expensive step (a cold Mathlib import
// takes seconds and gigabytes) that the pool does once per header per process.
import { LEAN_FAILURE } from '../../common/failures';
import type { CompileResult } from '../../common/lean-types';
import { headerFailure, type CheckSource } from './lean-source';
import { ReplTimeoutError, type ReplProcess } from './repl-process';
import { isErrorReply, type ReplReply } from './repl-protocol';
import { EngineError } from '../errors';

/** The header's environment in `proc`, or a finished result when the statement's own import
 * failed. Throws an EngineError (LeanHeaderFailed, LeanHeaderTimeout) when the library header
 * itself cannot be imported. */
export async function importHeader(
  proc: ReplProcess,
  source: CheckSource,
  options: { timeoutMs: number; signal?: AbortSignal },
): Promise<number | Omit<CompileResult, 'durationMs'>> {
  const { timeoutMs, signal } = options;
  let reply: ReplReply;
  try {
    reply = await proc.request({ cmd: source.header }, { timeoutMs, signal });
  } catch (error) {
    if (!(error instanceof ReplTimeoutError)) throw error;
    throw new EngineError(
      LEAN_FAILURE.headerTimeout,
      `Importing the Lean header took longer than ${timeoutMs} ms (header: ${JSON.stringify(source.header)}). ` +
        'The machine may be overloaded or the library not built; raise LEAN_HEADER_TIMEOUT_MS if imports are just slow.',
    );
  }
  if (isErrorReply(reply)) {
    throw new EngineError(LEAN_FAILURE.headerFailed, `The Lean REPL refused the header: ${reply.message}`);
  }
  const failure = headerFailure(reply.messages, source);
  if (failure?.blame === 'statement') {
    return { status: 'error', messages: failure.messages, reason: 'An import of the statement failed.' };
  }
  if (failure?.blame === 'library') {
    throw new EngineError(
      LEAN_FAILURE.headerFailed,
      `The library header does not elaborate, so no statement can be checked: ${failure.text}\n` +
        `Header: ${JSON.stringify(source.header)}. Check the configured header and the REPL's working directory.`,
    );
  }
  return reply.env;
}
