// Sorting the errors of the `openai` client (chat and embeddings alike) into what a caller must
// do about them. The callers turn each kind into a failure with their own words.
import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';

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

export type ApiErrorKind =
  /** The caller's signal aborted the call: pass `value` on untouched. */
  | { kind: 'cancelled'; value: unknown }
  | { kind: 'timeout'; error: Error }
  | { kind: 'unreachable'; error: Error; cause: string }
  /** 429, 408, 409 or 5xx: a retry can help, after `delayMs` when the server said so. */
  | { kind: 'transient'; error: Error; status: number; delayMs?: number; detail: string }
  /** Any other HTTP status: the request itself is wrong; retrying cannot help. */
  | { kind: 'refused'; error: Error; status: number; detail: string }
  | { kind: 'other'; value: unknown };

export function classifyApiError(err: unknown, signal?: AbortSignal): ApiErrorKind {
  if (err instanceof APIUserAbortError || signal?.aborted) return { kind: 'cancelled', value: signal?.reason ?? err };
  // A timeout is a kind of connection error, so it is checked first.
  if (err instanceof APIConnectionTimeoutError) return { kind: 'timeout', error: err };
  if (err instanceof APIConnectionError) {
    return { kind: 'unreachable', error: err, cause: err.cause instanceof Error ? `: ${err.cause.message}` : '' };
  }
  if (!(err instanceof APIError) || err.status === undefined) return { kind: 'other', value: err };
  const status = err.status;
  const detail = err.message ? ` (${err.message})` : '';
  // 408 and 409 are transient on OpenAI-style servers (request timeout, lock contention).
  if (status === 429 || status === 408 || status === 409 || status >= 500) {
    const delayMs = retryDelayFromHeaders(err.headers);
    return { kind: 'transient', error: err, status, detail, ...(delayMs !== undefined ? { delayMs } : {}) };
  }
  return { kind: 'refused', error: err, status, detail };
}

/** What a transient answer was, for a message: "rate-limited the call" or "answered HTTP 503". */
export function transientLabel(status: number): string {
  return status === 429 ? 'rate-limited the call' : `answered HTTP ${status}`;
}

/** "; retry after N ms" when the server named a delay. */
export function retryHint(delayMs: number | undefined): string {
  return delayMs !== undefined ? `; retry after ${delayMs} ms` : '';
}
