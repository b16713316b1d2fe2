// The `LeanRunner` contract (what compile, the name tools and the equivalence check use) and
// the runner for machines without Lean. The REPL pool implements it; lean-runner.ts builds one.
import type { CompileResult } from '../../common/lean-types';

export interface CheckOptions {
  /** Time allowed for the statement itself (not for importing the header). */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Header to check against instead of the runner's library header (e.g. an item's own). */
  header?: string;
  /** The trust domain the text comes from (an API key's, one predictions file's, driftline's
   * own formalizer's): texts of different domains never share a REPL process. Default
   * `driftline`. */
  domain?: string;
}

export interface LeanRunner {
  check(code: string, opts?: CheckOptions): Promise<CompileResult>;
  close(): Promise<void>;
  /** Whether the runner accepts checks (false once closed). */
  ready(): boolean;
  /** Starts Lean and imports the library header ahead of the first check. */
  warm?(): Promise<void>;
}

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
