// A BEq+-style equivalence check (after Poiroux et al., 2025): a candidate statement and a gold
// statement are equivalent when each one, taken as a hypothesis, proves the other. Per
// direction we try, in order: `exact?` with the hypothesis in context, `apply` of the
// hypothesis followed by a fixed set of closing tactics, and `convert … using k` for k = 1..3.
//
// A direction counts only if its proof needs the hypothesis. The hypothesis is a sorry'd
// theorem `driftline_hyp`; a tactic that succeeds is run again with `driftline_hyp` replaced by
// the vacuous `theorem driftline_hyp : True := trivial`, and when it still succeeds the goal
// was proved without the other statement, so that tactic does not count.
import type { DirectionResult, EquivalenceInput, EquivalenceResult } from '../../common/types';
import type { LeanRunner } from './runner';
import { maskCommentsAndStrings, topLevelAssignMasked } from './lean-text';
import { unsafeStatementReason, type SafetyPolicy } from './statement-safety';

const HYP = 'driftline_hyp';
const CLOSERS = 'first | rfl | assumption | simp_all | omega | linarith | norm_num';

/** Our tactic scripts, tried in order. `intro` moves the goal's own binders into context. */
export const EQUIVALENCE_TACTICS: readonly { name: string; script: string }[] = [
  { name: 'exact?', script: `intros\nhave driftline_h := @${HYP}\nexact?` },
  { name: 'apply', script: `intros\napply ${HYP} <;> (${CLOSERS})` },
  ...[1, 2, 3].map((k) => ({ name: `convert using ${k}`, script: `intros\nconvert ${HYP} using ${k} <;> (${CLOSERS})` })),
];

export interface StatementParts {
  /** Lines before the declaration other than imports (`open`, `set_option`, …). */
  preamble: string;
  /** Binders and type: what follows the declaration's name up to its `:=`. */
  signature: string;
}

/** Splits one (already validated) statement into preamble and signature. */
export function statementParts(code: string): StatementParts | undefined {
  const masked = maskCommentsAndStrings(code);
  const decl = /^[ \t]*(?:(?:private|protected)\s+)*(theorem|lemma|example)\b/m.exec(masked);
  if (!decl) return undefined;
  let sigStart = decl.index + decl[0].length;
  if (decl[1] !== 'example') {
    const name = /^\s+[^\s:({[⦃]+/.exec(masked.slice(sigStart));
    if (!name) return undefined;
    sigStart += name[0].length;
  }
  const assign = topLevelAssignMasked(masked, sigStart);
  if (assign < 0) return undefined;
  const preamble = code
    .slice(0, decl.index)
    .split('\n')
    .filter((line) => !/^\s*import\s/.test(line))
    .join('\n')
    .trim();
  return { preamble, signature: code.slice(sigStart, assign).trim() };
}

function hypothesis(parts: StatementParts): string {
  return [parts.preamble, `theorem ${HYP} ${parts.signature} := by sorry`].filter(Boolean).join('\n');
}

function goal(parts: StatementParts, script: string, n: number): string {
  const body = script.split('\n').map((line) => `  ${line}`).join('\n');
  return [parts.preamble, `theorem driftline_goal_${n} ${parts.signature} := by\n${body}`].filter(Boolean).join('\n');
}

const STAND_IN = `theorem ${HYP} : True := trivial`;

export interface EquivalenceSettings {
  /** Budget for the whole check, ms. */
  timeoutMs: number;
  policy?: SafetyPolicy;
  signal?: AbortSignal;
}

export async function checkEquivalence(runner: LeanRunner, input: EquivalenceInput, settings: EquivalenceSettings): Promise<EquivalenceResult> {
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
  for (const [label, code] of [['candidate', input.candidate], ['gold', input.gold]] as const) {
    const unsafe = unsafeStatementReason(code, settings.policy);
    if (unsafe) return fail(`The ${label} statement was rejected before Lean: ${unsafe.text}`);
    const parts = statementParts(code);
    if (!parts) return fail(`The ${label} statement has no theorem signature to compare.`);
    parsed.push(parts);
  }
  const [candidate, gold] = parsed as [StatementParts, StatementParts];

  const check = (code: string) =>
    runner.check(code, { header: input.header, timeoutMs: Math.max(1000, deadline - Date.now()), signal: settings.signal });

  // Both statements must elaborate on their own, or no direction means anything.
  for (const [label, parts] of [['candidate', candidate], ['gold', gold]] as const) {
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
      const withoutHyp = await check(`${STAND_IN}\n${attempt}`);
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
