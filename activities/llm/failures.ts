// Maps what can go wrong on an LLM call to Temporal failures. Retrying is Temporal's job (so each
// retry is visible in the UI); this module only decides whether a retry can help, and when.
import { ApplicationFailure } from '@temporalio/common';
import {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  APIUserAbortError,
} from 'openai';

/** Failure types raised by the LLM engine; workflows may list the non-retryable ones. */
export const LLM_FAILURE = {
  notConfigured: 'LlmNotConfigured',
  unavailable: 'LlmUnavailable',
  badRequest: 'LlmBadRequest',
  unauthorized: 'LlmUnauthorized',
  notFound: 'LlmNotFound',
  rejected: 'LlmRejected',
  badReply: 'LlmBadReply',
} as const;

export function notConfiguredFailure(): ApplicationFailure {
  return ApplicationFailure.create({
    type: LLM_FAILURE.notConfigured,
    nonRetryable: true,
    message:
      'No LLM is configured. Set OPENAI_BASE_URL to an OpenAI-compatible endpoint ' +
      '(and OPENAI_API_KEY if it needs one; choose models with DRIFTLINE_MODEL_DECOMPOSER, ' +
      'DRIFTLINE_MODEL_FORMALIZER and DRIFTLINE_MODEL_JUDGE).',
  });
}

/** What the failure message needs to say where the call went. */
export interface CallTarget {
  model: string;
  baseURL: string;
  timeoutMs: number;
}

/**
 * The delay a server asks for, in ms: `retry-after-ms` first (OpenAI sends it), then
 * `Retry-After` as seconds or as an HTTP date. Undefined when absent or unreadable.
 */
export function retryDelayFromHeaders(
  headers: { get(name: string): string | null } | undefined,
  now: number = Date.now(),
): number | undefined {
  if (!headers) return undefined;
  const ms = headers.get('retry-after-ms');
  if (ms !== null && ms.trim() !== '' && Number.isFinite(Number(ms)) && Number(ms) >= 0) {
    return Math.round(Number(ms));
  }
  const value = headers.get('retry-after');
  if (value === null || value.trim() === '') return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return seconds >= 0 ? Math.round(seconds * 1000) : undefined;
  const date = Date.parse(value);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

function unavailable(message: string, cause: Error, nextRetryDelay?: number): ApplicationFailure {
  return ApplicationFailure.create({
    type: LLM_FAILURE.unavailable,
    nonRetryable: false,
    message,
    cause,
    ...(nextRetryDelay !== undefined ? { nextRetryDelay } : {}),
  });
}

function rejected(type: string, message: string, cause: Error): ApplicationFailure {
  return ApplicationFailure.create({ type, nonRetryable: true, message, cause });
}

/**
 * Turns an error thrown by the `openai` client into an ApplicationFailure. Cancellation is
 * passed through untouched so Temporal sees the activity as cancelled, not failed.
 */
export function toLlmFailure(err: unknown, target: CallTarget, signal?: AbortSignal): unknown {
  const where = `model "${target.model}" at ${target.baseURL}`;
  if (err instanceof APIUserAbortError || signal?.aborted) return signal?.reason ?? err;
  // Timeout is a subclass of connection error, so it is checked first.
  if (err instanceof APIConnectionTimeoutError) {
    return unavailable(`LLM call to ${where} timed out after ${target.timeoutMs} ms`, err);
  }
  if (err instanceof APIConnectionError) {
    const cause = err.cause instanceof Error ? `: ${err.cause.message}` : '';
    return unavailable(`Could not reach the LLM at ${target.baseURL}${cause}`, err);
  }
  if (!(err instanceof APIError) || err.status === undefined) return err;

  const status = err.status;
  const detail = err.message ? ` (${err.message})` : '';
  // 408 and 409 are transient on OpenAI-style servers (request timeout, lock contention).
  if (status === 429 || status === 408 || status === 409 || status >= 500) {
    const delay = retryDelayFromHeaders(err.headers);
    const label = status === 429 ? 'rate-limited the call' : `answered HTTP ${status}`;
    const when = delay !== undefined ? `; retry after ${delay} ms` : '';
    return unavailable(`LLM ${label} for ${where}${when}${detail}`, err, delay);
  }
  switch (status) {
    case 400:
      return rejected(LLM_FAILURE.badRequest, `LLM rejected the request (HTTP 400) for ${where}${detail}`, err);
    case 401:
      return rejected(
        LLM_FAILURE.unauthorized,
        `LLM refused the credentials (HTTP 401) for ${where}: check OPENAI_API_KEY${detail}`,
        err,
      );
    case 403:
      return rejected(
        LLM_FAILURE.unauthorized,
        `LLM denied access (HTTP 403) for ${where}: check that the key may use this model${detail}`,
        err,
      );
    case 404:
      return rejected(
        LLM_FAILURE.notFound,
        `LLM endpoint or model not found (HTTP 404) for ${where}: check OPENAI_BASE_URL (it usually ends in /v1) and the DRIFTLINE_MODEL_* names${detail}`,
        err,
      );
    default:
      return rejected(LLM_FAILURE.rejected, `LLM rejected the request (HTTP ${status}) for ${where}${detail}`, err);
  }
}
