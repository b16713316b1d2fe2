// A BEq+-style equivalence check (after Poiroux et al., 2025): a candidate statement and a gold
// statement are equivalent when each one, taken as a hypothesis, proves the other. Per
// direction we try, in order: `exact?` with the hypothesis in context, `apply` of the
// hypothesis followed by a fixed set of closing tactics, and `convert … using k` for k = 1..3.
//
// A direction counts only if its proof needs the hypothesis. The hypothesis is a sorry'd
// theorem `driftline_hyp`; a tactic that succeeds is run again with `driftline_hyp` replaced by
// the vacuous `theorem driftline_hyp : True := trivial`, and when it still succeeds the goal
// was proved without the other statement, so that tactic does not count.
import type { DirectionResult, EquivalenceInput, EquivalenceResult } from '../../common/lean-types';
import type { LeanRunner } from './runner-contract';
import { EQUIVALENCE_HYPOTHESIS as HYP, EQUIVALENCE_TACTICS, VACUOUS_HYPOTHESIS } from './equivalence-tactics';
import { screenStatement, type SafetyPolicy } from './statement-safety';

export { EQUIVALENCE_TACTICS };

export interface StatementParts {
  /** Commands before the declaration other than imports (`open`, `set_option`, …), as the
   * screen rebuilt them. */
  preamble: string;
  /** Binders and type: what follows the declaration's name up to its `:=`, as rebuilt. */
  signature: string;
}

/** Splits a statement into preamble and signature, through the screen; undefined when the
 * screen refuses it. */
export function statementParts(code: string, policy?: SafetyPolicy): StatementParts | undefined {
  const screened = screenStatement(code, policy, { gold: true });
  return screened.ok ? { preamble: screened.value.preamble, signature: screened.value.signature } : undefined;
}

function hypothesis(parts: StatementParts): string {
  return [parts.preamble, `theorem ${HYP} ${parts.signature} := by sorry`].filter(Boolean).join('\n');
}

function goal(parts: StatementParts, script: string, n: number): string {
  const body = script
    .split('\n')
    .map((line) => `  ${line}`)
    .join('\n');
  return [parts.preamble, `theorem driftline_goal_${n} ${parts.signature} := by\n${body}`].filter(Boolean).join('\n');
}

export interface EquivalenceSettings {
  /** Budget for the whole check, ms. */
  timeoutMs: number;
  policy?: SafetyPolicy;
  signal?: AbortSignal;
}

export async function checkEquivalence(
  runner: LeanRunner,
  input: EquivalenceInput,
  settings: EquivalenceSettings,
): Promise<EquivalenceResult> {
  const started = Date.now();
  const budget = input.timeoutMs ?? settings.timeoutMs;
  const deadline = started + budget;
  const none = (): DirectionResult => ({ proved: false, withoutHypothesis: [], tried: 0 });
  const fail = (reason: string): EquivalenceResult => ({
    equivalent: false,
    candidateToGold: none(),
    goldToCandidate: none(),
    reason,
    durationMs: Date.now() - started,
  });

  const parsed: StatementParts[] = [];
  for (const [label, code] of [
    ['candidate', input.candidate],
    ['gold', input.gold],
  ] as const) {
    // The gold statement may come from an API request or a benchmark file: it is screened like
    // any other text, and only the parts the screen rebuilt are sent to Lean.
    const screened = screenStatement(code, settings.policy, { gold: true });
    if (!screened.ok) return { ...fail(`refused before Lean: the ${label} statement: ${screened.reason}`), refused: label };
    parsed.push({ preamble: screened.value.preamble, signature: screened.value.signature });
  }
  const [candidate, gold] = parsed as [StatementParts, StatementParts];

  const check = (code: string) =>
    runner.check(code, { header: input.header, timeoutMs: Math.max(1000, deadline - Date.now()), signal: settings.signal });

  // Both statements must elaborate on their own, or no direction means anything.
  for (const [label, parts] of [
    ['candidate', candidate],
    ['gold', gold],
  ] as const) {
    const alone = await check(hypothesis(parts));
    if (alone.status !== 'ok') {
      const first = alone.messages.find((m) => m.severity === 'error');
      return fail(`The ${label} statement does not compile${first ? `: ${first.text}` : ` (${alone.status})`}.`);
    }
  }

  let n = 0;
  const direction = async (from: StatementParts, to: StatementParts): Promise<DirectionResult> => {
    const result: DirectionResult = { proved: false, withoutHypothesis: [], tried: 0 };
    for (const tactic of EQUIVALENCE_TACTICS) {
      if (Date.now() >= deadline) break;
      result.tried++;
      const attempt = goal(to, tactic.script, n++);
      const withHyp = await check(`${hypothesis(from)}\n${attempt}`);
      if (withHyp.status !== 'ok') continue;
      const withoutHyp = await check(`${VACUOUS_HYPOTHESIS}\n${attempt}`);
      if (withoutHyp.status === 'ok') {
        result.withoutHypothesis.push(tactic.name);
        continue;
      }
      result.proved = true;
      result.tactic = tactic.name;
      break;
    }
    return result;
  };

  const candidateToGold = await direction(candidate, gold);
  const goldToCandidate = candidateToGold.proved ? await direction(gold, candidate) : none();
  const result: EquivalenceResult = {
    equivalent: candidateToGold.proved && goldToCandidate.proved,
    candidateToGold,
    goldToCandidate,
    durationMs: Date.now() - started,
  };
  if (Date.now() >= deadline && !result.equivalent) result.reason = `The equivalence check ran out of its ${budget} ms budget.`;
  return result;
}
