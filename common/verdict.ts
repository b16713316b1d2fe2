// Who decided about a statement, in words: Lean (ok, error, timeout), the statement screen
// before Lean (refused), or nobody (skipped). Shared by the workflows' Temporal UI details, the
// CLI and the sweep report, so a refusal is never worded as "Lean rejected it". Pure.
import type { CompileResult, EquivalenceResult } from './lean-types';
import type { JudgeVerdict, Outcome } from './run-types';

const REFUSAL_PREFIX = /^\s*(?:refused|rejected) before Lean:\s*/i;

/** The screen's reason without its `refused before Lean:` prefix (the label says it already). */
export function refusalReason(result: Pick<CompileResult, 'reason' | 'messages'>): string {
  const text = result.reason ?? result.messages.find((m) => m.severity === 'error')?.text ?? '';
  const bare = text.replace(REFUSAL_PREFIX, '').trim();
  return bare || 'no reason given';
}

/** "refused by the screen: <reason>", or, when the REPL's answer was refused, what refused it. */
export function refusalLabel(result: Pick<CompileResult, 'reason' | 'messages' | 'refusedBy'>): string {
  if (result.refusedBy === 'tampering') return `refused for tampering: ${refusalReason(result)}`;
  if (result.refusedBy === 'disagreement') return `refused (Lean could not parse what the screen accepted): ${refusalReason(result)}`;
  return `refused by the screen: ${refusalReason(result)}`;
}

/** One line for an attempt's check: who decided and what. */
export function compileVerdict(result: CompileResult): string {
  const errors = result.messages.filter((m) => m.severity === 'error').length;
  switch (result.status) {
    case 'ok':
      return 'compiled';
    case 'error':
      return `Lean rejected it (${errors} error${errors === 1 ? '' : 's'})`;
    case 'refused':
      return refusalLabel(result);
    case 'skipped':
      return `not checked (${result.reason ?? 'no Lean configured'})`;
    case 'timeout':
      return 'Lean ran out of time';
  }
}

/** One line for an equivalence check against a gold statement. */
export function equivalenceVerdict(e: EquivalenceResult): string {
  if (e.refused) return `not checked: the ${e.refused} statement was ${refusalLabel({ reason: e.reason ?? '', messages: [] })}`;
  if (e.refusedBy)
    return `not compared: a check of the comparison was ${refusalLabel({ reason: e.reason?.replace(/^A check of the comparison was refused:\s*/, '') ?? '', messages: [], refusedBy: e.refusedBy })}`;
  if (e.notComparable) return `not comparable${e.reason ? `: ${e.reason}` : ''}`;
  if (e.equivalent) return 'equivalent (Lean proved both directions)';
  return `not shown equivalent${e.reason ? `: ${e.reason}` : ''}`;
}

/** A run's outcome from its last attempt: a spent budget first, then the screen's refusal
 * (whether or not Lean is configured, Lean never saw the attempt), then Lean's verdict and the
 * judge's. Shared by the pipeline and agent workflows. */
export function runOutcome(o: {
  compiled: boolean;
  checked: boolean;
  verdict: JudgeVerdict | null;
  budgetSpent?: boolean;
  refused?: boolean;
}): Outcome {
  if (o.budgetSpent) return 'budget-exhausted';
  if (o.refused) return 'refused';
  if (!o.checked) return 'unchecked';
  if (!o.compiled) return 'not-compiled';
  if (!o.verdict) return 'compiled';
  return o.verdict.faithful ? 'faithful' : 'unfaithful';
}
