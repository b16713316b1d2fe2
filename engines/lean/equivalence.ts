// A BEq+-style equivalence check (after Poiroux et al., 2025): a candidate statement and a gold
// statement are equivalent when each one, taken as a hypothesis, proves the other. Per
// direction we try, in order: `exact?` with the hypothesis in context, `apply` of the
// hypothesis followed by a fixed set of closing tactics, and `convert … using k` for k = 1..3.
//
// A direction counts only if its proof needs the hypothesis. The hypothesis is a sorry'd
// theorem `driftline_hyp`; a tactic that succeeds is run again with `driftline_hyp` replaced by
// the vacuous `theorem driftline_hyp : True := trivial` (everything else the same), and when it
// still succeeds the goal was proved without the other statement, so that tactic does not count.
//
// Each statement is elaborated in its own context, never the other's (decision 0017): the
// hypothesis and the goal each sit in a `section` with their own preamble (`open`, `variable`,
// `set_option`, `universe`), which ends before the other begins, so a candidate's
// `variable [Fact False]` never reaches the gold's goal. Definitions (`def`, `abbrev`,
// `structure`, `instance`, …) and namespaces outlive a section, so when either side has any,
// the two are compared only when their preambles are the same text (one shared context);
// otherwise the result is "not comparable" rather than a guess.
import type { DirectionResult, EquivalenceInput, EquivalenceResult, RefusedBy } from '../../common/lean-types';
import type { LeanRunner } from './runner-contract';
import { EQUIVALENCE_HYPOTHESIS as HYP, EQUIVALENCE_TACTICS, VACUOUS_HYPOTHESIS } from './equivalence-tactics';
import { tokenize } from './lexer';
import { screenText, type ScreenAs } from './screen-text';
import type { SafetyPolicy } from './statement-safety';

export { EQUIVALENCE_TACTICS };

export interface StatementParts {
  /** Commands before the declaration other than imports (`open`, `set_option`, …), as the
   * screen rebuilt them. */
  preamble: string;
  /** Binders and type: what follows the declaration's name up to its `:=`, as rebuilt. */
  signature: string;
}

/** Splits a statement into preamble and signature, through the screen (`screenText`, read as
 * `as`: a benchmark's gold by default); undefined when the screen refuses it. */
export function statementParts(code: string, policy?: SafetyPolicy, as: ScreenAs = 'gold'): StatementParts | undefined {
  const screened = screenText({ statement: code, as }, policy);
  return screened.accepted ? { preamble: screened.parts.preamble, signature: screened.parts.signature } : undefined;
}

/** Preamble commands whose effect ends with the enclosing `section`. */
const SCOPED = new Set(['open', 'set_option', 'universe', 'universes', 'variable', 'section', 'end']);
const OPEN_BRACKETS = new Set(['(', '[', '{', '⦃', '⟨', '@[']);
const CLOSE_BRACKETS = new Set([')', ']', '}', '⦄', '⟩']);

/**
 * How a preamble can be placed around a theorem: `scoped` when every command in it is one whose
 * effect ends with a `section`; `global` when any command declares something or opens a
 * namespace (it would outlive the section), or when it cannot be told.
 */
