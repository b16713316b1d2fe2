// A pool of warm Lean REPL processes behind the `LeanRunner` contract.
//
// - Each process keeps the environments of the headers it has imported; a check goes to an idle
//   process that already has its header when there is one, so a header is imported once per
//   process, not once per check.
// - A process that is killed (timeout, crash, cancellation, memory) or retired (max uses, memory
//   grown past the cap) is replaced at once and the replacement imports the library header in
//   the background, so the next check finds a warm process.
// - When every process is busy, checks wait in order; a waiting check honours its AbortSignal.
// - A crash mid-check is retried once on a fresh process; a second crash surfaces as a retryable
//   LeanReplCrashed (an EngineError), so the activity's retry policy takes over.
// - Verdict integrity (decision 0017): a REPL that writes anything but the one reply to the
//   command just sent (repl-process.ts) is killed and the check is `refused` for tampering; a
//   parse error from Lean on a text the screen accepted is `refused` as a disagreement, and the
//   REPL is replaced. Both are logged and reported through `onIntegrity` (a metrics counter).
// - Trust domains: a process that has run one domain's text never runs another's; a check of
//   another domain takes a clean process (one that has imported only the library header) or
//   has the slot's process killed and replaced first.
import { LEAN_FAILURE } from '../../common/failures';
import { DRIFTLINE_DOMAIN } from '../../common/trust-domain';
import { EngineError } from '../errors';
import type { CompileResult } from '../../common/lean-types';
import { importHeader } from './header-import';
import { buildCheckSource, compileStatus, toLeanMessages, type CheckSource } from './lean-source';
import type { CheckOptions, LeanRunner, RunnerLog } from './runner-contract';
import { canMeasureRss, groupPeakMb, groupRssMb, resetGroupPeak } from './process-memory';
import { ReplCrashedError, ReplProcess, ReplTamperedError, ReplTimeoutError } from './repl-process';
import { isErrorReply, UNKNOWN_ENVIRONMENT, type ReplReply } from './repl-protocol';
import { DEFAULT_SAFETY_POLICY, screenCheckSource, screenHeader, screenReplInput, type SafetyPolicy } from './statement-safety';

export interface ReplPoolSettings {
  /** Shell command that starts the REPL (already wrapped by the sandbox, if any). */
  replCmd: string;
  cwd?: string;
  /** Library header, e.g. `import Mathlib`: what replacement processes import ahead of time. */
  header: string;
  /** Default time for one statement. */
  timeoutMs: number;
  /** Time for importing a header. Default 10 minutes. */
  headerTimeoutMs?: number;
  /** Number of REPL processes. Default 1. */
  size?: number;
  /** Checks per process before it is retired: the REPL keeps every environment it ever made. */
  maxUses?: number;
  /** Resident memory cap of a process group, MB. Watched during a check (killed when passed)
   * and after it (retired when passed). Needs /proc; ignored elsewhere. */
  maxRssMb?: number;
  /** How often memory is sampled during a check. Default 500 ms. */
  rssIntervalMs?: number;
  /** Replace a retired or killed process at once and import the library header into it.
   * Default true. */
  eagerReplace?: boolean;
  env?: Record<string, string>;
  log?: RunnerLog;
  /** What the gate in front of the processes lets through; default DEFAULT_SAFETY_POLICY. */
  policy?: SafetyPolicy;
  /** Time for the confirmation command after each reply (repl-process.ts). */
  confirmTimeoutMs?: number;
  /** Hears every tampering and every screen/Lean disagreement: each is a hole found, so the
   * Lean worker counts them where operators look (its /metrics). */
  onIntegrity?: (event: IntegrityEvent) => void;
}

/** A REPL that wrote what it should not have, or a parse error on a text the screen accepted. */
export interface IntegrityEvent {
  kind: 'tampering' | 'disagreement';
  domain: string;
  /** During a check (its result is refused), or while the process was idle. */
  during: 'check' | 'idle';
  detail: string;
}

export interface PoolStats {
  size: number;
  busy: number;
  warming: number;
  waiting: number;
  /** Processes started so far. */
  started: number;
  /** Header imports run so far (all processes). */
  headerImports: number;
  /** Processes ended, by reason (`tampering` and `disagreement` are the integrity events;
   * `domain`: killed to serve another trust domain). */
  retired: Record<RetireReason, number>;
}

