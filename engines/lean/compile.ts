// The body of the `compile` activity: screen one statement, then check it with the worker's
// Lean runner. Lean's verdict is data (a CompileResult); only infrastructure faults throw.
import type { CompileResult } from '../../common/lean-types';
import type { CheckOptions, LeanRunner } from './runner-contract';
import { screenText } from './screen-text';
import type { SafetyPolicy } from './statement-safety';

export interface CompileOptions extends CheckOptions {
  /** What may reach Lean (imports, options); see statement-safety.ts. */
  policy?: SafetyPolicy;
}

export async function compileStatement(runner: LeanRunner, code: string, opts: CompileOptions = {}): Promise<CompileResult> {
  // A refusal never reaches a process: it goes back to the repair loop as a compiler message.
  // The text is a formalizer's whole text: the definitions it needs, then the theorem.
  const screened = screenText({ statement: code, as: 'formalizer' }, opts.policy);
  if (!screened.accepted)
    return { status: 'refused', messages: [screened.message], reason: `refused before Lean: ${screened.reason}`, durationMs: 0 };
  const { policy: _policy, ...checkOptions } = opts;
  // Lean is sent the text the screen rebuilt, not the input. The activity heartbeats meanwhile
  // (activities/heartbeat.ts).
  return runner.check(screened.text, checkOptions);
}
