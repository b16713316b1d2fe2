// One running REPL process: spawning, request/reply over the blank-line protocol, timeouts,
// crash detection and shutdown. It knows nothing about headers or statements.
import { LEAN_FAILURE } from '../../common/failures';
import { EngineError } from '../errors';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { encodeCommand, parseReply, ReplyFramer, type ReplCommand, type ReplReply } from './repl-protocol';
import { replEnvironment } from './sandbox';

export interface ReplProcessOptions {
  /** Shell command that starts the REPL, e.g. `lake env ../repl/.lake/build/bin/repl`. */
  command: string;
  cwd?: string;
  /** Extra environment variables for the process, added to the cleaned environment (never this
   * process's whole one: it holds the worker's API keys). */
  env?: Record<string, string>;
  /** Called with stdout text that is not a reply, and other diagnostics worth a log line. */
  onNoise?: (text: string) => void;
  /** How much of stderr to keep for crash reports. */
  stderrTailChars?: number;
}

export interface RequestOptions {
  timeoutMs: number;
  signal?: AbortSignal;
}

/** The REPL did not answer in time; its process group has been killed. */
export class ReplTimeoutError extends Error {
  override readonly name = 'ReplTimeoutError';
  constructor(readonly timeoutMs: number) {
    super(`The Lean REPL did not answer within ${timeoutMs} ms; its process was killed.`);
  }
}

/** The REPL exited (or could not be started) while a request was pending, or answered with
 * something that is not a REPL reply. */
export class ReplCrashedError extends EngineError {
  override readonly name = 'ReplCrashedError';
  constructor(
    message: string,
    readonly exitCode: number | null,
    readonly exitSignal: string | null,
    readonly stderrTail: string,
  ) {
    // Retryable (LeanReplCrashed): a fresh process takes the retry.
    super(LEAN_FAILURE.replCrashed, stderrTail ? `${message}\nstderr (tail):\n${stderrTail}` : message, {
      details: { exitCode, signal: exitSignal },
    });
  }
}

interface Pending {
  resolve(reply: ReplReply): void;
  reject(error: Error): void;
}

// Detached process groups outlive us unless killed: make sure a dying worker or test runner
// takes its REPLs along.
const live = new Set<ReplProcess>();
let exitHookInstalled = false;
function trackForExit(proc: ReplProcess): void {
  live.add(proc);
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const p of live) p.kill();
  });
}

export class ReplProcess {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly framer: ReplyFramer;
  private readonly stderrTailChars: number;
  private stderrTail = '';
  private pending: Pending | undefined;
  private exited = false;
  private killed = false;
  private exitCode: number | null = null;
  private exitSignal: string | null = null;
  private readonly closed: Promise<void>;