type RetireReason = 'maxUses' | 'memory' | 'timeout' | 'crash' | 'cancelled' | 'staleEnv' | 'tampering' | 'disagreement' | 'domain';

interface Slot {
  id: number;
  proc: ReplProcess | undefined;
  /** header text → env id in `proc` */
  headerEnvs: Map<string, number>;
  uses: number;
  state: 'idle' | 'busy' | 'warming';
  /** The trust domain whose text `proc` has run; undefined while it has imported only the
   * library header (clean: any domain may take it). */
  domain: string | undefined;
}

interface Waiter {
  header: string;
  domain: string;
  /** Times a later check of another domain took a slot before this one (bounded: see dispatch). */
  passedOver: number;
  resolve(slot: Slot): void;
  reject(error: unknown): void;
  detach(): void;
}

const DEFAULT_HEADER_TIMEOUT_MS = 600_000;

function refusedResult(
  refusal: { message: CompileResult['messages'][number]; reason: string },
  where: string,
  started: number,
): CompileResult {
  return {
    status: 'refused',
    messages: [refusal.message],
    reason: `refused before Lean (${where}): ${refusal.reason}`,
    durationMs: Date.now() - started,
  };
}

/** A process used more memory than allowed while checking; it was killed. */
class MemoryCapError extends Error {
  constructor(
    readonly rssMb: number,
    readonly capMb: number,
  ) {
    super(`Lean used ${Math.round(rssMb)} MB (cap ${capMb} MB) while checking; the process was killed.`);
  }
}

export class ReplPool implements LeanRunner {
  private readonly slots: Slot[];
  private readonly waiters: Waiter[] = [];
  private closed = false;
  private readonly measureRss: boolean;
  /** /proc tells process memory here: each check reports its peak (with or without a cap). */
  private readonly procReadable = canMeasureRss();
  /** The configured library header, as the screen rebuilt it. */
  private readonly libraryHeader: string;
  /** The check source of the library header alone (what warm-up imports). */
  private readonly librarySource: CheckSource;
  private warmOk = true;
  private readonly counters: Omit<PoolStats, 'size' | 'busy' | 'warming' | 'waiting'> = {
    started: 0,
    headerImports: 0,
    retired: { maxUses: 0, memory: 0, timeout: 0, crash: 0, cancelled: 0, staleEnv: 0, tampering: 0, disagreement: 0, domain: 0 },
  };

  constructor(private readonly settings: ReplPoolSettings) {
    // The library header is configuration, and it is screened like everything else.
    const header = screenHeader(settings.header, settings.policy ?? DEFAULT_SAFETY_POLICY);
    if (!header.ok) throw new Error(`The Lean library header ${JSON.stringify(settings.header)} is refused: ${header.reason}.`);
    this.libraryHeader = header.value;
    this.librarySource = buildCheckSource('', header.value);
    const size = Math.max(1, Math.floor(settings.size ?? 1));
    this.slots = Array.from({ length: size }, (_, id) => ({
      id,
      proc: undefined,
      headerEnvs: new Map(),
      uses: 0,
      state: 'idle' as const,
      domain: undefined,
    }));
    this.measureRss = Boolean(settings.maxRssMb) && canMeasureRss();
    if (settings.maxRssMb && !this.measureRss)
      settings.log?.warn({}, 'LEAN_MAX_RSS_MB is set but /proc is not readable here; memory is not watched');
  }

  get size(): number {
    return this.slots.length;
  }

  ready(): boolean {
    return !this.closed;
  }

  stats(): PoolStats {
    return {
      size: this.slots.length,
      busy: this.slots.filter((s) => s.state === 'busy').length,
      warming: this.slots.filter((s) => s.state === 'warming').length,
      waiting: this.waiters.length,
      ...structuredClone(this.counters),
    };
  }

