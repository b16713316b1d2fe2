// The body of the `compile` activity: screen one statement, then check it with the worker's
// Lean runner. Lean's verdict is data (a CompileResult); only infrastructure faults throw.
import type { CompileResult } from '../../common/lean-types';
import { invalidStatementReason } from './lean-source';
import type { CheckOptions, LeanRunner } from './runner-contract';
import { DEFAULT_SAFETY_POLICY, screenStatement, type SafetyPolicy } from './statement-safety';

export interface CompileOptions extends CheckOptions {
  /** What may reach Lean (imports, options); see statement-safety.ts. */
  policy?: SafetyPolicy;
}

export async function compileStatement(runner: LeanRunner, code: string, opts: CompileOptions = {}): Promise<CompileResult> {
  const invalid = invalidStatementReason(code);
  if (invalid) {
    return {
      status: 'refused',
      messages: [{ severity: 'error', line: 1, column: 0, text: `refused before Lean: ${invalid}` }],
      reason: `refused before Lean: ${invalid}`,
      durationMs: 0,
    };
  }
  // A refusal never reaches a process: it goes back to the repair loop as a compiler message.
  const screened = screenStatement(code, opts.policy ?? DEFAULT_SAFETY_POLICY);
  if (!screened.ok)
    return { status: 'refused', messages: [screened.message], reason: `refused before Lean: ${screened.reason}`, durationMs: 0 };
  const { policy: _policy, ...checkOptions } = opts;
  // Lean is sent the text the screen rebuilt, not the input. The activity heartbeats meanwhile
  // (activities/heartbeat.ts).
  return runner.check(screened.value.text, checkOptions);
}
