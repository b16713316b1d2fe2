// The shared LLM budget's arithmetic (engines/llm/budget.ts) and the rate-limit headers it reads
// (rate-limit-headers.ts), on a clock the test moves.
import { describe, expect, it } from 'vitest';
import {
  BURST_SECONDS,
  newBudgetState,
  settle,
  snapshot,
  take,
  MemoryBudgetStore,
  type BudgetState,
  type Slot,
} from '../../engines/llm/budget';
import { estimateTokens } from '../../engines/llm/budgeted-fetch';
import { formatQuota, quotaSection } from '../../infra/llm-quota';
import { formatResetDuration, parseResetDuration, parseRetryAfter, readRateLimitHeaders } from '../../engines/llm/rate-limit-headers';

describe('rate-limit headers', () => {
  it("reads OpenAI's reset durations", () => {
    expect(parseResetDuration('6m0s')).toBe(360_000);
    expect(parseResetDuration('1s')).toBe(1000);
    expect(parseResetDuration('20ms')).toBe(20);
    expect(parseResetDuration('1.5s')).toBe(1500);
    expect(parseResetDuration('1h2m3s')).toBe(3_723_000);
    expect(parseResetDuration('2')).toBe(2000);
    expect(parseResetDuration('7m12.5s')).toBe(432_500);
  });

  it('leaves out what does not parse, never guessing', () => {
    for (const bad of ['', 'soon', '5 s', '-1s', '1s2', 's', '9999999h', '1x', '1s; drop table'])
      expect(parseResetDuration(bad)).toBeUndefined();
    expect(parseRetryAfter('abc')).toBeUndefined();
    const h = readRateLimitHeaders(new Headers({ 'x-ratelimit-limit-tokens': '1e9', 'x-ratelimit-remaining-tokens': '-5' }));
    expect(h).toEqual({});
  });

  it('reads retry-after as seconds, an HTTP date, or retry-after-ms first', () => {
    expect(parseRetryAfter('3')).toBe(3000);
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:05 GMT', now)).toBe(5000);
    expect(readRateLimitHeaders(new Headers({ 'retry-after': '3', 'retry-after-ms': '250' })).retryAfterMs).toBe(250);
  });

  it('reads the whole set', () => {
    const h = readRateLimitHeaders(
      new Headers({
        'x-ratelimit-limit-requests': '500',
        'x-ratelimit-limit-tokens': '30000',
        'x-ratelimit-remaining-requests': '499',
        'x-ratelimit-remaining-tokens': '29000',
        'x-ratelimit-reset-requests': '120ms',
        'x-ratelimit-reset-tokens': '2s',
      }),
    );
    expect(h).toEqual({
      limitRequests: 500,
      limitTokens: 30000,
      remainingRequests: 499,
      remainingTokens: 29000,
      resetRequestsMs: 120,
      resetTokensMs: 2000,
    });
  });

  it('writes durations the way it reads them', () => {
    for (const ms of [20, 999, 1500, 59_000, 360_000])
      expect(Math.abs(parseResetDuration(formatResetDuration(ms))! - ms)).toBeLessThan(1000);
  });
});

const req = (tokens: number, id = Math.random().toString(36)) => ({ tokens, leaseMs: 60_000, id });

function granted(s: BudgetState, limits: Parameters<typeof take>[1], tokens: number, now: number): Slot {
  const got = take(s, limits, req(tokens), now);
  if (!got.granted) throw new Error(`not granted: ${got.binding} ${got.waitMs}`);
  return got.slot;
}

