import { describe, expect, it } from 'vitest';
import type { Premise } from '../../common/retrieval-types';
import type { FormalizeStageInput } from '../../common/run-types';
import { buildDecomposeMessages, DecomposeReply, toSubQueries } from '../../engines/llm/decompose-prompt';
import { buildFormalizeMessages, extractLeanStatement, leanStatementGrammar, MAX_SOURCE_CHARS } from '../../engines/llm/formalize-prompt';
import { buildJudgeMessages, enforceVerdict, JudgeReply } from '../../engines/llm/judge-prompt';
import { gbnfMaxLength, gbnfRegExp } from '../helpers/gbnf';

const statement = 'Let p be a prime of the form 4t+3. Then a is a primitive root mod p iff -a has order (p-1)/2.';

describe('decompose prompt', () => {
  it('asks for single-concept sub-queries with a predicted formal form, and carries the statement', () => {
    const [system, user] = buildDecomposeMessages(`  ${statement}\n`);
    expect(system!.role).toBe('system');
    expect(system!.content).toMatch(/one\s+mathematical concept/);
    expect(system!.content).toContain('"formal"');
    expect(system!.content).toContain('Nat.Prime p');
    expect(user!.content).toBe(`Statement:\n${statement}`);
  });

  it('requires at least one sub-query with both fields', () => {
    expect(DecomposeReply.safeParse({ subqueries: [] }).success).toBe(false);
    expect(DecomposeReply.safeParse({ subqueries: [{ phrase: 'a prime p' }] }).success).toBe(false);
    expect(DecomposeReply.safeParse({ subqueries: [{ phrase: 'a prime p', formal: 'Nat.Prime p' }] }).success).toBe(true);
  });

  it('trims sub-queries and drops exact repeats, keeping order', () => {
    const out = toSubQueries({
      subqueries: [
        { phrase: ' a prime p ', formal: 'Nat.Prime p ' },
        { phrase: 'order of -a', formal: 'orderOf (-a)' },
        { phrase: 'a prime p', formal: 'Nat.Prime p' },
      ],
    });
    expect(out).toEqual([
      { phrase: 'a prime p', formal: 'Nat.Prime p' },
      { phrase: 'order of -a', formal: 'orderOf (-a)' },
    ]);
  });
});

const premises: Premise[] = [
  {
    name: 'IsPrimitiveRoot',
    kind: 'structure',
    declaration: 'structure IsPrimitiveRoot (ζ : M) (k : ℕ) : Prop',
    source: 'structure IsPrimitiveRoot (ζ : M) (k : ℕ) : Prop where\n  pow_eq_one : ζ ^ k = 1',
  },
  { name: 'orderOf', kind: 'def', declaration: 'def orderOf (x : G) : ℕ' },
];
const base: FormalizeStageInput = {
  statement,
  premises,
  examples: [
    {
      name: 'ZMod.orderOf_dvd',
      formal: 'theorem ZMod.orderOf_dvd (a : ZMod p) : orderOf a ∣ p - 1',
      informal: 'The order of a unit mod p divides p - 1.',
      covers: ['orderOf'],
    },
    { name: 'IsPrimitiveRoot.pow', formal: 'theorem IsPrimitiveRoot.pow_eq_one : ζ ^ k = 1', covers: ['IsPrimitiveRoot'] },
  ],
};