  constructor(private readonly options: ReplProcessOptions) {
    this.stderrTailChars = options.stderrTailChars ?? 4000;
    this.framer = new ReplyFramer((text) => options.onNoise?.(`REPL stdout noise: ${text.slice(0, 500)}`));
    // Own process group (detached), so a kill reaches the REPL behind `lake env` or a shell.
    this.child = spawn(options.command, {
      shell: true,
      detached: true,
      cwd: options.cwd,
      // Only what Lean needs (sandbox.ts): the REPL runs text from outside.
      env: { ...replEnvironment(process.env), ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    trackForExit(this);
    this.child.stdout.setEncoding('utf8');
    this.child.stderr.setEncoding('utf8');
    this.child.stdout.on('data', (chunk: string) => this.onStdout(chunk));
    this.child.stderr.on('data', (chunk: string) => {
      this.stderrTail = (this.stderrTail + chunk).slice(-this.stderrTailChars);
    });
    // Writing to a REPL that just died raises EPIPE here; the 'close' handler reports it.
    this.child.stdin.on('error', () => {});
    this.closed = new Promise((resolve) => {
      this.child.once('error', (error) => {
        this.stderrTail = (this.stderrTail + `\n${error.message}`).slice(-this.stderrTailChars);
      });
      // 'close' (not 'exit') fires after stdout is drained, so a reply written just before
      // exiting is still delivered first.
      this.child.once('close', (code, signal) => {
        this.exited = true;
        this.exitCode = code;
        this.exitSignal = signal;
        live.delete(this);
        this.fail(
          new ReplCrashedError(
            `The Lean REPL exited while a request was pending (${describeExit(code, signal)}).`,
            code,
            signal,
            this.stderrTail.trim(),
          ),
        );
        resolve();
      });
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** True until the process has exited or been killed. */
  get alive(): boolean {
    return !this.exited && this.child.exitCode === null && this.child.signalCode === null && !this.killed;
  }

  get busy(): boolean {
    return this.pending !== undefined;
  }

  /**
   * Sends one command and resolves with its reply. One request at a time: callers serialize.
   * On timeout or abort the whole process group is killed, since the REPL cannot be
   * interrupted mid-command; the process is unusable afterwards.
   */
  request(command: ReplCommand, options: RequestOptions): Promise<ReplReply> {
    if (this.pending) return Promise.reject(new Error('ReplProcess: a request is already in flight.'));
    if (!this.alive) {
      return Promise.reject(
        new ReplCrashedError(
          `The Lean REPL is not running (${this.killed ? 'killed' : describeExit(this.exitCode, this.exitSignal)}).`,
          this.exitCode,
          this.exitSignal,
          this.stderrTail.trim(),
        ),
      );
    }
    const { signal, timeoutMs } = options;
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    return new Promise<ReplReply>((resolve, reject) => {
      const onAbort = () => {
        this.kill();
        finish();
        reject(abortReason(signal!));
      };
      const timer = setTimeout(() => {
        this.kill();
        finish();
        reject(new ReplTimeoutError(timeoutMs));
      }, timeoutMs);
      const finish = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        this.pending = undefined;
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.pending = {
        resolve: (reply) => {
          finish();
          resolve(reply);
        },
        reject: (error) => {
          finish();
          reject(error);
        },
      };
      this.child.stdin.write(encodeCommand(command));
    });
  }

  /** Ends stdin (the REPL exits at end of input) and waits; kills the group after `graceMs`. */
  async close(graceMs = 2000): Promise<void> {
    if (this.exited) return;
    this.child.stdin.end();
    const timer = setTimeout(() => this.kill(), graceMs);
    await this.closed;
    clearTimeout(timer);
  }

  /** Kills the whole process group at once (SIGKILL: a busy REPL ignores nothing else reliably). */
  kill(): void {
    if (this.exited || this.killed) return;
    this.killed = true;
    const pid = this.child.pid;
    try {
      if (pid !== undefined) process.kill(-pid, 'SIGKILL');
    } catch {
      // Group already gone, or never started: fall back to the child itself.
      this.child.kill('SIGKILL');
    }
  }

  /** Resolves once the process has exited and its output is drained. */
  exitedPromise(): Promise<void> {
    return this.closed;
  }

  private onStdout(chunk: string): void {
    for (const value of this.framer.push(chunk)) {
      const pending = this.pending;
      if (!pending) {
        this.options.onNoise?.(`REPL reply with no request pending: ${JSON.stringify(value).slice(0, 500)}`);
        continue;
      }
      try {
        pending.resolve(parseReply(value));
      } catch (error) {
        // A reply we cannot read means we no longer know the REPL's state: treat as a crash.
        this.kill();
        pending.reject(
          new ReplCrashedError(`The Lean REPL sent an unreadable reply: ${(error as Error).message}`, null, null, this.stderrTail.trim()),
        );
      }
    }
  }

  private fail(error: Error): void {
    this.pending?.reject(error);
  }
}

function describeExit(code: number | null, signal: string | null): string {
  if (signal) return `killed by ${signal}`;
  if (code !== null) return `exit code ${code}`;
  return 'not started';
}

function abortReason(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof Error) return reason;
  const error = new Error(typeof reason === 'string' ? reason : 'The Lean check was cancelled.');
  error.name = 'AbortError';
  return error;
}