export function preambleScope(preamble: string): 'scoped' | 'global' {
  const tokens = tokenize(preamble).filter((t) => t.kind !== 'space' && t.kind !== 'comment');
  let depth = 0;
  let commandStart = true;
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (commandStart) {
      // `noncomputable section` is a section; any other first word (or `@[`, a doc comment)
      // begins something that is not scoped.
      const word = t.text === 'noncomputable' && tokens[i + 1]?.text === 'section' ? 'section' : t.text;
      if (t.kind !== 'ident' || !SCOPED.has(word)) return 'global';
      commandStart = false;
      if (word !== t.text) i++;
      continue;
    }
    if (t.kind === 'symbol' && OPEN_BRACKETS.has(t.text)) depth++;
    else if (t.kind === 'symbol' && CLOSE_BRACKETS.has(t.text)) depth = Math.max(0, depth - 1);
    else if (t.kind === 'doc') return 'global';
    // At depth 0 a scoped word starts the next command (`open A B` then `variable …`), and so
    // does whatever follows `in` (`open X in def …`); a declaration word anywhere at depth 0
    // is not scoped.
    if (depth === 0 && t.kind === 'ident') {
      if (t.text === 'in') commandStart = true;
      else if (SCOPED.has(t.text) || t.text === 'noncomputable') {
        commandStart = true;
        i--;
      } else if (DECLARATION_WORDS.has(t.text)) return 'global';
    }
  }
  return 'scoped';
}

/** Words that start a declaration (or a declaration modifier): a preamble holding one at the
 * top level is not scoped. */
const DECLARATION_WORDS = new Set([
  'def',
  'abbrev',
  'structure',
  'class',
  'inductive',
  'instance',
  'theorem',
  'lemma',
  'axiom',
  'opaque',
  'private',
  'protected',
  'namespace',
  'notation',
  'infix',
  'infixl',
  'infixr',
  'prefix',
  'postfix',
  'attribute',
  'local',
  'scoped',
  'mutual',
  'export',
]);

/** How the two statements' contexts are laid out in every command of the check. */
type Layout = { kind: 'scoped' } | { kind: 'shared'; preamble: string };

/** Each side in a section of its own, or both after one shared preamble, or not comparable. */
function layoutFor(candidate: StatementParts, gold: StatementParts): Layout | { notComparable: string } {
  const norm = (text: string) => text.replace(/\s+/g, ' ').trim();
  const candidateScope = preambleScope(candidate.preamble);
  const goldScope = preambleScope(gold.preamble);
  if (candidateScope === 'scoped' && goldScope === 'scoped') return { kind: 'scoped' };
  if (norm(candidate.preamble) === norm(gold.preamble)) return { kind: 'shared', preamble: gold.preamble };
  const which = candidateScope === 'global' ? 'candidate' : 'gold';
  return {
    notComparable:
      `the ${which} declares something before its statement (a definition, instance, notation or namespace) that the other ` +
      "does not declare the same way, and proving either from the other would put one side's declarations in the other's context",
  };
}

/** The `end`s that close the sections a (scoped) preamble leaves open, innermost first. */
export function unclosedSectionEnds(preamble: string): string[] {
  const tokens = tokenize(preamble).filter((t) => t.kind !== 'comment');
  const open: string[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (t.kind !== 'ident' || (t.text !== 'section' && t.text !== 'end')) continue;
    // The name, when one follows on the same line (`section Foo`, `end Foo`).
    const space = tokens[i + 1];
    const next = space?.kind === 'space' && !space.text.includes('\n') ? tokens[i + 2] : undefined;
    const name = next?.kind === 'ident' && !SCOPED.has(next.text) && !DECLARATION_WORDS.has(next.text) ? next.text : '';
    if (t.text === 'section') open.push(name);
    else open.pop();
  }
  return open.reverse().map((name) => (name ? `end ${name}` : 'end'));
}

/** A preamble and a declaration in a section of their own: the preamble's effects end there. */
function inSection(preamble: string, declaration: string): string {
  return ['section', preamble, declaration, ...unclosedSectionEnds(preamble), 'end'].filter((l) => l.trim() !== '').join('\n');
}

function hypothesisText(parts: StatementParts, layout: Layout): string {
  const declaration = `theorem ${HYP} ${parts.signature} := by sorry`;
  return layout.kind === 'scoped' ? inSection(parts.preamble, declaration) : declaration;
}

function goalText(parts: StatementParts, script: string, n: number, layout: Layout): string {
  const body = script
    .split('\n')
    .map((line) => `  ${line}`)
    .join('\n');
  const declaration = `theorem driftline_goal_${n} ${parts.signature} := by\n${body}`;
  return layout.kind === 'scoped' ? inSection(parts.preamble, declaration) : declaration;
}

