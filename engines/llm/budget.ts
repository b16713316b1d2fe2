// A provider's quota, shared by every worker process that calls it: tokens per minute and
// requests per minute (token buckets that refill continuously, as providers meter them) and
// requests in flight (leased slots that expire, so a killed process cannot keep one). The
// arithmetic is here, pure, over one state object; a store keeps the state where every process
// sees it (MemoryBudgetStore in one process; SqlBudgetStore in the results database) and applies
// each step in one transaction. Configured limits are ceilings; what the provider's headers say
// (its real limits, what remains) and its 429s lower them (decisions/0016).
import type { RateLimitHeaders } from './rate-limit-headers';

/** A provider's three limits; absent: not limited (by us). */
export interface ProviderLimits {
  tokensPerMinute?: number;
  requestsPerMinute?: number;
  maxInFlight?: number;
}

/** What limits a request. */
export type Binding = 'tokens' | 'requests' | 'in-flight';

export interface Slot {
  id: string;
  since: number;
  /** When the lease lapses if never given back (a killed process). */
  until: number;
}

/** The shared state of one provider's budget (stored as JSON). */
export interface BudgetState {
  /** When the buckets were last refilled (ms since the epoch). */
  at: number;
  /** Tokens available now; negative after a reply used more than was reserved. */
  tokens: number;
  requests: number;
  /** The limits the provider's headers reported last (or, from a provider that says nothing,
   * guessed after a 429 from what went through: `guessed`, raised slowly while answers come). */
  learnedTokensPerMinute?: number;
  learnedRequestsPerMinute?: number;
  guessed?: boolean;
  /** The limits the workers were configured with, as the last step saw them: a reader whose own
   * environment does not configure the provider (the CLI in a second shell) reports with these. */
  configured?: ProviderLimits;
  /** Share of the limits used, lowered by each 429 and raised again by answers (0.5..1). */
  factor: number;
  slots: Slot[];
  /** Counters of the current and the previous minute, for "how close to the limit". */
  windowStart: number;
  window: Usage;
  previous: Usage;
  /** Since the state was created: requests sent, and how many the provider answered 429. */
  sent: number;
  throttled: number;
}

interface Usage {
  tokens: number;
  requests: number;
  /** Milliseconds of slot occupancy (sum over slots). */
  slotMs: number;
}

/** Seconds of the limit a bucket holds: how far a quiet spell lets requests run ahead. Small, so
 * that the provider's own bucket (a minute, for OpenAI) is never emptied by our burst and any
 * minute stays within a few percent of the limit. A request larger than the bucket goes when it is
 * full, leaving a debt. */
export const BURST_SECONDS = 2;
/** How often a request waiting for a slot held in another process looks again. */
export const SLOT_POLL_MS = 25;
// A 429 takes 15% off, each answer gives 5% back: a steady 30% of 429s that no limit explains
// (a flaky gateway) settles near 0.8, while a limit we overran is soon below what it allows.
const MIN_FACTOR = 0.5;
const FACTOR_AFTER_429 = 0.85;
const FACTOR_STEP_UP = 0.05;
/** Answers in the last minute before a 429 makes them a guess of the limits. */
const MIN_GUESS_SAMPLE = 10;
/** How a guessed limit grows back per answer. */
const GUESS_STEP_UP = 1.01;
const WINDOW_MS = 60_000;

export function newBudgetState(now: number): BudgetState {
  return {
    at: now,
    tokens: Number.POSITIVE_INFINITY,
    requests: Number.POSITIVE_INFINITY,
    factor: 1,
    slots: [],
    windowStart: now,
    window: { tokens: 0, requests: 0, slotMs: 0 },
    previous: { tokens: 0, requests: 0, slotMs: 0 },
    sent: 0,
    throttled: 0,
  };
}

function lower(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return Math.min(a, b);
}

/** The limits in force: the configured ceiling, lowered to what the provider reports, times the
 * factor its 429s left. */
