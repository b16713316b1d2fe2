// What may reach Lean: every forbidden construct is rejected before any process sees it, with
// a compiler-style message at the offending place; a benign statement passes.
import { describe, expect, it } from 'vitest';
import { compileStatement } from '../../engines/lean/compile';
import { CountingRunner } from '../helpers/counting-runner';
import { maskCommentsAndStrings, topLevelAssign } from '../../engines/lean/lean-text';
import { unsafeStatementReason } from '../../engines/lean/statement-safety';

const GOOD = 'theorem two_le (p : ℕ) (hp : Nat.Prime p) : 2 ≤ p := by sorry';

const FORBIDDEN: [string, string, RegExp][] = [
  ['#eval', `#eval IO.println "hi"\n${GOOD}`, /`#eval` runs code/],
  ['run_cmd', `run_cmd Lean.logInfo "x"\n${GOOD}`, /`run_cmd` runs code/],
  ['#exit', `${GOOD}\n#exit`, /`#exit` stops the file/],
  ['elab definition', `elab "foo" : term => return default\n${GOOD}`, /elaborators/],
  ['macro definition', `macro "foo" : term => \`(1)\n${GOOD}`, /macros/],
  ['syntax definition', `syntax "foo" : term\n${GOOD}`, /syntax/],
  ['notation whose right side is a tactic block', `notation "ℙ" => by exact Nat.Prime\n${GOOD}`, /right side is a tactic block/],
  ['initialize', `initialize fooRef : IO.Ref Nat ← IO.mkRef 0\n${GOOD}`, /initialize/],
  ['@[extern]', `@[extern "system"] theorem t : True := by sorry`, /foreign code/],
  ['@[implemented_by]', `@[implemented_by foo] theorem t : True := by sorry`, /other code/],
  ['another attribute', `@[instance] theorem t : True := by sorry`, /attribute `instance`/],
  ['axiom', `axiom cheat : False\n${GOOD}`, /new axioms/],
  ['unsafe', `unsafe def f : Nat := 0\n${GOOD}`, /`unsafe`/],
  ['a partial definition', `partial def f : ℕ → ℕ := fun n => f n\n${GOOD}`, /`partial` definitions/],
  ['import outside the list', `import Lean.Elab.Command\n${GOOD}`, /importing `Lean.Elab.Command`/],
  ['set_option outside the list', `set_option trace.Meta.synthInstance true\n${GOOD}`, /set_option trace.Meta.synthInstance/],
  ['a second theorem', `${GOOD}\ntheorem t2 : True := by sorry`, /anything after the statement/],
  ['code after the statement on a later line', `${GOOD}\nexample : True := trivial`, /anything after the statement/],
  ['a proof instead of sorry', 'theorem t : 1 + 1 = 2 := by norm_num', /must end in `:= by sorry`/],
  ['a command hidden after sorry on the same line', `${GOOD} #eval 1`, /`#eval` runs code/],
  ['run_tac inside the signature', 'theorem t (h : 1 = by run_tac pure ()) : True := by sorry', /`run_tac` runs code/],
  ['by_elab', 'theorem t : (by_elab pure (Lean.mkConst ``True)) := by sorry', /`by_elab` runs code/],
  ['native_decide', 'theorem t : 2 + 2 = 4 := by native_decide', /native_decide/],
  ['no statement at all', 'open Nat', /no theorem/],
  ['stray text', `hello there\n${GOOD}`, /text outside any command/],
];

describe('statement safety', () => {
  for (const [what, code, reason] of FORBIDDEN) {
    it(`rejects ${what} before it reaches a process, saying why`, async () => {
      const runner = new CountingRunner();
      const result = await compileStatement(runner, code);
      expect(runner.calls).toEqual([]);
      expect(result.status).toBe('refused');
      expect(result.messages).toHaveLength(1);
      expect(result.messages[0]!.severity).toBe('error');
      expect(result.messages[0]!.text).toMatch(reason);
      expect(result.reason).toMatch(/^refused before Lean/);
    });
  }

  it('points at the offending construct: line and column of the #eval', () => {
    const message = unsafeStatementReason(`open Nat\n\n  #eval 1\n${GOOD}`);
    expect(message).toMatchObject({ severity: 'error', line: 3, column: 2, endLine: 3, endColumn: 7 });
  });

  it('passes a benign statement with allowed imports, open lines, options, comments and a docstring', async () => {
    const code = [
      'import Mathlib.Data.Nat.Prime.Basic',
      'open Nat Real',
      'set_option autoImplicit false',
      '-- #eval in a comment is harmless',
      '/-- A prime is at least two. (`#exit` here is only text) -/',
      'theorem two_le (p : ℕ) (hp : p.Prime)',
      '    (s : String := "run_cmd") : 2 ≤ p := by',
      '  sorry',
    ].join('\n');
    expect(unsafeStatementReason(code)).toBeUndefined();
    const runner = new CountingRunner();
    expect((await compileStatement(runner, code)).status).toBe('ok');
    expect(runner.calls).toHaveLength(1);
  });

  it('accepts lemma, example, namespaces closed after the statement, and notation-like terms such as #s', () => {
    expect(unsafeStatementReason('lemma l (s : Finset ℕ) : #s = s.card := by sorry')).toBeUndefined();
    expect(unsafeStatementReason('example : True := sorry')).toBeUndefined();
    expect(unsafeStatementReason(`namespace Foo\n${GOOD}\nend Foo`)).toBeUndefined();
    expect(unsafeStatementReason(`${GOOD}\nend Foo`)).toMatchObject({ text: expect.stringMatching(/anything after/) });
    expect(unsafeStatementReason(`private theorem t : True := by sorry`)).toBeUndefined();
  });

  it("finds the statement's `:=` past the ones of binders and of `let`/`have` in its type", () => {
    const code = 'theorem t (n : ℕ := 0) : let m := n + 1\n    have h : m = m := rfl\n    m = n + 1 := by sorry';
    expect(topLevelAssign(code)).toBe(code.lastIndexOf(':='));
    expect(topLevelAssign('theorem letter (hello : ℕ) : hello = hello := by sorry')).toBe(43);
  });

  it('masks comments (nested) and strings but keeps every position', () => {
    const text = 'a /- x /- y -/ z -/ b "q\\"r" -- c\nd';
    const masked = maskCommentsAndStrings(text);
    expect(masked).toHaveLength(text.length);
    expect(masked.replace(/ +/g, ' ')).toBe('a b " " \nd');
  });
});