  /** Starts every process and imports the library header into each, in parallel. */
  async warm(): Promise<void> {
    const source = this.librarySource;
    const idle = this.slots.filter((s) => s.state === 'idle' && !s.headerEnvs.has(source.header));
    for (const slot of idle) slot.state = 'busy';
    const results = await Promise.allSettled(
      idle.map(async (slot) => {
        try {
          await this.headerEnv(slot, source);
        } catch (error) {
          this.warmOk = false;
          this.discard(slot, 'crash');
          throw error;
        } finally {
          this.release(slot);
        }
      }),
    );
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  }

  async check(code: string, opts: CheckOptions = {}): Promise<CompileResult> {
    const started = Date.now();
    // The gate: the one place text reaches a REPL, so no caller can skip the screen. Lean is
    // sent what the screen rebuilt.
    const policy = this.settings.policy ?? DEFAULT_SAFETY_POLICY;
    const header = opts.header === undefined ? ({ ok: true, value: this.libraryHeader } as const) : screenHeader(opts.header, policy);
    if (!header.ok) return refusedResult(header, 'the header', started);
    const body = screenReplInput(code, policy);
    if (!body.ok) return refusedResult(body, 'the text', started);
    const source = buildCheckSource(body.value, header.value);
    const composed = screenCheckSource(source, policy); // what is sent passes the same gate
    if (composed) return refusedResult(composed, 'the composed check', started);
    const domain = opts.domain ?? DRIFTLINE_DOMAIN;
    for (let attempt = 0; ; attempt++) {
      const slot = await this.acquire(source.header, domain, opts.signal);
      try {
        const result = await this.runOn(slot, source, domain, opts);
        return { ...result, durationMs: Date.now() - started };
      } catch (error) {
        if (error instanceof ReplCrashedError && attempt === 0 && !opts.signal?.aborted && !this.closed) {
          this.settings.log?.warn({ slot: slot.id, error: error.message }, 'Lean REPL crashed mid-check; retrying once on a fresh process');
          continue;
        }
        throw error;
      } finally {
        this.release(slot);
      }
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const waiter of this.waiters.splice(0)) {
      waiter.detach();
      waiter.reject(poolClosed('The Lean pool is shutting down.'));
    }
    await Promise.all(
      this.slots.map(async (slot) => {
        const proc = slot.proc;
        slot.proc = undefined;
        slot.headerEnvs.clear();
        await proc?.close();
      }),
    );
  }

  // ---- one check on one process ----