export function effectiveLimits(s: BudgetState, limits: ProviderLimits): ProviderLimits {
  const tpm = lower(limits.tokensPerMinute, s.learnedTokensPerMinute);
  const rpm = lower(limits.requestsPerMinute, s.learnedRequestsPerMinute);
  return {
    ...(tpm !== undefined ? { tokensPerMinute: tpm * s.factor } : {}),
    ...(rpm !== undefined ? { requestsPerMinute: rpm * s.factor } : {}),
    ...(limits.maxInFlight !== undefined ? { maxInFlight: limits.maxInFlight } : {}),
  };
}

function capacity(perMinute: number): number {
  return Math.max(1, (perMinute / 60) * BURST_SECONDS);
}

/** Refills both buckets for the time since the last step, and rolls the minute counters. */
function advance(s: BudgetState, limits: ProviderLimits, now: number): void {
  s.configured = limits;
  const eff = effectiveLimits(s, limits);
  const dt = Math.max(0, now - s.at);
  s.tokens = refill(s.tokens, eff.tokensPerMinute, dt);
  s.requests = refill(s.requests, eff.requestsPerMinute, dt);
  s.at = Math.max(s.at, now);
  if (now - s.windowStart >= WINDOW_MS) {
    const minutes = Math.floor((now - s.windowStart) / WINDOW_MS);
    s.previous = minutes === 1 ? s.window : { tokens: 0, requests: 0, slotMs: 0 };
    s.window = { tokens: 0, requests: 0, slotMs: 0 };
    s.windowStart += minutes * WINDOW_MS;
  }
  // Leases of processes that never gave them back.
  s.slots = s.slots.filter((slot) => slot.until > now);
}

function refill(level: number, perMinute: number | undefined, dt: number): number {
  if (perMinute === undefined) return Number.POSITIVE_INFINITY;
  const cap = capacity(perMinute);
  const start = Number.isFinite(level) ? level : cap;
  return Math.min(cap, start + (dt * perMinute) / WINDOW_MS);
}

export type TakeResult = { granted: true; slot: Slot } | { granted: false; waitMs: number; binding: Binding };

/** Takes one request of `tokens` estimated tokens and a slot, or says how long to wait and why. */
export function take(
  s: BudgetState,
  limits: ProviderLimits,
  want: { tokens: number; leaseMs: number; id: string },
  now: number,
): TakeResult {
  advance(s, limits, now);
  const eff = effectiveLimits(s, limits);
  if (eff.maxInFlight !== undefined && s.slots.length >= eff.maxInFlight) {
    return { granted: false, waitMs: SLOT_POLL_MS, binding: 'in-flight' };
  }
  if (eff.requestsPerMinute !== undefined && s.requests < 1) {
    return { granted: false, waitMs: Math.ceil(((1 - s.requests) * WINDOW_MS) / eff.requestsPerMinute), binding: 'requests' };
  }
  if (eff.tokensPerMinute !== undefined) {
    // A request larger than the bucket goes when the bucket is full, leaving a debt.
    const need = Math.min(want.tokens, capacity(eff.tokensPerMinute));
    if (s.tokens < need) {
      return { granted: false, waitMs: Math.ceil(((need - s.tokens) * WINDOW_MS) / eff.tokensPerMinute), binding: 'tokens' };
    }
  }
  if (Number.isFinite(s.tokens)) s.tokens -= want.tokens;
  if (Number.isFinite(s.requests)) s.requests -= 1;
  const slot = { id: want.id, since: now, until: now + want.leaseMs };
  s.slots.push(slot);
  s.sent++;
  s.window.requests++;
  return { granted: true, slot };
}

/** How a request ended, for `settle`. */
export interface Outcome {
  /** `answered`: a reply with usage (or without: the estimate stands); `throttled`: HTTP 429;
   * `failed`: anything else (an error answer, a broken connection). */
  kind: 'answered' | 'throttled' | 'failed';
  estimatedTokens: number;
  /** prompt + completion tokens as the reply's usage says. */
  usedTokens?: number;
  headers: RateLimitHeaders;
}

/** Gives the slot back and corrects the token bucket: by the reply's usage, by what the headers
 * say remains and the provider's real limits, and after a 429 by slowing down and pausing. */
