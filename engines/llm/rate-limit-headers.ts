// What a provider says about its rate limits, read from a reply's headers: OpenAI's
// `x-ratelimit-{limit,remaining,reset}-{requests,tokens}` (resets as Go-style durations such as
// `6m0s`, `1s`, `20ms`) and `retry-after` (seconds, or an HTTP date). Every value is outside text:
// what does not parse is left out, never guessed.

export interface RateLimitHeaders {
  limitRequests?: number;
  limitTokens?: number;
  remainingRequests?: number;
  remainingTokens?: number;
  /** Milliseconds until the request (token) allowance is full again. */
  resetRequestsMs?: number;
  resetTokensMs?: number;
  /** Milliseconds the provider asks us to wait (`retry-after-ms` or `retry-after`). */
  retryAfterMs?: number;
}

const UNIT_MS: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1, us: 0.001, µs: 0.001, ns: 0.000001 };

/** A duration as OpenAI writes it (`6m0s`, `1.5s`, `20ms`, `1h2m3s`), or plain seconds (`2`, `0.5`).
 * Undefined when it does not parse or is absurd (negative, over a day). */
export function parseResetDuration(text: string | null | undefined): number | undefined {
  if (!text) return undefined;
  const t = text.trim();
  if (t.length === 0 || t.length > 32) return undefined;
  if (/^\d+(\.\d+)?$/.test(t)) return bounded(Number(t) * 1000);
  const re = /(\d+(?:\.\d+)?)(h|ms|m|s|us|µs|ns)/gy;
  let ms = 0;
  let end = 0;
  for (let m = re.exec(t); m; m = re.exec(t)) {
    ms += Number(m[1]) * UNIT_MS[m[2]!]!;
    end = re.lastIndex;
  }
  return end === t.length && end > 0 ? bounded(ms) : undefined;
}

/** `retry-after`: delay-seconds or an HTTP date. */
export function parseRetryAfter(text: string | null | undefined, now = Date.now()): number | undefined {
  if (!text) return undefined;
  const t = text.trim();
  if (/^\d+(\.\d+)?$/.test(t)) return bounded(Number(t) * 1000);
  if (t.length > 64) return undefined;
  const at = Date.parse(t);
  return Number.isFinite(at) ? bounded(Math.max(0, at - now)) : undefined;
}

function bounded(ms: number): number | undefined {
  return Number.isFinite(ms) && ms >= 0 && ms <= 86_400_000 ? Math.round(ms) : undefined;
}

function count(text: string | null | undefined): number | undefined {
  if (!text || !/^\s*\d{1,15}\s*$/.test(text)) return undefined;
  return Number(text);
}

interface HeaderSource {
  get(name: string): string | null;
}

export function readRateLimitHeaders(headers: HeaderSource, now = Date.now()): RateLimitHeaders {
  const out: RateLimitHeaders = {};
  const set = <K extends keyof RateLimitHeaders>(key: K, value: number | undefined) => {
    if (value !== undefined) out[key] = value;
  };
  set('limitRequests', count(headers.get('x-ratelimit-limit-requests')));
  set('limitTokens', count(headers.get('x-ratelimit-limit-tokens')));
  set('remainingRequests', count(headers.get('x-ratelimit-remaining-requests')));
  set('remainingTokens', count(headers.get('x-ratelimit-remaining-tokens')));
  set('resetRequestsMs', parseResetDuration(headers.get('x-ratelimit-reset-requests')));
  set('resetTokensMs', parseResetDuration(headers.get('x-ratelimit-reset-tokens')));
  const retryMs = count(headers.get('retry-after-ms'));
  set('retryAfterMs', retryMs !== undefined ? bounded(retryMs) : parseRetryAfter(headers.get('retry-after'), now));
  return out;
}

/** A duration written as OpenAI writes it: `6m0s`, `1s`, `20ms`. */
export function formatResetDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.ceil(ms))}ms`;
  const totalS = ms / 1000;
  if (totalS < 60) return `${Number(totalS.toFixed(3))}s`;
  const m = Math.floor(totalS / 60);
  const s = Math.round(totalS - m * 60);
  return `${m}m${s}s`;
}
