// A batch of Lean checks without an LLM: each statement screened and compiled on the Lean queue
// and, with a gold statement, checked for equivalence with it (workflow `checkStatements`). The
// MCP tool `check_lean` sends one statement; the batch route of the API sends many.
import type { CompileResult, CompileStatus, EquivalenceResult, LeanMessage } from './lean-types';

export interface CheckItem {
  /** The caller's name for the statement (echoed in its result). */
  id?: string;
  /** One Lean theorem statement, e.g. `theorem t (p : ℕ) (hp : p.Prime) : 2 ≤ p := by sorry`. */
  statement: string;
  /** A reference statement: when the statement compiles, Lean checks that each proves the other. */
  gold?: string;
  /** Set by the client that started the batch when the screen refused the statement or its gold:
   * the workflow records the refusal as the statement's result and sends nothing to Lean. */
  refused?: { reason: string; message?: LeanMessage };
}

export interface CheckStatementsInput {
  statements: CheckItem[];
  /** The Lean task queue (default: `lean`). */
  leanTaskQueue?: string;
  /** Statements checked at once (default 8); the Lean worker's REPL pool queues the rest. */
  concurrency?: number;
  /** Whose texts these are (common/trust-domain.ts): the API key's, or the batch's own. */
  trustDomain?: string;
}

export interface CheckItemResult {
  id?: string;
  /** Lean accepted the statement (`status` is `ok`). */
  compiled: boolean;
  /** Who decided (common/verdict.ts): `ok`, `error`, `timeout` are Lean's, `refused` the
   * screen's before Lean, `skipped` means no Lean is configured; `failed`: the check itself
   * failed after its retries (see `error`), nothing is known about the statement. */
  status: CompileStatus | 'failed';
  messages: LeanMessage[];
  /** Why the statement was refused or not checked, in words. */
  reason?: string;
  /** A `refused` the screen did not decide: the REPL's answer was tampered with, or Lean could
   * not parse what the screen accepted (CompileResult.refusedBy). */
  refusedBy?: 'tampering' | 'disagreement';
  durationMs: number;
  /** Peak resident memory (MB) of the Lean REPL while it checked the statement (see
   * CompileResult.peakRssMb); absent when Lean did not run or the platform cannot tell. */
  peakRssMb?: number;
  /** With a gold statement and a compiled statement: whether Lean proved both directions. */
  equivalent?: boolean;
  equivalence?: EquivalenceResult;
  /** The check could not be done (its activity failed after every retry). */
  error?: string;
}

export interface CheckStatementsResult {
  results: CheckItemResult[];
}

export interface CheckProgress {
  total: number;
  done: number;
}

export const CHECK_PROGRESS_QUERY = 'checkProgress';

/** The results finished so far, in the order they finished, from the `after`-th on (the API's
 * event stream reads them). */
export const CHECK_FINISHED_QUERY = 'checkFinished';

export interface CheckFinished {
  /** 1-based: the n-th statement to finish. */
  seq: number;
  /** The statement's position in the batch (0-based). */
  index: number;
  result: CheckItemResult;
}

/** The result of a statement the screen refused before the batch started. */
export function refusedItemResult(item: CheckItem): CheckItemResult {
  return {
    ...(item.id !== undefined ? { id: item.id } : {}),
    compiled: false,
    status: 'refused',
    messages: item.refused?.message ? [item.refused.message] : [],
    reason: item.refused?.reason ?? 'refused before Lean',
    durationMs: 0,
  };
}

/** A check's result from its compile result and, where one ran, its equivalence check. */
export function checkItemResult(item: CheckItem, compile: CompileResult, equivalence?: EquivalenceResult | null): CheckItemResult {
  return {
    ...(item.id !== undefined ? { id: item.id } : {}),
    compiled: compile.status === 'ok',
    status: compile.status,
    messages: compile.messages,
    ...(compile.reason ? { reason: compile.reason } : {}),
    ...(compile.refusedBy ? { refusedBy: compile.refusedBy } : {}),
    durationMs: compile.durationMs,
    ...(compile.peakRssMb !== undefined ? { peakRssMb: compile.peakRssMb } : {}),
    ...(equivalence ? { equivalent: equivalence.equivalent, equivalence } : {}),
  };
}