export function settle(s: BudgetState, limits: ProviderLimits, slot: Slot, outcome: Outcome, now: number): void {
  advance(s, limits, now);
  const held = s.slots.find((x) => x.id === slot.id);
  s.slots = s.slots.filter((x) => x.id !== slot.id);
  s.window.slotMs += Math.max(0, now - (held ?? slot).since);
  const h = outcome.headers;
  if (h.limitTokens !== undefined && h.limitTokens > 0) s.learnedTokensPerMinute = h.limitTokens;
  if (h.limitRequests !== undefined && h.limitRequests > 0) s.learnedRequestsPerMinute = h.limitRequests;
  if (h.limitTokens !== undefined || h.limitRequests !== undefined) s.guessed = false;
  // What the request really cost: the usage when answered; nothing when refused or failed.
  const used = outcome.kind === 'answered' ? (outcome.usedTokens ?? outcome.estimatedTokens) : 0;
  if (Number.isFinite(s.tokens)) s.tokens += outcome.estimatedTokens - used;
  if (outcome.kind !== 'answered' && Number.isFinite(s.requests)) s.requests += outcome.kind === 'throttled' ? 0 : 1;
  s.window.tokens += used;
  if (outcome.kind === 'answered') {
    s.factor = Math.min(1, s.factor + FACTOR_STEP_UP);
    if (s.guessed && s.learnedTokensPerMinute !== undefined) s.learnedTokensPerMinute *= GUESS_STEP_UP;
    if (s.guessed && s.learnedRequestsPerMinute !== undefined) s.learnedRequestsPerMinute *= GUESS_STEP_UP;
  }
  if (outcome.kind === 'throttled') {
    s.throttled++;
    // A provider that refuses without saying its limits: what went through in the last minute is
    // the best guess of them (the factor then keeps below it).
    const used = lastMinute(s, now);
    const known = [limits.tokensPerMinute, limits.requestsPerMinute, s.learnedTokensPerMinute, s.learnedRequestsPerMinute];
    if (known.every((x) => x === undefined) && used.requests >= MIN_GUESS_SAMPLE) {
      s.learnedTokensPerMinute = used.tokens;
      s.learnedRequestsPerMinute = used.requests;
      s.guessed = true;
    }
    s.factor = Math.max(MIN_FACTOR, s.factor * FACTOR_AFTER_429);
    // Every caller waits for the buckets to fill again, not only the refused one (whose own
    // retry waits the provider's Retry-After).
    if (Number.isFinite(s.tokens)) s.tokens = Math.min(s.tokens, 0);
    if (Number.isFinite(s.requests)) s.requests = Math.min(s.requests, 0);
  }
  // The provider's count wins where it is lower (another client of the account, a lower tier).
  if (h.remainingTokens !== undefined && Number.isFinite(s.tokens)) s.tokens = Math.min(s.tokens, h.remainingTokens);
  if (h.remainingRequests !== undefined && Number.isFinite(s.requests)) s.requests = Math.min(s.requests, h.remainingRequests);
  // A limit learnt now may shrink the bucket at once.
  advance(s, limits, now);
}

/** One provider's quota as `sweep status`, the web page and the logs show it. */
export interface QuotaSnapshot {
  provider: string;
  /** Per limit: configured, reported by the provider, in force now, and use over the last minute. */
  tokensPerMinute: LimitUse;
  requestsPerMinute: LimitUse;
  inFlight: LimitUse & { now: number };
  /** The limit closest to full over the last minute (none when nothing is limited). */
  binding: Binding | null;
  /** Use of the binding limit, as a fraction of it. */
  utilisation: number | null;
  factor: number;
  sent: number;
  throttled: number;
}

export interface LimitUse {
  configured?: number;
  reported?: number;
  effective?: number;
  /** Over the last minute (slots: mean number in use). */
  used: number;
}

