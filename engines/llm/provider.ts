// What driftline knows about one LLM provider (one base URL), shared by every call that goes
// there: the structured-output mode that works, and whether the provider is still busy with a
// request we gave up on (a server keeps generating for a client that left, so sending more only
// queues behind it).
import { nextMode, STRUCTURED_MODES, type StructuredMode, type StructuredModeSetting } from './structured-output-modes';

export type ModeSource = 'configured' | 'probe' | 'fallback' | 'default';

/** The provider as /readyz reports it. */
export interface ProviderStatus {
  baseURL: string;
  structuredOutput: StructuredMode;
  /** How the mode was chosen: set by configuration, found by the start probe, after a refusal,
   * or the default before any probe answered. */
  source: ModeSource;
  detail: string;
  /** ISO time of the last change. */
  updatedAt: string;
  foldSystemPrompt: boolean;
  /** ISO time until which no request is sent (after a timeout); absent when not backing off. */
  busyUntil?: string;
}

export interface ProviderOptions {
  structuredOutput: StructuredModeSetting;
  foldSystemPrompt: boolean;
  /** Pause after the first timeout; doubled for each timeout in a row. */
  busyBackoffMs: number;
  maxBusyBackoffMs?: number;
  /** Called on every change, e.g. to write the status where /readyz reads it. */
  onChange?: (status: ProviderStatus) => void;
  now?: () => number;
}

export interface EarlierTimeout {
  /** When the earlier request was given up on. */
  at: number;
  timeoutMs: number;
}

export class Provider {
  private current: StructuredMode;
  private source: ModeSource;
  private detail: string;
  private updatedAt: number;
  private busyUntil = 0;
  private timeoutsInARow = 0;
  private lastTimeout: EarlierTimeout | undefined;
  /** The start-of-work probe, while it runs: structured calls wait for it. */
  probing: Promise<unknown> | undefined;

  constructor(
    readonly baseURL: string,
    private readonly options: ProviderOptions,
  ) {
    const now = this.now();
    this.updatedAt = now;
    if (options.structuredOutput === 'auto') {
      this.current = 'json_schema';
      this.source = 'default';
      this.detail = 'not probed yet; json_schema until a probe or a refusal says otherwise';
    } else {
      this.current = options.structuredOutput;
      this.source = 'configured';
      this.detail = "set by configuration (DRIFTLINE_LLM_STRUCTURED_OUTPUT, or the provider's structuredOutput in DRIFTLINE_PROVIDERS)";
    }
  }

  private now(): number {
    return this.options.now?.() ?? Date.now();
  }

  /** True when the mode may change by itself (probe, fallback). */
  get auto(): boolean {
    return this.options.structuredOutput === 'auto';
  }

  get mode(): StructuredMode {
    return this.current;
  }

  get foldSystemPrompt(): boolean {
    return this.options.foldSystemPrompt;
  }

  /** Records the mode the probe found. */
  detected(mode: StructuredMode, detail: string): void {
    if (!this.auto) return;
    this.set(mode, 'probe', detail);
  }

  /** Records that the probe could not tell (the provider did not answer it properly). */
  probeFailed(detail: string): void {
    if (!this.auto || this.source !== 'default') return;
    this.set(this.current, 'default', `probe failed (${detail}); json_schema until a refusal says otherwise`);
  }

  /**
   * `mode` was refused because of its response_format: move to the next mode (unless another
   * call already moved further) and remember it. Returns the mode to use now, or undefined when
   * none is left.
   */
  refused(mode: StructuredMode, reason: string): StructuredMode | undefined {
    const next = nextMode(mode);
    if (!next) return undefined;
    if (modeRank(this.current) < modeRank(next)) this.set(next, 'fallback', `${mode} was refused: ${reason}`);
    return this.current;
  }

  private set(mode: StructuredMode, source: ModeSource, detail: string): void {
    this.current = mode;
    this.source = source;
    this.detail = detail;
    this.changed();
  }

  private changed(): void {
    this.updatedAt = this.now();
    this.options.onChange?.(this.status());
  }

  /** Milliseconds until requests may be sent again (0: now). */
  busyForMs(): number {
    return Math.max(0, this.busyUntil - this.now());
  }

  /** The timeout that started the current back-off, if any. */
  get earlierTimeout(): EarlierTimeout | undefined {
    return this.lastTimeout;
  }

  /**
   * A request timed out: back off (doubling for timeouts in a row). Returns the back-off and the
   * earlier timeout this one may have queued behind, if it came within the last back-off window.
   */
  timedOut(timeoutMs: number): { backoffMs: number; earlier?: EarlierTimeout } {
    const now = this.now();
    const earlier = this.lastTimeout && this.timeoutsInARow > 0 ? this.lastTimeout : undefined;
    this.timeoutsInARow++;
    const backoffMs = Math.min(this.options.maxBusyBackoffMs ?? 600_000, this.options.busyBackoffMs * 2 ** (this.timeoutsInARow - 1));
    this.busyUntil = Math.max(this.busyUntil, now + backoffMs);
    this.lastTimeout = { at: now, timeoutMs };
    this.changed();
    return earlier ? { backoffMs, earlier } : { backoffMs };
  }

  /** The provider answered (with anything at all): it is keeping up again. */
  answered(): void {
    if (this.timeoutsInARow === 0) return;
    this.timeoutsInARow = 0;
    this.busyUntil = 0;
    this.lastTimeout = undefined;
    this.changed();
  }

  status(): ProviderStatus {
    return {
      baseURL: this.baseURL,
      structuredOutput: this.current,
      source: this.source,
      detail: this.detail,
      updatedAt: new Date(this.updatedAt).toISOString(),
      foldSystemPrompt: this.options.foldSystemPrompt,
      ...(this.busyUntil > this.now() ? { busyUntil: new Date(this.busyUntil).toISOString() } : {}),
    };
  }
}

function modeRank(mode: StructuredMode): number {
  return STRUCTURED_MODES.indexOf(mode);
}
