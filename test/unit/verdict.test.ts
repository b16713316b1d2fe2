// Who decided about a statement, in words and as an outcome: the screen's refusal is its own
// verdict (common/verdict.ts), never worded as Lean's.
import { describe, expect, it } from 'vitest';
import { compileVerdict, equivalenceVerdict, refusalLabel, refusalReason, runOutcome } from '../../common/verdict';
import type { CompileResult } from '../../common/lean-types';

const refused: CompileResult = {
  status: 'refused',
  messages: [{ severity: 'error', line: 2, column: 11, text: 'refused before Lean: `#eval` starts a command' }],
  reason: '`#eval` starts a command',
  durationMs: 0,
};

describe('runOutcome', () => {
  const judged = { grade: 10, faithful: true, explanation: '' };
  it('is refused when the last attempt was refused, with or without Lean, whatever the judge said', () => {
    expect(runOutcome({ compiled: false, checked: false, verdict: null, refused: true })).toBe('refused');
    expect(runOutcome({ compiled: false, checked: false, verdict: judged, refused: true })).toBe('refused');
  });
  it('keeps the other outcomes', () => {
    expect(runOutcome({ compiled: false, checked: false, verdict: null })).toBe('unchecked');
    expect(runOutcome({ compiled: false, checked: true, verdict: null })).toBe('not-compiled');
    expect(runOutcome({ compiled: true, checked: true, verdict: null })).toBe('compiled');
    expect(runOutcome({ compiled: true, checked: true, verdict: judged })).toBe('faithful');
    expect(runOutcome({ compiled: true, checked: true, verdict: { ...judged, faithful: false } })).toBe('unfaithful');
    expect(runOutcome({ compiled: false, checked: false, verdict: null, refused: true, budgetSpent: true })).toBe('budget-exhausted');
  });
});

describe('verdict words', () => {
  it('names the screen for a refusal, and Lean for its own verdicts', () => {
    expect(compileVerdict(refused)).toBe('refused by the screen: `#eval` starts a command');
    expect(compileVerdict({ status: 'error', messages: [{ severity: 'error', line: 1, column: 0, text: 'x' }], durationMs: 1 })).toBe(
      'Lean rejected it (1 error)',
    );
    expect(compileVerdict({ status: 'skipped', messages: [], durationMs: 0 })).toBe('not checked (no Lean configured)');
    expect(compileVerdict({ status: 'ok', messages: [], durationMs: 1 })).toBe('compiled');
  });
  it('takes the reason from the message when there is none, without the prefix', () => {
    expect(refusalReason({ messages: refused.messages })).toBe('`#eval` starts a command');
    expect(refusalLabel({ reason: 'Rejected before Lean: no `:=`', messages: [] })).toBe('refused by the screen: no `:=`');
    expect(refusalReason({ messages: [] })).toBe('no reason given');
  });
  it('says which statement of an equivalence check was refused', () => {
    const e = {
      equivalent: false,
      candidateToGold: { proved: false, withoutHypothesis: [], tried: 0 },
      goldToCandidate: { proved: false, withoutHypothesis: [], tried: 0 },
      durationMs: 0,
    };
    expect(equivalenceVerdict({ ...e, refused: 'gold', reason: 'refused before Lean: `#eval` starts a command' })).toBe(
      'not checked: the gold statement was refused by the screen: `#eval` starts a command',
    );
    expect(equivalenceVerdict({ ...e, reason: 'timed out' })).toBe('not shown equivalent: timed out');
  });
});
