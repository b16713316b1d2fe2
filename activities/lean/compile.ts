// The body of the `compile` activity: check one statement with the worker's Lean runner.
// Lean's verdict is data (a CompileResult); only infrastructure faults throw.
import type { CompileResult } from '../../common/types';
import { invalidStatementReason } from './lean-source';
import type { CheckOptions, LeanRunner } from './lean-runner';

export interface CompileOptions extends CheckOptions {
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
  const { heartbeat, heartbeatIntervalMs = 5_000, ...checkOptions } = opts;
  const timer = heartbeat ? setInterval(heartbeat, heartbeatIntervalMs) : undefined;
  try {
    heartbeat?.();
    return await runner.check(code, checkOptions);
  } finally {
    if (timer) clearInterval(timer);
  }
}