  private async runOn(slot: Slot, source: CheckSource, domain: string, opts: CheckOptions): Promise<Omit<CompileResult, 'durationMs'>> {
    const timeoutMs = opts.timeoutMs ?? this.settings.timeoutMs;
    // Another domain's process is never reused: killed here, a fresh one is started below.
    if (slot.proc && slot.domain !== undefined && slot.domain !== domain) this.discard(slot, 'domain');
    try {
      // Twice at most: an unknown environment means our record of the process is stale.
      for (let attempt = 0; ; attempt++) {
        // From here on the process runs this domain's text (its own header counts, even when
        // its import fails).
        this.process(slot);
        if (source.header !== this.librarySource.header) slot.domain = domain;
        const env = await this.headerEnv(slot, source, opts.signal);
        if (typeof env !== 'number') return env;
        slot.domain = domain;
        const proc = slot.proc;
        if (!proc) throw poolClosed('The Lean pool is shutting down.');
        // The peak mark is reset just before the statement, so it tells this statement's peak
        // (the imported header's memory included: it is resident while Lean checks).
        const peakFrom = this.procReadable && proc.pid !== undefined && resetGroupPeak(proc.pid) ? proc.pid : undefined;
        const reply = await this.watched(proc, () => proc.request({ cmd: source.body, env }, { timeoutMs, signal: opts.signal }));
        if (isErrorReply(reply) && reply.message === UNKNOWN_ENVIRONMENT && attempt === 0) {
          this.settings.log?.warn({ slot: slot.id, env }, 'Lean REPL forgot an environment; importing the header again');
          slot.headerEnvs.delete(source.header);
          continue;
        }
        const peakRssMb = peakFrom !== undefined ? Math.round(groupPeakMb(peakFrom)) : 0;
        slot.uses++;
        const parseError = isErrorReply(reply) ? undefined : reply.messages?.find((m) => m.severity === 'error' && isParseError(m.data));
        if (parseError) {
          // The screen read this text as well formed and Lean did not: where they part, Lean
          // starts guessing, so nothing it did after counts, and the process is not trusted.
          const where = `line ${parseError.pos.line}, column ${parseError.pos.column}`;
          const detail = `${parseError.data.split('\n')[0]} (${where})`;
          this.integrity(slot, 'disagreement', domain, 'check', detail);
          const text = `refused: Lean could not parse the text the screen accepted: ${parseError.data.trimEnd()}`;
          return {
            status: 'refused',
            refusedBy: 'disagreement',
            messages: [{ severity: 'error', line: Math.max(1, parseError.pos.line), column: Math.max(0, parseError.pos.column), text }],
            reason: `Lean could not parse the text the screen accepted as well formed: ${detail}; nothing Lean said about it counts, and the REPL was replaced.`,
          };
        }
        this.afterCheck(slot);
        return { ...resultOf(reply), ...(peakRssMb > 0 ? { peakRssMb } : {}) };
      }
    } catch (error) {
      if (error instanceof ReplTamperedError) {
        this.integrity(slot, 'tampering', domain, 'check', error.detail);
        return {
          status: 'refused',
          refusedBy: 'tampering',
          messages: [{ severity: 'error', line: 1, column: 0, text: `refused for tampering: ${error.message}` }],
          reason: `${error.message} The check counts as refused, never as compiled, and the REPL was replaced.`,
        };
      }
      if (error instanceof ReplTimeoutError) {
        this.discard(slot, 'timeout');
        this.settings.log?.warn({ slot: slot.id, timeoutMs }, 'Lean check timed out; REPL process replaced');
        return {
          status: 'timeout',
          messages: [{ severity: 'error', line: 1, column: 0, text: `Lean did not finish checking within ${timeoutMs} ms.` }],
          reason: `Lean did not finish checking the statement within ${timeoutMs} ms; the REPL was restarted.`,
        };
      }
      if (error instanceof MemoryCapError) {
        this.discard(slot, 'memory');
        this.settings.log?.warn(
          { slot: slot.id, rssMb: Math.round(error.rssMb) },
          'Lean check passed the memory cap; REPL process replaced',
        );
        return {
          status: 'error',
          messages: [{ severity: 'error', line: 1, column: 0, text: error.message }],
          reason: `${error.message} Simplify the statement or raise LEAN_MAX_RSS_MB.`,
        };
      }
      this.discard(slot, error instanceof ReplCrashedError ? 'crash' : 'cancelled');
      throw error;
    }
  }

  /** The header's env in this slot's process (starting the process if needed). */
  private async headerEnv(slot: Slot, source: CheckSource, signal?: AbortSignal): Promise<number | Omit<CompileResult, 'durationMs'>> {
    const proc = this.process(slot);
    const cached = slot.headerEnvs.get(source.header);
    if (cached !== undefined) return cached;
    const started = Date.now();
    this.counters.headerImports++;
    const timeoutMs = this.settings.headerTimeoutMs ?? DEFAULT_HEADER_TIMEOUT_MS;
    const env = await this.watched(proc, () => importHeader(proc, source, { timeoutMs, signal }));
    if (typeof env === 'number') {
      slot.headerEnvs.set(source.header, env);
      this.settings.log?.info({ slot: slot.id, pid: proc.pid, env, ms: Date.now() - started }, 'Lean header imported');
    }
    return env;
  }

  /** Runs a request while sampling the process group's memory; past the cap the group is
   * killed and the request fails with MemoryCapError. */
  private async watched<T>(proc: ReplProcess, request: () => Promise<T>): Promise<T> {
    const cap = this.settings.maxRssMb;
    const pid = proc.pid;
    if (!this.measureRss || !cap || pid === undefined) return request();
    let over: number | undefined;
    const timer = setInterval(() => {
      const rss = groupRssMb(pid);
      if (rss > cap && over === undefined) {
        over = rss;
        proc.kill();
      }
    }, this.settings.rssIntervalMs ?? 500);
    try {
      return await request();
    } catch (error) {
      if (over !== undefined) throw new MemoryCapError(over, cap);
      throw error;
    } finally {
      clearInterval(timer);
    }
  }

