// One running REPL process: spawning, request/reply over the blank-line protocol, timeouts,
// crash detection and shutdown. It knows nothing about headers or statements.
//
// Verdict integrity (decision 0017): code that runs inside the REPL can write to its stdout, so
// a reply counts only when it is the one reply to the command just sent. The REPL numbers
// environments 0, 1, 2, … (error replies take no number), so the expected number is known; each
// request is followed by a confirmation command carrying a fresh nonce, whose reply must come
// next, carry the next number and mention the nonce, which proves the REPL is back in its loop
// with nothing written between. Anything else — output that is not a reply, a wrong number, a
// second reply, bytes while no request is pending, a confirmation that does not come — kills the
// process and is reported as tampering (ReplTamperedError, or `onTamper` when idle).
import { LEAN_FAILURE } from '../../common/failures';
import { EngineError } from '../errors';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { encodeCommand, isErrorReply, parseReply, ReplyFramer, type ReplCommand, type ReplReply } from './repl-protocol';
import { replEnvironment } from './sandbox';

export interface ReplProcessOptions {
  /** Shell command that starts the REPL, e.g. `lake env ../repl/.lake/build/bin/repl`. */
  command: string;
  cwd?: string;
  /** Extra environment variables for the process, added to the cleaned environment (never this
   * process's whole one: it holds the worker's API keys). */
  env?: Record<string, string>;
  /** Called when the process wrote to stdout while no request was pending (it has been killed):
   * something left running inside it. */
  onTamper?: (detail: string) => void;
  /** Time for the confirmation command after each reply. Default 10 s: an honest REPL answers
   * it in milliseconds, so one that does not is still running something. */
  confirmTimeoutMs?: number;
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

/** The REPL wrote something other than the one reply to the command just sent; its process
 * group has been killed. Not a crash: a retry would run the same text again. */
export class ReplTamperedError extends Error {
  override readonly name = 'ReplTamperedError';
  constructor(readonly detail: string) {
    super(`The Lean REPL wrote output that is not the reply to the command sent (${detail}); its process was killed.`);
  }
}

/** The prefix of the confirmation command's name: `#check` of a name that exists nowhere, so
 * Lean names it in its answer (unknown identifier), nonce included. */
export const CONFIRM_PREFIX = 'driftline_confirm_';
const DEFAULT_CONFIRM_TIMEOUT_MS = 10_000;

interface Pending {
  receive(value: unknown): void;
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
  /** The environment number the REPL gives its next command reply. */
  private nextEnv = 0;
  /** Why the process was killed for tampering, once it was. */
  private tamperDetail: string | undefined;

  constructor(private readonly options: ReplProcessOptions) {
    this.stderrTailChars = options.stderrTailChars ?? 4000;
    this.framer = new ReplyFramer((text) => this.tamper(`output that is not a reply: ${JSON.stringify(text.slice(0, 200))}`));
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

  /** Set once the process was killed for writing what it should not have. */
  get tampered(): string | undefined {
    return this.tamperDetail;
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
      let answer: ReplReply | undefined;
      let nonce = '';
      const onAbort = () => {
        this.kill();
        finish();
        reject(abortReason(signal!));
      };
      let timer = setTimeout(() => {
        this.kill();
        finish();
        reject(new ReplTimeoutError(timeoutMs));
      }, timeoutMs);
      const finish = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        this.pending = undefined;
      };
      const fail = (error: Error) => {
        finish();
        reject(error);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.pending = {
        reject: fail,
        receive: (value) => {
          let reply: ReplReply;
          try {
            reply = parseReply(value);
          } catch (error) {
            this.tamper(`a JSON object that is not a REPL reply: ${(error as Error).message.slice(0, 200)}`);
            return;
          }
          if (!isErrorReply(reply)) {
            if (reply.env !== this.nextEnv) {
              this.tamper(`a reply naming environment ${reply.env} where ${this.nextEnv} was due`);
              return;
            }
            this.nextEnv++;
          }
          if (this.framer.pending().trim() !== '') {
            this.tamper('output right after a reply');
            return;
          }
          if (answer === undefined) {
            // The reply to the command; now the confirmation, on a base that surely exists.
            answer = reply;
            nonce = randomBytes(8).toString('hex');
            const base = isErrorReply(reply) ? undefined : (command.env ?? reply.env);
            clearTimeout(timer);
            const confirmMs = this.options.confirmTimeoutMs ?? DEFAULT_CONFIRM_TIMEOUT_MS;
            timer = setTimeout(() => this.tamper(`no answer to the confirmation within ${confirmMs} ms after the reply`), confirmMs);
            this.child.stdin.write(
              encodeCommand({ cmd: `#check ${CONFIRM_PREFIX}${nonce}`, ...(base === undefined ? {} : { env: base }) }),
            );
            return;
          }
          if (isErrorReply(reply) || !(reply.messages ?? []).some((m) => m.data.includes(`${CONFIRM_PREFIX}${nonce}`))) {
            this.tamper('a second reply where the confirmation was due');
            return;
          }
          finish();
          resolve(answer);
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
    const values = this.framer.push(chunk);
    if (this.tamperDetail !== undefined) return;
    // One command is outstanding at a time, so an honest REPL never completes two replies at once.
    if (values.length > 1) {
      this.tamper(`${values.length} replies at once: ${JSON.stringify(values).slice(0, 200)}`);
      return;
    }
    for (const value of values) {
      const pending = this.pending;
      if (!pending) {
        this.tamper(`a reply with no request pending: ${JSON.stringify(value).slice(0, 200)}`);
        return;
      }
      pending.receive(value);
    }
    // Bytes while nothing is asked: something still runs in there and writes.
    if (!this.pending && this.tamperDetail === undefined && this.framer.pending().trim() !== '')
      this.tamper(`output with no request pending: ${JSON.stringify(this.framer.pending().slice(0, 200))}`);
  }

  /** Kills the process for writing what it should not have; the pending request (if any)
   * fails with ReplTamperedError, otherwise `onTamper` hears of it. */
  private tamper(detail: string): void {
    if (this.tamperDetail !== undefined || this.exited) return;
    this.tamperDetail = detail;
    this.kill();
    const pending = this.pending;
    if (pending) pending.reject(new ReplTamperedError(detail));
    else this.options.onTamper?.(detail);
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