/** A sliding minute: this minute's counts, plus the part of the last one still inside it. */
function lastMinute(s: BudgetState, now: number): Usage & { carry: number } {
  const elapsed = Math.min(WINDOW_MS, Math.max(1, now - s.windowStart));
  const carry = 1 - elapsed / WINDOW_MS;
  const k = (key: keyof Usage) => s.window[key] + s.previous[key] * carry;
  return { tokens: k('tokens'), requests: k('requests'), slotMs: k('slotMs'), carry };
}

export function snapshot(provider: string, s: BudgetState, limits: ProviderLimits, now: number): QuotaSnapshot {
  advance(s, limits, now);
  const eff = effectiveLimits(s, limits);
  const minute = lastMinute(s, now);
  const carry = minute.carry;
  const perMinute = (k: 'tokens' | 'requests') => minute[k];
  const openSlotMs = s.slots.reduce((n, slot) => n + Math.max(0, now - Math.max(slot.since, s.windowStart)), 0);
  const meanInFlight = (s.window.slotMs + openSlotMs + s.previous.slotMs * carry) / WINDOW_MS;
  const use = (configured: number | undefined, reported: number | undefined, effective: number | undefined, used: number): LimitUse => ({
    ...(configured !== undefined ? { configured } : {}),
    ...(reported !== undefined ? { reported } : {}),
    ...(effective !== undefined ? { effective: round(effective) } : {}),
    used: round(used),
  });
  const tokens = use(limits.tokensPerMinute, s.learnedTokensPerMinute, eff.tokensPerMinute, perMinute('tokens'));
  const requests = use(limits.requestsPerMinute, s.learnedRequestsPerMinute, eff.requestsPerMinute, perMinute('requests'));
  const inFlight = { ...use(limits.maxInFlight, undefined, eff.maxInFlight, meanInFlight), now: s.slots.length };
  const candidates: [Binding, number][] = [];
  if (tokens.effective) candidates.push(['tokens', tokens.used / tokens.effective]);
  if (requests.effective) candidates.push(['requests', requests.used / requests.effective]);
  if (inFlight.effective) candidates.push(['in-flight', inFlight.used / inFlight.effective]);
  candidates.sort((a, b) => b[1] - a[1]);
  const top = candidates[0];
  return {
    provider,
    tokensPerMinute: tokens,
    requestsPerMinute: requests,
    inFlight,
    binding: top?.[0] ?? null,
    utilisation: top ? round(top[1], 3) : null,
    factor: round(s.factor, 3),
    sent: s.sent,
    throttled: s.throttled,
  };
}

function round(x: number, digits = 1): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

/** Where the budget state lives: every step runs on the newest state, one at a time. */
export interface BudgetStore {
  /** Runs `step` on the provider's state and keeps what it changed, atomically for all processes. */
  update<T>(provider: string, step: (state: BudgetState, now: number) => T): Promise<T>;
  /** Every provider's state (read only). */
  states(): Promise<Map<string, BudgetState>>;
}

/** The state JSON-encoded for a store: infinities (no limit) as null. */
export function encodeState(s: BudgetState): string {
  return JSON.stringify(s, (_k, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? null : v));
}

export function decodeState(text: string, now: number): BudgetState {
  const raw = JSON.parse(text) as Partial<BudgetState> & { tokens: number | null; requests: number | null };
  const base = newBudgetState(now);
  return {
    ...base,
    ...raw,
    tokens: raw.tokens ?? Number.POSITIVE_INFINITY,
    requests: raw.requests ?? Number.POSITIVE_INFINITY,
  } as BudgetState;
}

/** The budget of one process (tests, and commands that call a provider outside the workers). */
export class MemoryBudgetStore implements BudgetStore {
  private readonly byProvider = new Map<string, BudgetState>();
  constructor(private readonly now: () => number = Date.now) {}

  async update<T>(provider: string, step: (state: BudgetState, now: number) => T): Promise<T> {
    const now = this.now();
    let state = this.byProvider.get(provider);
    if (!state) this.byProvider.set(provider, (state = newBudgetState(now)));
    return step(state, now);
  }

  async states(): Promise<Map<string, BudgetState>> {
    return new Map([...this.byProvider].map(([k, v]) => [k, decodeState(encodeState(v), this.now())]));
  }
}
