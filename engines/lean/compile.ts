// The body of the `compile` activity: check one statement with the worker's Lean runner.
// Lean's verdict is data (a CompileResult); only infrastructure faults throw.
import type { CompileResult } from '../../common/types';
import { invalidStatementReason } from './lean-source';
import type { CheckOptions, LeanRunner } from './runner';
import { DEFAULT_SAFETY_POLICY, unsafeStatementReason, type SafetyPolicy } from './statement-safety';

export interface CompileOptions extends CheckOptions {
  /** What may reach Lean (imports, options); see statement-safety.ts. */
  policy?: SafetyPolicy;
  /** Called periodically while Lean works (pass the activity's `heartbeat`), so a long header
   * import does not look like a dead worker. */
  heartbeat?: () => void;
  heartbeatIntervalMs?: number;
}

export async function compileStatement(runner: LeanRunner, code: string, opts: CompileOptions = {}): Promise<CompileResult> {
  const rejected = invalidStatementReason(code);
  if (rejected) {
    return { status: 'error', messages: [{ severity: 'error', line: 1, column: 0, text: rejected }], reason: rejected, durationMs: 0 };
  }
  // Never reaches a process: the reason goes back to the repair loop as a compiler message.
  const unsafe = unsafeStatementReason(code, opts.policy ?? DEFAULT_SAFETY_POLICY);
  if (unsafe) return { status: 'error', messages: [unsafe], reason: `Rejected before Lean: ${unsafe.text}`, durationMs: 0 };
  const { heartbeat, heartbeatIntervalMs = 5_000, policy: _policy, ...checkOptions } = opts;
  const timer = heartbeat ? setInterval(heartbeat, heartbeatIntervalMs) : undefined;
  try {
    heartbeat?.();
    return await runner.check(code, checkOptions);
  } finally {
    if (timer) clearInterval(timer);
  }
}
