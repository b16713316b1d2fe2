// The equivalence check keeps each statement in its own context (decision 0017): what it sends
// to Lean, read from a runner that records every text and answers like Lean would for scoping.
import { describe, expect, it } from 'vitest';
import type { CompileResult } from '../../common/lean-types';
import { checkEquivalence, preambleScope, unclosedSectionEnds } from '../../engines/lean/equivalence';
import type { CheckOptions, LeanRunner } from '../../engines/lean/runner-contract';

/** Records each text; every check "compiles" unless `fails` says otherwise. */
class RecordingRunner implements LeanRunner {
  readonly texts: string[] = [];
  readonly options: CheckOptions[] = [];
  constructor(private readonly fails: (text: string) => boolean = () => false) {}
  async check(code: string, opts: CheckOptions = {}): Promise<CompileResult> {
    this.texts.push(code);
    this.options.push(opts);
    return this.fails(code)
      ? { status: 'error', messages: [{ severity: 'error', line: 1, column: 0, text: 'unsolved goals' }], durationMs: 1 }
      : { status: 'ok', messages: [], durationMs: 1 };
  }
  async close(): Promise<void> {}
  ready(): boolean {
    return true;
  }
}

/** The lines that are in force where the goal theorem is declared: everything before it, minus
 * the sections that were closed before it. */
function contextOfGoal(text: string): string[] {
  const lines = text.split('\n');
  const goalAt = lines.findIndex((l) => l.startsWith('theorem driftline_goal_'));
  const stack: string[][] = [[]];
  for (const line of lines.slice(0, goalAt)) {
    if (/^(noncomputable )?section\b/.test(line)) stack.push([]);
    else if (/^end\b/.test(line)) stack.pop();
    else stack.at(-1)!.push(line);
  }
  return stack.flat();
}

const settings = { timeoutMs: 60_000 };

describe('equivalence: each statement in its own context', () => {
  it("never puts the candidate's preamble (`variable [Fact False]`) before the gold's goal", async () => {
    const runner = new RecordingRunner();
    await checkEquivalence(
      runner,
      {
        candidate: 'variable [inst : Fact False]\ntheorem c (n : ℕ) : n = n + 1 := by sorry',
        gold: 'open Nat\ntheorem g (n : ℕ) : n = n + 1 := by sorry',
      },
      settings,
    );
    const goalTexts = runner.texts.filter((t) => t.includes('driftline_goal_'));
    expect(goalTexts.length).toBeGreaterThan(0);
    // Candidate → gold: the gold's goal sees `open Nat` and the hypothesis, never `Fact False`.
    const candidateToGold = goalTexts.filter((t) => t.indexOf('Fact False') < t.indexOf('driftline_goal_'));
    expect(candidateToGold.length).toBeGreaterThan(0);
    for (const text of candidateToGold) {
      expect(contextOfGoal(text)).not.toContainEqual(expect.stringContaining('Fact False'));
      expect(contextOfGoal(text)).toContain('open Nat');
    }
  });

  it('closes the sections a preamble leaves open, so nothing of it outlives its side', () => {
    expect(unclosedSectionEnds('noncomputable section\nopen Real')).toEqual(['end']);
    expect(unclosedSectionEnds('section Foo\nvariable (x : ℕ)\nsection\nopen Nat')).toEqual(['end', 'end Foo']);
    expect(unclosedSectionEnds('section Foo\nend Foo\nopen Nat')).toEqual([]);
  });

  it('tells scoped preambles from ones that declare something', () => {
    for (const scoped of [
      '',
      'open Nat Real',
      'variable [inst : Fact False]',
      'universe u\nvariable {α : Type u}',
      'set_option maxHeartbeats 400000 in',
    ])
      expect(preambleScope(scoped)).toBe('scoped');
    for (const global of [
      'abbrev answer : ℕ := 5',
      'open Nat in\ndef f := 1',
      'namespace Foo',
      '@[simp] def g := 1',
      'structure P where\n  x : ℕ',
    ])
      expect(preambleScope(global)).toBe('global');
  });

  it('says "not comparable" when the candidate has a definition the gold does not, and sends nothing', async () => {
    const runner = new RecordingRunner();
    const result = await checkEquivalence(
      runner,
      { candidate: 'abbrev answer : ℕ := 5\ntheorem c : answer = 5 := by sorry', gold: 'theorem g : (5 : ℕ) = 5 := by sorry' },
      settings,
    );
    expect(result).toMatchObject({ equivalent: false, notComparable: true });
    expect(result.reason).toMatch(/^not comparable: the candidate declares something/);
    expect(runner.texts).toEqual([]);
  });

  it('compares statements with the same definitions in one shared context', async () => {
    // The hypothesis proves the goal only when both are there; the vacuous one proves nothing.
    const runner = new RecordingRunner((t) => t.includes('driftline_goal_') && !t.includes('driftline_hyp : answer'));
    const defs = 'abbrev answer : ℕ := 5';
    const result = await checkEquivalence(
      runner,
      { candidate: `${defs}\ntheorem c : answer = 5 := by sorry`, gold: `${defs}\ntheorem g : answer = 5 := by sorry`, domain: 'key:k' },
      settings,
    );
    expect(result.notComparable).toBeUndefined();
    expect(result.candidateToGold.proved).toBe(true);
    // The definitions once, at the top of every text; the vacuous run has them too.
    for (const text of runner.texts) expect(text.startsWith(defs) && text.split(defs).length === 2).toBe(true);
    expect(runner.texts.some((t) => t.includes('driftline_hyp : True := trivial'))).toBe(true);
    expect(new Set(runner.options.map((o) => o.domain))).toEqual(new Set(['key:k']));
  });

  it('stops and says why when a check of the comparison is refused for tampering', async () => {
    let n = 0;
    const runner: LeanRunner = {
      check: async () =>
        ++n === 3
          ? { status: 'refused', refusedBy: 'tampering', messages: [], reason: 'the REPL wrote a forged reply', durationMs: 1 }
          : { status: 'ok', messages: [], durationMs: 1 },
      close: async () => {},
      ready: () => true,
    };
    const result = await checkEquivalence(
      runner,
      { candidate: 'theorem c : True := by sorry', gold: 'theorem g : True := by sorry' },
      settings,
    );
    expect(result.equivalent).toBe(false);
    expect(result.reason).toMatch(/refused: the REPL wrote a forged reply/);
  });
});