describe('formalize prompt', () => {
  it('states the rules: one theorem, := by sorry, no imports, only the definitions it needs, an answer as an abbrev', () => {
    const system = buildFormalizeMessages(base)[0]!.content;
    expect(system).toContain(':= by sorry');
    expect(system).toMatch(/exactly ONE/);
    expect(system).toMatch(/Do not write `import`/);
    expect(system).toMatch(/put the definitions the statement\s+needs, if any/);
    expect(system).toMatch(/find all[\s\S]*as an `abbrev`/);
    expect(system).toMatch(/placeholder/);
  });

  it('lists premises (name, declaration, source), then examples as pairs, then the statement', () => {
    const messages = buildFormalizeMessages(base);
    expect(messages).toHaveLength(2);
    const user = messages[1]!.content;
    const at = (s: string) => user.indexOf(s);
    expect(at('1. IsPrimitiveRoot (structure)')).toBeGreaterThan(-1);
    expect(at('pow_eq_one : ζ ^ k = 1')).toBeGreaterThan(at('1. IsPrimitiveRoot'));
    expect(at('2. orderOf (def)')).toBeGreaterThan(-1);
    expect(at('Informal: The order of a unit mod p divides p - 1.')).toBeGreaterThan(at('2. orderOf'));
    expect(at('theorem ZMod.orderOf_dvd')).toBeGreaterThan(at('Informal: The order'));
    expect(user).toContain('Informal: (not available; theorem IsPrimitiveRoot.pow)');
    expect(at(statement)).toBeGreaterThan(at('theorem IsPrimitiveRoot.pow_eq_one'));
    expect(user.trimEnd().endsWith(statement)).toBe(true);
  });

  it('omits empty sections and cuts very long sources', () => {
    const long: Premise = { name: 'Big', kind: 'theorem', declaration: 'theorem Big : True', source: 'x'.repeat(MAX_SOURCE_CHARS + 500) };
    const user = buildFormalizeMessages({ statement: 's', premises: [long], examples: [] })[1]!.content;
    expect(user).not.toContain('## Examples');
    expect(user).toContain('(source cut)');
    expect(user).not.toContain('x'.repeat(MAX_SOURCE_CHARS + 1));
    expect(buildFormalizeMessages({ statement: 's', premises: [], examples: [] })[1]!.content).not.toContain('## Premises');
  });

  it('on a repair round shows the previous attempt, the compiler messages and name suggestions', () => {
    const messages = buildFormalizeMessages({
      ...base,
      repair: {
        statement: 'theorem x (p : ℕ) (hp : Nat.prime p) : True := by sorry',
        messages: [
          { severity: 'error', line: 1, column: 21, text: "unknown identifier 'Nat.prime'" },
          { severity: 'warning', line: 1, column: 8, text: "declaration uses 'sorry'" },
        ],
        suggestions: { 'Nat.prime': ['Nat.Prime', 'Prime'] },
      },
    });
    expect(messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user']);
    expect(messages[2]!.content).toContain('Nat.prime p');
    const repair = messages[3]!.content;
    expect(repair).toContain("1:21 error: unknown identifier 'Nat.prime'");
    expect(repair).not.toContain("declaration uses 'sorry'");
    expect(repair).toContain('- Nat.prime: Nat.Prime, Prime');
    expect(repair).toMatch(/corrected definitions \(if it needs any\) and theorem/);
  });
});

describe('leanStatementGrammar (the formalizer reply of a grammar-decoding local model)', () => {
  const fenced = (code: string) => '```lean\n' + code + ' := by sorry\n```';
  const answer = 'abbrev answer : Set ℕ := {n | n = 2 ∨ n = 3}\n\n';
  const structure = 'structure Point where\n  x : ℝ\n  y : ℝ\n';
  const inductive = 'inductive Color\n| red\n| blue\n';
  const theorem = 'theorem t : {n : ℕ | Nat.Prime n ∧ n ∣ 6} = answer';

  it('admits definitions (def, abbrev, noncomputable def, structure, inductive, instance) before the one theorem', () => {
    const g = gbnfRegExp(leanStatementGrammar(2048));
    expect(g.test(fenced(theorem))).toBe(true);
    expect(g.test(fenced(answer + theorem))).toBe(true);
    expect(g.test(fenced(structure + '\n' + inductive + '\n' + answer + theorem))).toBe(true);
    for (const head of [
      'def f (n : ℕ) : ℕ := n + 1',
      'noncomputable def g : ℝ := Real.pi',
      'instance : Inhabited Color := ⟨.red⟩',
      'open Real',
    ]) {
      expect(g.test(fenced(`${head}\n${theorem}`)), head).toBe(true);
    }
  });

  it('admits no other command before the theorem, no fourth definition, no backquote, and nothing after the block', () => {
    const g = gbnfRegExp(leanStatementGrammar(2048));
    for (const bad of ['#eval 1', 'macro "x" : term => `(1)', 'axiom bad : False', '@[simp] def f : ℕ := 1', 'unsafe def f : ℕ := 1']) {
      expect(g.test(fenced(`${bad}\n${theorem}`)), bad).toBe(false);
    }
    expect(g.test(fenced('def a : ℕ := 1\ndef b : ℕ := 2\ndef c : ℕ := 3\ndef d : ℕ := 4\n' + theorem))).toBe(false);
    expect(g.test(fenced('theorem t : `(x) = 1'))).toBe(false);
    expect(g.test(fenced(theorem) + '\nmore')).toBe(false);
    // A definition's later lines are indented or constructor lines; a bare line is not one.
    expect(g.test(fenced('structure P where\nx : ℕ\n' + theorem))).toBe(false);
  });

  it('ends within max tokens at one character a token, definitions only when there is room for them', () => {
    for (const maxTokens of [41, 100, 150, 280, 300, 400, 800, 1024, 2048, 4096, 100_000]) {
      const g = leanStatementGrammar(maxTokens);
      expect(gbnfMaxLength(g), `${maxTokens}`).toBeLessThanOrEqual(maxTokens);
    }
    expect(leanStatementGrammar(150)).not.toContain('definition');
    expect(leanStatementGrammar(150)).toContain('statement ::= [^`]{1,110}');
    expect(leanStatementGrammar(300)).toContain('definition{0,1}');
    expect(leanStatementGrammar(1024)).toContain('definition{0,3}');
    expect(leanStatementGrammar(100_000)).toContain('statement ::= [^`]{1,1500}');
  });
});

describe('extractLeanStatement', () => {
  it('keeps the definitions before the theorem with it, their bodies untouched', () => {
    const reply =
      'The answer:\n```lean\nimport Mathlib\n\nabbrev answer : Set ℕ := {n | n = 2}\n\ndef f (n : ℕ) : ℕ := n + 1\n\n' +
      'theorem t : {n : ℕ | Nat.Prime n ∧ Even n} = answer := by\n  ext n\n  simp\n```';
    expect(extractLeanStatement(reply)).toBe(
      'abbrev answer : Set ℕ := {n | n = 2}\n\ndef f (n : ℕ) : ℕ := n + 1\n\ntheorem t : {n : ℕ | Nat.Prime n ∧ Even n} = answer := by sorry',
    );
  });

  it('joins definitions given in their own blocks with the theorem block after them, in order', () => {
    const reply = [
      'First the answer set:',
      '```lean\nimport Mathlib\n\nabbrev answer : Set ℕ := {2, 3}\n```',
      'and a helper structure:',
      '```lean4\nstructure Pair where\n  a : ℕ\n  b : ℕ\n```',
      'Then the statement:',
      '```lean\ntheorem t : {n : ℕ | n.Prime ∧ n ∣ 6} = answer := by\n  ext n; simp\n```',
    ].join('\n');
    expect(extractLeanStatement(reply)).toBe(
      'abbrev answer : Set ℕ := {2, 3}\n\nstructure Pair where\n  a : ℕ\n  b : ℕ\n\ntheorem t : {n : ℕ | n.Prime ∧ n ∣ 6} = answer := by sorry',
    );
  });

  it('joins no block before an earlier theorem, no non-Lean or definition-free block, and nothing after the theorem', () => {
    const reply = [
      '```lean\ndef stale : ℕ := 0\n```',
      '```lean\ntheorem old : stale = 0 := by sorry\n```',
      '```lean\ndef f (n : ℕ) : ℕ := n + 1\n```',
      '```python\ndef g(n): return n\n```',
      '```lean\ntheorem t (n : ℕ) : f n = n + 1 := by sorry\n```',
      '```lean\ndef after : ℕ := 1\n```',
    ].join('\n');
    expect(extractLeanStatement(reply)).toBe('def f (n : ℕ) : ℕ := n + 1\n\ntheorem t (n : ℕ) : f n = n + 1 := by sorry');
    // A block of checks between the definitions and the theorem ends the run of definitions.
    const gap = '```lean\ndef f : ℕ := 1\n```\n```lean\n#check f\n```\n```lean\ntheorem t : f = 1 := by sorry\n```';
    expect(extractLeanStatement(gap)).toBe('theorem t : f = 1 := by sorry');
  });

  it('does not declare a definition twice when the theorem block repeats it', () => {
    const defs = 'abbrev answer : ℕ := 5';
    const repeated = `\`\`\`lean\n${defs}\n\`\`\`\nWhole:\n\`\`\`lean\n${defs}\n\ntheorem t : answer = 5 := by sorry\n\`\`\``;
    expect(extractLeanStatement(repeated)).toBe(`${defs}\n\ntheorem t : answer = 5 := by sorry`);
    // Redefined with another body in the later block: the later one is kept, the earlier left out.
    const redefined = '```lean\ndef f : ℕ := 1\n```\n```lean\ndef f : ℕ := 2\ntheorem t : f = 2 := by sorry\n```';
    expect(extractLeanStatement(redefined)).toBe('def f : ℕ := 2\ntheorem t : f = 2 := by sorry');
  });

  it('takes the theorem from a ```lean block and drops imports', () => {
    const reply = 'Here you go:\n```lean\nimport Mathlib\n\ntheorem t (n : ℕ) : n + 0 = n := by sorry\n```\nDone.';
    expect(extractLeanStatement(reply)).toBe('theorem t (n : ℕ) : n + 0 = n := by sorry');
  });

  it('accepts raw code without a fence', () => {
    expect(extractLeanStatement('lemma l : 1 = 1 := by sorry')).toBe('lemma l : 1 = 1 := by sorry');
  });

  it('replaces a proof with by sorry', () => {
    const reply = '```lean\ntheorem t (a b : ℕ) : a + b = b + a := by\n  simp [Nat.add_comm]\n```';
    expect(extractLeanStatement(reply)).toBe('theorem t (a b : ℕ) : a + b = b + a := by sorry');
    expect(extractLeanStatement('theorem t : 2 = 2 := rfl')).toBe('theorem t : 2 = 2 := by sorry');
  });

  it('adds := by sorry when the statement has no proof part', () => {
    expect(extractLeanStatement('```lean4\ntheorem t : ∀ n : ℕ, n ≤ n\n```')).toBe('theorem t : ∀ n : ℕ, n ≤ n := by sorry');
  });

  it('is not fooled by := inside binders or comments', () => {
    const code = 'theorem t (n : ℕ := 3) -- n defaults to 3 := odd\n  : n = n := by omega';
    expect(extractLeanStatement(code)).toBe('theorem t (n : ℕ := 3) -- n defaults to 3 := odd\n  : n = n := by sorry');
  });

  it('keeps open lines before the theorem and picks the last block with a declaration', () => {
    const reply = [
      'First try:',
      '```lean\ntheorem old : False := by sorry\n```',
      'Better:',
      '```lean\nimport Mathlib\nopen Real\n\ntheorem t : Real.pi > 3 := by\n  exact Real.pi_gt_three\n```',
      '```text\nnotes\n```',
    ].join('\n');
    expect(extractLeanStatement(reply)).toBe('open Real\n\ntheorem t : Real.pi > 3 := by sorry');
  });

  it('handles attributes, modifiers and an unclosed fence', () => {
    expect(extractLeanStatement('```lean\n@[simp] protected theorem X.t : True := trivial')).toBe(
      '@[simp] protected theorem X.t : True := by sorry',
    );
  });

  it('throws a clear error when there is no theorem, lemma or example', () => {
    expect(() => extractLeanStatement('```lean\ndef f : ℕ := 3\n```')).toThrow(/no Lean `theorem`, `lemma` or `example`/);
    expect(() => extractLeanStatement('I cannot formalize this.')).toThrow(/:= by sorry/);
  });
});

describe('judge prompt', () => {
  it('carries the rubric and the inputs, including whether Lean accepted the code', () => {
    const [system, user] = buildJudgeMessages({ statement, formalStatement: 'theorem t : True := by sorry', compiled: false });
    for (const level of ['0:', '1-3:', '4-6:', '7-8:', '9:', '10:']) expect(system!.content).toContain(level);
    expect(system!.content).toMatch(/proof part .* does not matter/);
    expect(system!.content).toMatch(/placeholder|stand-in/);
    expect(user!.content).toContain(statement);
    expect(user!.content).toContain('theorem t : True := by sorry');
    expect(user!.content).toContain('Accepted by Lean: no');
  });

  it('validates the reply shape', () => {
    expect(JudgeReply.safeParse({ grade: 11, faithful: true, explanation: '' }).success).toBe(false);
    expect(JudgeReply.safeParse({ grade: 8.5, faithful: false, explanation: '' }).success).toBe(false);
    expect(JudgeReply.safeParse({ grade: 9, faithful: true, explanation: 'ok' }).success).toBe(true);
  });
});

describe('enforceVerdict', () => {
  it('makes a compiled grade-9 statement faithful even if the model said otherwise', () => {
    expect(enforceVerdict({ grade: 9, faithful: false, explanation: ' tiny gap ' }, true)).toEqual({
      grade: 9,
      faithful: true,
      explanation: 'tiny gap',
    });
  });

  it('makes a compiled grade-8 statement unfaithful even if the model said faithful', () => {
    expect(enforceVerdict({ grade: 8, faithful: true, explanation: '' }, true).faithful).toBe(false);
  });

  it('clamps a statement that did not compile to grade 3 and unfaithful', () => {
    expect(enforceVerdict({ grade: 10, faithful: true, explanation: 'same' }, false)).toMatchObject({ grade: 3, faithful: false });
    expect(enforceVerdict({ grade: 1, faithful: false, explanation: '' }, false).grade).toBe(1);
  });
});