  /** Retires a healthy process that has been used enough or grown too large. */
  private afterCheck(slot: Slot): void {
    const { maxUses, maxRssMb } = this.settings;
    if (maxUses && slot.uses >= maxUses) {
      this.retire(slot, 'maxUses');
      return;
    }
    const pid = slot.proc?.pid;
    if (this.measureRss && maxRssMb && pid !== undefined) {
      const rss = groupRssMb(pid);
      if (rss > maxRssMb) {
        this.settings.log?.info(
          { slot: slot.id, rssMb: Math.round(rss), capMb: maxRssMb },
          'Lean REPL grew past the memory cap; recycling',
        );
        this.retire(slot, 'memory');
      }
    }
  }

  private process(slot: Slot): ReplProcess {
    if (this.closed) throw poolClosed('The Lean pool is shut down.');
    if (!slot.proc || !slot.proc.alive) {
      slot.headerEnvs.clear();
      slot.uses = 0;
      slot.domain = undefined;
      const proc = new ReplProcess({
        command: this.settings.replCmd,
        cwd: this.settings.cwd,
        env: this.settings.env,
        confirmTimeoutMs: this.settings.confirmTimeoutMs,
        // Output between checks: something left running in the process, which is dead already.
        // An idle slot gets a fresh process at once, a busy one when its check returns.
        onTamper: (detail) => {
          if (slot.proc !== proc) return;
          this.integrity(slot, 'tampering', slot.domain ?? DRIFTLINE_DOMAIN, 'idle', detail);
          if (slot.state === 'idle' && !this.closed && (this.settings.eagerReplace ?? true)) this.rewarm(slot);
        },
      });
      slot.proc = proc;
      this.counters.started++;
      this.settings.log?.info({ slot: slot.id, pid: slot.proc.pid }, 'Lean REPL started');
    }
    return slot.proc;
  }

  /** Kills the slot's process (unusable: timed out, crashed, cancelled mid-command, tampered
   * with, or another trust domain's). */
  private discard(slot: Slot, reason: RetireReason): void {
    if (slot.proc) this.counters.retired[reason]++;
    slot.proc?.kill();
    slot.proc = undefined;
    slot.domain = undefined;
    slot.headerEnvs.clear();
  }

  /** A tampering or a disagreement: the process goes, the event is logged and reported. */
  private integrity(slot: Slot, kind: IntegrityEvent['kind'], domain: string, during: IntegrityEvent['during'], detail: string): void {
    // A slot busy between two requests keeps its dead process until the check's next request
    // finds it gone (a crash, retried on a fresh process); otherwise it goes now.
    if (during === 'check' || slot.state !== 'busy') this.discard(slot, kind);
    else this.counters.retired[kind]++;
    this.settings.log?.warn(
      { slot: slot.id, domain, during, detail, leanIntegrity: kind },
      kind === 'tampering'
        ? 'Lean REPL tampering: output that is not the reply to the command; REPL replaced'
        : 'Lean parse error on a text the screen accepted: screen and Lean disagree; REPL replaced',
    );
    this.settings.onIntegrity?.({ kind, domain, during, detail });
  }

  /** Ends a healthy process gracefully. */
  private retire(slot: Slot, reason: RetireReason): void {
    const proc = slot.proc;
    if (proc) this.counters.retired[reason]++;
    slot.proc = undefined;
    slot.domain = undefined;
    slot.headerEnvs.clear();
    void proc?.close();
  }

  // ---- scheduling ----