/** One command: the shared preamble (if any), then the given declarations in order. */
function command(layout: Layout, ...parts: string[]): string {
  return [layout.kind === 'shared' ? layout.preamble : '', ...parts].filter((p) => p.trim() !== '').join('\n');
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
  for (const [label, code, as] of [
    ['candidate', input.candidate, 'formalizer'],
    ['gold', input.gold, 'gold'],
  ] as const) {
    // Both texts may come from outside (a run's formalizer, an API request, a benchmark or
    // predictions file): each is screened by the one screening function, the candidate as a
    // formalizer's text and the gold as a gold statement, and only the parts the screen rebuilt
    // are sent to Lean.
    const screened = screenText({ statement: code, as }, settings.policy);
    if (!screened.accepted) return { ...fail(`refused before Lean: the ${label} statement: ${screened.reason}`), refused: label };
    parsed.push({ preamble: screened.parts.preamble, signature: screened.parts.signature });
  }
  const [candidate, gold] = parsed as [StatementParts, StatementParts];
  const layout = layoutFor(candidate, gold);
  if ('notComparable' in layout) return { ...fail(`not comparable: ${layout.notComparable}.`), notComparable: true };

  // A check refused for tampering or a disagreement ends the comparison: nothing it said counts.
  let refusal: string | undefined;
  let refusedBy: RefusedBy | undefined;
  const check = async (code: string) => {
    const result = await runner.check(code, {
      header: input.header,
      timeoutMs: Math.max(1000, deadline - Date.now()),
      signal: settings.signal,
      ...(input.domain !== undefined ? { domain: input.domain } : {}),
    });
    if (result.refusedBy && refusal === undefined) {
      refusal = result.reason ?? `refused (${result.refusedBy})`;
      refusedBy = result.refusedBy;
    }
    return result;
  };

  // Both statements must elaborate on their own, or no direction means anything.
  for (const [label, parts] of [
    ['candidate', candidate],
    ['gold', gold],
  ] as const) {
    const alone = await check(command(layout, hypothesisText(parts, layout)));
    if (refusedBy) return { ...fail(`A check of the comparison was refused: ${refusal}`), refusedBy };
    if (alone.status !== 'ok') {
      const first = alone.messages.find((m) => m.severity === 'error');
      return fail(`The ${label} statement does not compile${first ? `: ${first.text}` : ` (${alone.status})`}.`);
    }
  }

  let n = 0;
  const direction = async (from: StatementParts, to: StatementParts): Promise<DirectionResult> => {
    const result: DirectionResult = { proved: false, withoutHypothesis: [], tried: 0 };
    for (const tactic of EQUIVALENCE_TACTICS) {
      if (Date.now() >= deadline || refusal !== undefined) break;
      result.tried++;
      const attempt = goalText(to, tactic.script, n++, layout);
      const withHyp = await check(command(layout, hypothesisText(from, layout), attempt));
      if (withHyp.status !== 'ok') continue;
      const withoutHyp = await check(command(layout, VACUOUS_HYPOTHESIS, attempt));
      if (refusal !== undefined) break;
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
  const goldToCandidate = candidateToGold.proved && refusal === undefined ? await direction(gold, candidate) : none();
  if (refusal !== undefined) return { ...fail(`A check of the comparison was refused: ${refusal}`), ...(refusedBy ? { refusedBy } : {}) };
  const result: EquivalenceResult = {
    equivalent: candidateToGold.proved && goldToCandidate.proved,
    candidateToGold,
    goldToCandidate,
    durationMs: Date.now() - started,
  };
  if (Date.now() >= deadline && !result.equivalent) result.reason = `The equivalence check ran out of its ${budget} ms budget.`;
  return result;
}
