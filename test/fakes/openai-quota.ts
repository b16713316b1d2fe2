// An account's rate limits, as the fake OpenAI server enforces them: requests per minute and
// tokens per minute as token buckets that refill continuously (OpenAI's metering: a request is
// charged its prompt plus max_tokens when admitted, corrected to its usage when done), and a
// number of slots (a local server's `--parallel`). A request over a limit is answered 429 with
// OpenAI's message and headers; every answer carries the x-ratelimit-* headers.

export interface FakeLimits {
  requestsPerMinute?: number;
  tokensPerMinute?: number;
  /** Requests served at once; one more is answered 429. */
  slots?: number;
  /** Seconds of the limit each bucket holds (OpenAI's: a minute). Default 60. */
  burstSeconds?: number;
  /** Time to the first token, and per generated token: a reply's latency. Defaults 0. */
  firstTokenMs?: number;
  msPerToken?: number;
  /** Send the x-ratelimit-* headers (default true): false is a provider that says nothing. */
  headers?: boolean;
}

/** One request the quota saw: when, what it was charged and used, and how it ended. */
export interface QuotaRecord {
  arrivedAt: number;
  /** When the reply was sent (for refused requests: at once). */
  doneAt: number;
  status: 200 | 429;
  /** prompt + completion tokens of the reply (0 when refused). */
  tokens: number;
  reason?: 'requests' | 'tokens' | 'slots';
}

interface Bucket {
  level: number;
  at: number;
}

export class FakeQuota {
  private requests: Bucket;
  private tokens: Bucket;
  private inFlight = 0;
  readonly log: QuotaRecord[] = [];

  constructor(
    private limits: FakeLimits,
    private readonly now: () => number = Date.now,
  ) {
    this.requests = { level: this.capacity(limits.requestsPerMinute), at: now() };
    this.tokens = { level: this.capacity(limits.tokensPerMinute), at: now() };
  }

  /** New limits from now on (an account moved to another tier, a server restarted smaller). */
  set(limits: FakeLimits): void {
    this.refill();
    this.limits = limits;
    this.requests.level = Math.min(this.requests.level, this.capacity(limits.requestsPerMinute));
    this.tokens.level = Math.min(this.tokens.level, this.capacity(limits.tokensPerMinute));
  }

  get current(): FakeLimits {
    return this.limits;
  }

  private capacity(perMinute: number | undefined): number {
    return perMinute === undefined ? Number.POSITIVE_INFINITY : (perMinute * (this.limits.burstSeconds ?? 60)) / 60;
  }

  private refill(): void {
    const now = this.now();
    for (const [bucket, perMinute] of [
      [this.requests, this.limits.requestsPerMinute],
      [this.tokens, this.limits.tokensPerMinute],
    ] as const) {
      if (perMinute === undefined) {
        bucket.level = Number.POSITIVE_INFINITY;
      } else {
        const cap = this.capacity(perMinute);
        const start = Number.isFinite(bucket.level) ? bucket.level : cap;
        bucket.level = Math.min(cap, start + ((now - bucket.at) * perMinute) / 60_000);
      }
      bucket.at = now;
    }
  }

  /** Admits a request charged `charge` tokens, or says why not and with which headers. */
  admit(
    charge: number,
    arrivedAt: number,
  ): { ok: true; headers: Record<string, string> } | { ok: false; message: string; headers: Record<string, string> } {
    this.refill();
    const { requestsPerMinute: rpm, tokensPerMinute: tpm, slots } = this.limits;
    let refusal: { reason: QuotaRecord['reason']; message: string; waitMs: number } | undefined;
    if (slots !== undefined && this.inFlight >= slots) {
      refusal = { reason: 'slots', message: `All ${slots} slots are busy. Please try again shortly.`, waitMs: 1000 };
    } else if (rpm !== undefined && this.requests.level < 1) {
      const waitMs = ((1 - this.requests.level) * 60_000) / rpm;
      refusal = {
        reason: 'requests',
        message: `Rate limit reached for requests per min (RPM): Limit ${rpm}, Used ${rpm}, Requested 1. Please try again in ${seconds(waitMs)}s.`,
        waitMs,
      };
    } else if (tpm !== undefined && this.tokens.level < Math.min(charge, this.capacity(tpm))) {
      const need = Math.min(charge, this.capacity(tpm));
      const waitMs = ((need - this.tokens.level) * 60_000) / tpm;
      const used = Math.max(0, Math.round(this.capacity(tpm) - this.tokens.level));
      refusal = {
        reason: 'tokens',
        message: `Rate limit reached for tokens per min (TPM): Limit ${tpm}, Used ${used}, Requested ${charge}. Please try again in ${seconds(waitMs)}s.`,
        waitMs,
      };
    }
    if (refusal) {
      this.log.push({ arrivedAt, doneAt: this.now(), status: 429, tokens: 0, reason: refusal.reason });
      const headers = this.headers();
      headers['retry-after'] = String(Math.max(1, Math.ceil(refusal.waitMs / 1000)));
      headers['retry-after-ms'] = String(Math.ceil(refusal.waitMs));
      return { ok: false, message: refusal.message, headers };
    }
    this.requests.level -= 1;
    this.tokens.level -= charge;
    this.inFlight++;
    return { ok: true, headers: this.headers() };
  }

  /** The reply's latency: first token, then each generated token. */
  latencyMs(completionTokens: number): number {
    return (this.limits.firstTokenMs ?? 0) + completionTokens * (this.limits.msPerToken ?? 0);
  }

  /** A request admitted earlier is done: its charge becomes what it used. Returns the headers. */
  done(charge: number, used: number, arrivedAt: number): Record<string, string> {
    this.refill();
    this.inFlight--;
    this.tokens.level += charge - used;
    this.log.push({ arrivedAt, doneAt: this.now(), status: 200, tokens: used });
    return this.headers();
  }

  /** A request admitted earlier ended without a reply (a scripted fault): its slot is free, its
   * charge stands. */
  release(): void {
    this.inFlight--;
  }

  private headers(): Record<string, string> {
    if (this.limits.headers === false) return {};
    const out: Record<string, string> = {};
    const { requestsPerMinute: rpm, tokensPerMinute: tpm } = this.limits;
    if (rpm !== undefined) {
      out['x-ratelimit-limit-requests'] = String(rpm);
      out['x-ratelimit-remaining-requests'] = String(Math.max(0, Math.floor(this.requests.level)));
      out['x-ratelimit-reset-requests'] = duration(((this.capacity(rpm) - this.requests.level) * 60_000) / rpm);
    }
    if (tpm !== undefined) {
      out['x-ratelimit-limit-tokens'] = String(tpm);
      out['x-ratelimit-remaining-tokens'] = String(Math.max(0, Math.floor(this.tokens.level)));
      out['x-ratelimit-reset-tokens'] = duration(((this.capacity(tpm) - this.tokens.level) * 60_000) / tpm);
    }
    return out;
  }
}

function seconds(ms: number): string {
  return (Math.ceil(ms / 10) / 100).toFixed(2).replace(/\.?0+$/, '');
}

/** A duration as OpenAI writes it: `20ms`, `1.5s`, `6m0s`. */
function duration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.ceil(ms))}ms`;
  if (ms < 60_000) return `${Math.round(ms / 10) / 100}s`;
  const m = Math.floor(ms / 60_000);
  return `${m}m${Math.round((ms - m * 60_000) / 1000)}s`;
}