  private acquire(header: string, domain: string, signal?: AbortSignal): Promise<Slot> {
    if (this.closed) return Promise.reject(poolClosed('The Lean pool is shut down.'));
    if (signal?.aborted) return Promise.reject(abortError(signal));
    if (this.waiters.length === 0) {
      const slot = this.pick(header, domain);
      if (slot) {
        slot.state = 'busy';
        return Promise.resolve(slot);
      }
    }
    return new Promise<Slot>((resolve, reject) => {
      const onAbort = () => {
        const i = this.waiters.indexOf(waiter);
        if (i >= 0) this.waiters.splice(i, 1);
        reject(abortError(signal!));
      };
      const waiter: Waiter = {
        header,
        domain,
        passedOver: 0,
        resolve,
        reject,
        detach: () => signal?.removeEventListener('abort', onAbort),
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  /** The best idle slot for a check: a live process of the check's domain (or a clean one) with
   * the header, else such a process without it, else a slot with no process, else another
   * domain's (its process is killed before use: a header import, the price of isolation). */
  private pick(header: string, domain: string): Slot | undefined {
    const idle = this.slots.filter((s) => s.state === 'idle');
    const live = idle.filter((s) => s.proc?.alive);
    const mine = live.filter((s) => s.domain === domain);
    const clean = live.filter((s) => s.domain === undefined);
    return (
      mine.find((s) => s.headerEnvs.has(header)) ??
      clean.find((s) => s.headerEnvs.has(header)) ??
      mine[0] ??
      clean[0] ??
      idle.find((s) => !s.proc?.alive) ??
      idle[0]
    );
  }

  private release(slot: Slot): void {
    if (this.closed) {
      slot.state = 'idle';
      return;
    }
    const replace = (this.settings.eagerReplace ?? true) && this.warmOk && !slot.proc && slot.state === 'busy';
    slot.state = 'idle';
    if (replace) this.rewarm(slot);
    this.dispatch();
  }

  /** A fresh process for the slot, importing the library header before it takes checks. */
  private rewarm(slot: Slot): void {
    slot.state = 'warming';
    const source = this.librarySource;
    void this.headerEnv(slot, source)
      .then(() => {
        this.warmOk = true;
      })
      .catch((error: unknown) => {
        // Left to the next check, which will report the problem properly; no warm-up loop.
        this.warmOk = false;
        this.discard(slot, 'crash');
        this.settings.log?.warn({ slot: slot.id, error: (error as Error).message }, 'Lean REPL warm-up failed');
      })
      .finally(() => {
        slot.state = 'idle';
        this.dispatch();
      });
  }

  /** Hands idle slots to waiting checks in order, except that a slot whose process belongs to
   * another domain than the first waiter's goes to the first later waiter of its own domain,
   * when there is one: a process is killed to switch domains only when no waiting check can use
   * it as it is. The first waiter is passed over at most `size` times, so it never starves. */
  private dispatch(): void {
    while (this.waiters.length > 0) {
      const head = this.waiters[0]!;
      const slot = this.pick(head.header, head.domain);
      if (!slot) return;
      let index = 0;
      const switches = slot.proc?.alive && slot.domain !== undefined && slot.domain !== head.domain;
      if (switches && head.passedOver < this.slots.length) {
        const own = this.waiters.findIndex((w) => w.domain === slot.domain);
        if (own > 0) {
          head.passedOver++;
          index = own;
        }
      }
      const [waiter] = this.waiters.splice(index, 1);
      waiter!.detach();
      slot.state = 'busy';
      waiter!.resolve(slot);
    }
  }
}

function resultOf(reply: ReplReply): Omit<CompileResult, 'durationMs'> {
  if (isErrorReply(reply)) {
    return {
      status: 'error',
      messages: [{ severity: 'error', line: 1, column: 0, text: reply.message }],
      reason: `The Lean REPL could not run the statement: ${reply.message}`,
    };
  }
  const messages = toLeanMessages(reply.messages);
  return { status: compileStatus(messages), messages };
}

/** Lean's parser speaking (as opposed to the elaborator): where it stops, it starts guessing. */
const PARSE_ERROR =
  /^(?:unexpected (?:token|identifier|end of input|character)|missing end of character literal|unterminated (?:comment|string literal)|invalid escape sequence)/;

export function isParseError(text: string): boolean {
  return PARSE_ERROR.test(text.trimStart());
}

function abortError(signal: AbortSignal): Error {
  if (signal.reason instanceof Error) return signal.reason;
  const error = new Error('The Lean check was cancelled.');
  error.name = 'AbortError';
  return error;
}

/** A check that meets a closing pool: retryable, another worker (or this one restarted) takes it. */
function poolClosed(message: string): EngineError {
  return new EngineError(LEAN_FAILURE.replCrashed, message);
}
