// Checking statements with Lean: the `LeanRunner` contract, the factory that builds the REPL
// pool (repl-pool.ts) behind the sandbox, and the runner for machines without Lean.
import type { CompileResult } from '../../common/types';
import { ReplPool, type ReplPoolSettings } from './repl-pool';
import { sandboxCommand, type SandboxSettings } from './sandbox';

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

export { LEAN_HEADER_FAILED, LEAN_HEADER_TIMEOUT, LEAN_REPL_CRASHED } from './errors';

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

export interface RunnerLog {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

export interface LeanRunnerSettings extends Omit<ReplPoolSettings, 'replCmd'> {
  /** Shell command starting the REPL (`LEAN_REPL_CMD`); absent means Lean is not available. */
  replCmd?: string;
  /** Limits to wrap the command in; none by default. */
  sandbox?: SandboxSettings;
}

export function createLeanRunner(settings: LeanRunnerSettings): LeanRunner {
  const replCmd = settings.replCmd?.trim();
  if (!replCmd) return new SkippedLeanRunner();
  const { sandbox, ...pool } = settings;
  if (!sandbox) return new ReplPool({ ...pool, replCmd });
  const plan = sandboxCommand(replCmd, sandbox);
  if (plan.applied.length) settings.log?.info({ applied: plan.applied }, 'Lean REPL sandbox');
  if (plan.missing.length) settings.log?.warn({ missing: plan.missing }, 'Lean REPL sandbox: not available on this platform');
  return new ReplPool({ ...pool, replCmd: plan.command });
}
