// Checking statements with Lean: the `LeanRunner` contract, the single-process runner used
// until the pool exists, and the runner for machines without Lean.
import { ApplicationFailure } from '@temporalio/common';
import type { CompileResult } from '../../common/types';
import { buildCheckSource, compileStatus, headerFailure, toLeanMessages, type CheckSource } from './lean-source';
import { ReplCrashedError, ReplProcess, ReplTimeoutError } from './repl-process';
import { isErrorReply, UNKNOWN_ENVIRONMENT, type ReplReply } from './repl-protocol';

export interface CheckOptions {
  /** Time allowed for the statement itself (not for importing the header). */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Header to check against instead of the runner's library header (e.g. an item's own). */
  header?: string;
}

export interface LeanRunner {
  check(code: string, opts?: CheckOptions): Promise<CompileResult>;
  close(): Promise<void>;
  /** Whether the runner accepts checks (false once closed). */
  ready(): boolean;
  /** Starts Lean and imports the library header ahead of the first check. */
  warm?(): Promise<void>;
}

/** Temporal failure types raised by runners; activity retry policies can refer to them. */
export const LEAN_REPL_CRASHED = 'LeanReplCrashed';
export const LEAN_HEADER_TIMEOUT = 'LeanHeaderTimeout';
export const LEAN_HEADER_FAILED = 'LeanHeaderFailed';

export const SKIPPED_REASON = 'No Lean REPL configured (set LEAN_REPL_CMD); the statement was not checked.';

/** Used when no REPL is configured: nothing is checked, and results say so. */
export class SkippedLeanRunner implements LeanRunner {
  private closed = false;

  async check(): Promise<CompileResult> {
    return { status: 'skipped', messages: [], reason: SKIPPED_REASON, durationMs: 0 };
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  ready(): boolean {
    return !this.closed;
  }
}

export interface SingleReplRunnerSettings {
  /** Shell command that starts the REPL. */
  replCmd: string;
  cwd?: string;
  /** Library header, e.g. `import Mathlib`. */
  header: string;
  /** Default time for one statement. */
  timeoutMs: number;
  /** Time for importing a header; a cold Mathlib import takes far longer than a statement. */
  headerTimeoutMs?: number;
  /** Start a fresh process after this many checks: the REPL keeps every environment it ever
   * made, so a long-lived one only grows. */
  maxChecksPerProcess?: number;
  /** Extra environment for the REPL process. */
  env?: Record<string, string>;
  /** Structured log sink (pino-compatible). */
  log?: RunnerLog;
}

export interface RunnerLog {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

const DEFAULT_HEADER_TIMEOUT_MS = 600_000;

/**
 * One REPL process, started on first use and replaced after a crash, a timeout or a cancelled
 * check. Checks run one at a time; each distinct header is imported once per process and its
 * environment reused for every statement.
 */
export class SingleReplRunner implements LeanRunner {
  private proc: ReplProcess | undefined;
  private checksOnProc = 0;
  private readonly headerEnvs = new Map<string, number>();
  private queue: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(private readonly settings: SingleReplRunnerSettings) {}

  ready(): boolean {
    return !this.closed;
  }

  check(code: string, opts: CheckOptions = {}): Promise<CompileResult> {
    return this.serialized(opts.signal, () => this.checkNow(code, opts));
  }