describe('the budget', () => {
  it('holds tokens per minute: a burst of BURST_SECONDS, then the refill rate', () => {
    const limits = { tokensPerMinute: 60_000 };
    const s = newBudgetState(0);
    // BURST_SECONDS of the limit at once …
    for (let i = 0; i < BURST_SECONDS; i++) granted(s, limits, 1000, 0);
    const refused = take(s, limits, req(1000), 0);
    expect(refused).toMatchObject({ granted: false, binding: 'tokens' });
    // … then 1000 tokens a second.
    expect(refused.granted === false && refused.waitMs).toBe(1000);
    expect(take(s, limits, req(1000), 999).granted).toBe(false);
    expect(take(s, limits, req(1000), 1000).granted).toBe(true);
  });

  it("corrects the estimate from the usage, and the provider's remaining count lowers it", () => {
    const limits = { tokensPerMinute: 300_000 }; // a bucket of 10 000
    const s = newBudgetState(0);
    const slot = granted(s, limits, 10_000, 0);
    expect(take(s, limits, req(500), 0).granted).toBe(false);
    settle(s, limits, slot, { kind: 'answered', estimatedTokens: 10_000, usedTokens: 2000, headers: {} }, 0);
    expect(s.tokens).toBe(8000);
    const slot2 = granted(s, limits, 1000, 0);
    settle(s, limits, slot2, { kind: 'answered', estimatedTokens: 1000, usedTokens: 1000, headers: { remainingTokens: 3000 } }, 0);
    expect(s.tokens).toBe(3000);
  });

  it('takes the limit the provider reports when it is below the configured one', () => {
    const limits = { tokensPerMinute: 120_000, requestsPerMinute: 1000 };
    const s = newBudgetState(0);
    const slot = granted(s, limits, 100, 0);
    settle(
      s,
      limits,
      slot,
      { kind: 'answered', estimatedTokens: 100, usedTokens: 100, headers: { limitTokens: 30_000, limitRequests: 5000 } },
      0,
    );
    const snap = snapshot('default', s, limits, 0);
    expect(snap.tokensPerMinute).toMatchObject({ configured: 120_000, reported: 30_000, effective: 30_000 });
    // The configured request limit stays the ceiling.
    expect(snap.requestsPerMinute).toMatchObject({ configured: 1000, reported: 5000, effective: 1000 });
    // The bucket shrank to ten seconds of the reported limit.
    expect(s.tokens).toBeLessThanOrEqual(5000);
  });

  it('slows the whole provider after a 429: every caller waits for the bucket to refill, at a lower rate', () => {
    const limits = { tokensPerMinute: 60_000 };
    const s = newBudgetState(0);
    const slot = granted(s, limits, 1000, 0);
    settle(s, limits, slot, { kind: 'throttled', estimatedTokens: 1000, headers: { retryAfterMs: 2000 } }, 0);
    expect(take(s, limits, req(100), 0)).toMatchObject({ granted: false, binding: 'tokens' });
    expect(snapshot('default', s, limits, 0)).toMatchObject({ throttled: 1, sent: 1 });
    expect(s.factor).toBeLessThan(1);
    expect(snapshot('default', s, limits, 0).tokensPerMinute.effective).toBe(51_000);
    // Answers bring the rate back, step by step.
    let t = 1000;
    for (let i = 0; i < 5; i++, t += 1000) {
      const x = granted(s, limits, 10, t);
      settle(s, limits, x, { kind: 'answered', estimatedTokens: 10, usedTokens: 10, headers: {} }, t);
    }
    expect(s.factor).toBe(1);
  });

  it('guesses the limits of a provider that refuses without saying them, from what went through', () => {
    const s = newBudgetState(0);
    for (let t = 0; t < 30_000; t += 1000) {
      const x = granted(s, {}, 500, t);
      settle(s, {}, x, { kind: 'answered', estimatedTokens: 500, usedTokens: 400, headers: {} }, t + 100);
    }
    const x = granted(s, {}, 500, 30_000);
    settle(s, {}, x, { kind: 'throttled', estimatedTokens: 500, headers: {} }, 30_100);
    expect(s.guessed).toBe(true);
    expect(s.learnedTokensPerMinute).toBe(12_000);
    expect(s.learnedRequestsPerMinute).toBe(31);
    expect(snapshot('default', s, {}, 30_100).tokensPerMinute.effective).toBeCloseTo(12_000 * 0.85, 0);
    // A header saying the real limit replaces the guess.
    const y = granted(s, {}, 1, 40_000);
    settle(s, {}, y, { kind: 'answered', estimatedTokens: 1, usedTokens: 1, headers: { limitTokens: 90_000 } }, 40_000);
    expect(s).toMatchObject({ guessed: false, learnedTokensPerMinute: 90_000 });
  });

  it('holds requests in flight, and a lease lapses when its process never gives it back', () => {
    const limits = { maxInFlight: 2 };
    const s = newBudgetState(0);
    const a = granted(s, limits, 1, 0);
    granted(s, limits, 1, 0);
    expect(take(s, limits, req(1), 10)).toMatchObject({ granted: false, binding: 'in-flight' });
    settle(s, limits, a, { kind: 'answered', estimatedTokens: 1, headers: {} }, 1000);
    expect(take(s, limits, req(1), 1000).granted).toBe(true);
    expect(take(s, limits, req(1), 1000).granted).toBe(false);
    // Both remaining leases lapse (60 s), as if their process was killed.
    expect(take(s, limits, req(1), 61_001).granted).toBe(true);
  });

  it('says which limit binds and how close the last minute ran to it', () => {
    const limits = { tokensPerMinute: 60_000, requestsPerMinute: 600, maxInFlight: 4 };
    const s = newBudgetState(0);
    // One request a second of 900 tokens for a minute: tokens at 0.9, requests at 0.1.
    for (let t = 0; t < 60_000; t += 1000) {
      const x = granted(s, limits, 900, t);
      settle(s, limits, x, { kind: 'answered', estimatedTokens: 900, usedTokens: 900, headers: {} }, t + 500);
    }
    const snap = snapshot('default', s, limits, 60_000);
    expect(snap.binding).toBe('tokens');
    expect(snap.utilisation).toBeCloseTo(0.9, 1);
    expect(snap.requestsPerMinute.used).toBeCloseTo(60, 0);
    expect(snap.inFlight.used).toBeCloseTo(0.5, 1);
  });

  it('estimates a request from its prompt and max_tokens', () => {
    expect(estimateTokens({ messages: [{ role: 'user', content: 'x'.repeat(400) }], max_tokens: 100 })).toBe(
      Math.ceil((JSON.stringify([{ role: 'user', content: 'x'.repeat(400) }]).length + 2) / 4) + 100,
    );
  });

  it('keeps each provider apart in a store', async () => {
    const store = new MemoryBudgetStore(() => 0);
    await store.update('a', (s, now) => take(s, { maxInFlight: 1 }, req(1), now));
    const b = await store.update('b', (s, now) => take(s, { maxInFlight: 1 }, req(1), now));
    expect(b.granted).toBe(true);
    expect((await store.states()).get('a')!.slots).toHaveLength(1);
  });
});

describe('the quota as sweep status and the logs show it', () => {
  it('names the binding limit, its use, in flight, 429s and what the provider reported', () => {
    const limits = { tokensPerMinute: 60_000, requestsPerMinute: 600, maxInFlight: 4 };
    const s = newBudgetState(0);
    for (let t = 0; t < 60_000; t += 1000) {
      const x = granted(s, limits, 800, t);
      settle(s, limits, x, { kind: 'answered', estimatedTokens: 800, usedTokens: 800, headers: { limitTokens: 50_000 } }, t + 500);
    }
    const line = formatQuota(snapshot('default', s, limits, 60_000));
    expect(line).toMatch(
      /^default: tokens binds at 96% · tokens 48k\/50k\/min · requests 60\/600\/min · in flight 0 \(mean 0\.5\)\/4 · 429s 0\/60/,
    );
    expect(line).toContain('learnt from the provider: tokens 50k/min');
    expect(quotaSection([])).toBe('');
    expect(quotaSection([snapshot('default', s, limits, 60_000)])).toMatch(/^LLM quota, last minute, whole deployment:\n {2}default: /);
  });
});
