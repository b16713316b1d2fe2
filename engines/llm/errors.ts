// Sorts what can go wrong on an LLM call into engine errors with a failure type. Retrying is
// the caller's job (Temporal's, so each retry is visible in the UI); this module only says which
// kind of failure it was (and so whether a retry can help), and when the server wants a retry.
import { LLM_FAILURE } from '../../common/failures';
import { EngineError } from '../errors';
import { classifyApiError, retryHint, transientLabel } from './api-errors';

export function notConfiguredError(): EngineError {
  return new EngineError(
    LLM_FAILURE.notConfigured,
      'No LLM is configured. Set OPENAI_BASE_URL to an OpenAI-compatible endpoint ' +
      '(and OPENAI_API_KEY if it needs one; choose models with DRIFTLINE_MODEL_DECOMPOSER, ' +
      'DRIFTLINE_MODEL_FORMALIZER and DRIFTLINE_MODEL_JUDGE).',
  );
}

/** What the failure message needs to say where the call went. */
export interface CallTarget {
  model: string;
  baseURL: string;
  timeoutMs: number;
}


function unavailable(message: string, cause: Error, retryAfterMs?: number): EngineError {
  return new EngineError(LLM_FAILURE.unavailable, message, { cause, retryAfterMs });
}

function rejected(type: (typeof LLM_FAILURE)[keyof typeof LLM_FAILURE], message: string, cause: Error): EngineError {
  return new EngineError(type, message, { cause });
}

/**
 * Turns an error thrown by the `openai` client into an EngineError. Cancellation is passed
 * through untouched so Temporal sees the activity as cancelled, not failed.
 */
export function toLlmError(err: unknown, target: CallTarget, signal?: AbortSignal): unknown {
  const where = `model "${target.model}" at ${target.baseURL}`;
  const e = classifyApiError(err, signal);
  switch (e.kind) {
    case 'cancelled':
    case 'other':
      return e.value;
    case 'timeout':
      return unavailable(`LLM call to ${where} timed out after ${target.timeoutMs} ms`, e.error);
    case 'unreachable':
      return unavailable(`Could not reach the LLM at ${target.baseURL}${e.cause}`, e.error);
    case 'transient':
      return unavailable(`LLM ${transientLabel(e.status)} for ${where}${retryHint(e.delayMs)}${e.detail}`, e.error, e.delayMs);
    case 'refused':
      return refusal(e.status, where, e.detail, e.error);
  }
}

function refusal(status: number, where: string, detail: string, cause: Error): EngineError {
  switch (status) {
    case 400:
      return rejected(LLM_FAILURE.badRequest, `LLM rejected the request (HTTP 400) for ${where}${detail}`, cause);
    case 401:
      return rejected(LLM_FAILURE.unauthorized, `LLM refused the credentials (HTTP 401) for ${where}: check OPENAI_API_KEY${detail}`, cause);
    case 403:
      return rejected(LLM_FAILURE.unauthorized, `LLM denied access (HTTP 403) for ${where}: check that the key may use this model${detail}`, cause);
    case 404:
      return rejected(
        LLM_FAILURE.notFound,
        `LLM endpoint or model not found (HTTP 404) for ${where}: check OPENAI_BASE_URL (it usually ends in /v1) and the DRIFTLINE_MODEL_* names${detail}`,
        cause,
      );
    default:
      return rejected(LLM_FAILURE.rejected, `LLM rejected the request (HTTP ${status}) for ${where}${detail}`, cause);
  }
}