  warm(): Promise<void> {
    return this.serialized(undefined, async () => {
      try {
        await this.headerEnv(this.process(), buildCheckSource('', this.settings.header));
      } catch (error) {
        this.discardProcess();
        throw toFailure(error);
      }
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    const proc = this.proc;
    this.proc = undefined;
    this.headerEnvs.clear();
    await proc?.close();
  }

  private async checkNow(code: string, opts: CheckOptions): Promise<CompileResult> {
    const started = Date.now();
    const source = buildCheckSource(code, opts.header ?? this.settings.header);
    const timeoutMs = opts.timeoutMs ?? this.settings.timeoutMs;
    try {
      // Twice at most: an unknown environment means our cache is stale; re-import once.
      for (let attempt = 0; ; attempt++) {
        const proc = this.process();
        const env = await this.headerEnv(proc, source, opts.signal);
        if (typeof env !== 'number') return { ...env, durationMs: Date.now() - started };
        const reply = await proc.request({ cmd: source.body, env }, { timeoutMs, signal: opts.signal });
        if (isErrorReply(reply) && reply.message === UNKNOWN_ENVIRONMENT && attempt === 0) {
          this.headerEnvs.delete(source.header);
          continue;
        }
        this.checksOnProc++;
        if (this.settings.maxChecksPerProcess && this.checksOnProc >= this.settings.maxChecksPerProcess) {
          this.recycleProcess();
        }
        return { ...this.result(reply), durationMs: Date.now() - started };
      }
    } catch (error) {
      this.discardProcess();
      if (error instanceof ReplTimeoutError) {
        this.settings.log?.warn({ timeoutMs }, 'Lean check timed out; REPL process replaced');
        return {
          status: 'timeout',
          messages: [{ severity: 'error', line: 1, column: 0, text: `Lean did not finish checking within ${timeoutMs} ms.` }],
          reason: `Lean did not finish checking the statement within ${timeoutMs} ms; the REPL was restarted.`,
          durationMs: Date.now() - started,
        };
      }
      throw toFailure(error);
    }
  }

  /** The header's environment, importing it on a miss; or a finished result when it failed. */
  private async headerEnv(
    proc: ReplProcess,
    source: CheckSource,
    signal?: AbortSignal,
  ): Promise<number | Omit<CompileResult, 'durationMs'>> {
    const cached = this.headerEnvs.get(source.header);
    if (cached !== undefined) return cached;
    const timeoutMs = this.settings.headerTimeoutMs ?? DEFAULT_HEADER_TIMEOUT_MS;
    const started = Date.now();
    let reply: ReplReply;
    try {
      reply = await proc.request({ cmd: source.header }, { timeoutMs, signal });
    } catch (error) {
      if (!(error instanceof ReplTimeoutError)) throw error;
      throw ApplicationFailure.retryable(
        `Importing the Lean header took longer than ${timeoutMs} ms (header: ${JSON.stringify(source.header)}). ` +
          'The machine may be overloaded or the library not built; raise the header timeout if imports are just slow.',
        LEAN_HEADER_TIMEOUT,
      );
    }
    if (isErrorReply(reply)) {
      throw ApplicationFailure.nonRetryable(`The Lean REPL refused the header: ${reply.message}`, LEAN_HEADER_FAILED);
    }
    const failure = headerFailure(reply.messages, source);
    if (failure?.blame === 'statement') {
      return { status: 'error', messages: failure.messages, reason: 'An import of the statement failed.' };
    }
    if (failure?.blame === 'library') {
      throw ApplicationFailure.nonRetryable(
        `The library header does not elaborate, so no statement can be checked: ${failure.text}\n` +
          `Header: ${JSON.stringify(source.header)}. Check the configured header and the REPL's working directory.`,
        LEAN_HEADER_FAILED,
      );
    }
    this.headerEnvs.set(source.header, reply.env);
    this.settings.log?.info({ env: reply.env, pid: proc.pid, ms: Date.now() - started }, 'Lean header imported');
    return reply.env;
  }

  private result(reply: ReplReply): Omit<CompileResult, 'durationMs'> {
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

  private process(): ReplProcess {
    if (this.closed) throw ApplicationFailure.retryable('The Lean runner is shut down.', LEAN_REPL_CRASHED);
    if (!this.proc || !this.proc.alive) {
      this.headerEnvs.clear();
      this.checksOnProc = 0;
      this.proc = new ReplProcess({
        command: this.settings.replCmd,
        cwd: this.settings.cwd,
        env: this.settings.env,
        onNoise: (text) => this.settings.log?.warn({ text }, 'Lean REPL noise'),
      });
      this.settings.log?.info({ pid: this.proc.pid }, 'Lean REPL started');
    }
    return this.proc;
  }

  /** Kills the current process; the next check starts a fresh one. */
  private discardProcess(): void {
    this.proc?.kill();
    this.proc = undefined;
    this.headerEnvs.clear();
  }

  /** Retires a healthy process gracefully. */
  private recycleProcess(): void {
    const proc = this.proc;
    this.proc = undefined;
    this.headerEnvs.clear();
    void proc?.close();
  }

  /** Runs `task` after every earlier one; a check cancelled while waiting never starts. */
  private serialized<T>(signal: AbortSignal | undefined, task: () => Promise<T>): Promise<T> {
    const previous = this.queue;
    let release!: () => void;
    this.queue = new Promise((resolve) => (release = resolve));
    const run = async () => {
      await waitUnlessAborted(previous, signal);
      return task();
    };
    const result = run();
    // The slot is free only once both the previous task and this one are done.
    void result.catch(() => {}).then(() => previous).then(release);
    return result;
  }
}

function waitUnlessAborted(previous: Promise<void>, signal: AbortSignal | undefined): Promise<void> {
  if (!signal) return previous;
  if (signal.aborted) return Promise.reject(abortError(signal));
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(abortError(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    void previous.then(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    });
  });
}

function abortError(signal: AbortSignal): Error {
  if (signal.reason instanceof Error) return signal.reason;
  const error = new Error('The Lean check was cancelled.');
  error.name = 'AbortError';
  return error;
}

/** Crashes become retryable Temporal failures (a fresh process will take the retry); anything
 * already a failure, or a cancellation, passes through unchanged. */
function toFailure(error: unknown): unknown {
  if (error instanceof ReplCrashedError) {
    return ApplicationFailure.retryable(error.message, LEAN_REPL_CRASHED, {
      exitCode: error.exitCode,
      signal: error.exitSignal,
    });
  }
  return error;
}

export interface LeanRunnerSettings {
  /** Shell command starting the REPL (`LEAN_REPL_CMD`); absent means Lean is not available. */
  replCmd?: string;
  cwd?: string;
  header: string;
  timeoutMs: number;
  headerTimeoutMs?: number;
  maxChecksPerProcess?: number;
  log?: RunnerLog;
}

export function createLeanRunner(settings: LeanRunnerSettings): LeanRunner {
  const replCmd = settings.replCmd?.trim();
  if (!replCmd) return new SkippedLeanRunner();
  return new SingleReplRunner({ ...settings, replCmd });
}
