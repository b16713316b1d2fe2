// The BEq+-style equivalence check against the fake REPL: which tactic proves each direction,
// and a direction whose proof does not need the hypothesis does not count.
import { afterEach, describe, expect, it } from 'vitest';
import { checkEquivalence, EQUIVALENCE_TACTICS, statementParts } from '../../engines/lean/equivalence';
import { ReplPool } from '../../engines/lean/repl-pool';
import { equivalenceVerdict } from '../../common/verdict';
import type { FakeReplScript } from '../fakes/fake-repl-rules';
import { fakeRepl, type FakeRepl } from '../fakes/fake-repl-harness';

const pools: ReplPool[] = [];
const fakes: FakeRepl[] = [];
function setup(script: FakeReplScript = {}) {
  const fake = fakeRepl(script);
  fakes.push(fake);
  const pool = new ReplPool({ replCmd: fake.command, header: 'import Mathlib', timeoutMs: 10_000 });
  pools.push(pool);
  return { fake, pool };
}
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
  for (const f of fakes.splice(0)) f.cleanup();
});

const CANDIDATE = 'theorem cand (p : ℕ) (hp : Nat.Prime p) : 2 ≤ p := by sorry';
const GOLD = 'open Nat\ntheorem gold (p : ℕ) (hp : p.Prime) : p ≥ 2 := by sorry';

describe('statementParts', () => {
  it('splits preamble and signature, dropping imports and the name', () => {
    expect(statementParts(`import Mathlib\n${GOLD}`)).toEqual({ preamble: 'open Nat', signature: '(p : ℕ) (hp : p.Prime) : p ≥ 2' });
    expect(statementParts('example (a b : ℕ) : a + b = b + a := by sorry')).toEqual({
      preamble: '',
      signature: '(a b : ℕ) : a + b = b + a',
    });
  });
});

describe('checkEquivalence', () => {
  it('proves both directions with exact? when each statement gives the other', async () => {
    const { pool } = setup();
    const result = await checkEquivalence(pool, { candidate: CANDIDATE, gold: GOLD }, { timeoutMs: 30_000 });
    expect(result.equivalent).toBe(true);
    expect(result.candidateToGold).toMatchObject({ proved: true, tactic: 'exact?', withoutHypothesis: [] });
    expect(result.goldToCandidate).toMatchObject({ proved: true, tactic: 'exact?' });
  });

  it('falls back to apply, then to convert using k, in order', async () => {
    // exact? and apply fail; convert using 1 fails; convert using 2 works.
    const { pool } = setup({
      diagnostics: [
        { pattern: 'exact\\?', message: '`exact?` could not close the goal' },
        { pattern: 'apply driftline_hyp', message: 'apply failed' },
        { pattern: 'using 1', message: 'unsolved goals' },
      ],
    });
    const result = await checkEquivalence(pool, { candidate: CANDIDATE, gold: GOLD }, { timeoutMs: 30_000 });
    expect(result.equivalent).toBe(true);
    expect(result.candidateToGold).toMatchObject({ proved: true, tactic: 'convert using 2', tried: 4 });
  });

  it('does not count a direction whose proof works without the hypothesis', async () => {
    // The gold's goal `0 ≤ n` is provable outright: every tactic closes it even when the
    // hypothesis is the vacuous `True`, so candidate → gold is not established.
    const { pool } = setup({ selfEvidentGoalPattern: '^0 ≤ n$' });
    const result = await checkEquivalence(
      pool,
      { candidate: 'theorem c (n : ℕ) (h : n = n) : n + 0 = n := by sorry', gold: 'theorem g (n : ℕ) : 0 ≤ n := by sorry' },
      { timeoutMs: 30_000 },
    );
    expect(result.equivalent).toBe(false);
    expect(result.candidateToGold.proved).toBe(false);
    expect(result.candidateToGold.withoutHypothesis).toEqual(EQUIVALENCE_TACTICS.map((t) => t.name));
  });

  it('ends a comparison whose check was refused for tampering: not compared, never "not equivalent"', async () => {
    const { pool } = setup();
    const result = await checkEquivalence(
      pool,
      { candidate: 'theorem c (FORGE_REPL : ℕ) : FORGE_REPL = FORGE_REPL := by sorry', gold: 'theorem g (n : ℕ) : n = n := by sorry' },
      { timeoutMs: 30_000 },
    );
    expect(result).toMatchObject({
      equivalent: false,
      refusedBy: 'tampering',
      reason: expect.stringMatching(/^A check of the comparison was refused: /),
    });
    expect(equivalenceVerdict(result)).toMatch(/^not compared: a check of the comparison was refused for tampering: /);
  });

  it('says so when no tactic proves a direction', async () => {
    const { pool } = setup({ diagnostics: [{ pattern: 'driftline_goal', message: 'unsolved goals' }] });
    const result = await checkEquivalence(pool, { candidate: CANDIDATE, gold: GOLD }, { timeoutMs: 30_000 });
    expect(result).toMatchObject({ equivalent: false, candidateToGold: { proved: false, tried: EQUIVALENCE_TACTICS.length } });
  });

  it('refuses a statement that does not compile, or that is unsafe, without trying tactics', async () => {
    const { pool, fake } = setup({ unknownIdentifiers: ['Nat.Primee'] });
    const bad = await checkEquivalence(
      pool,
      { candidate: 'theorem c (p : ℕ) (hp : Nat.Primee p) : 2 ≤ p := by sorry', gold: GOLD },
      { timeoutMs: 30_000 },
    );
    expect(bad).toMatchObject({
      equivalent: false,
      reason: expect.stringMatching(/candidate statement does not compile: unknown identifier 'Nat.Primee'/),
    });
    expect(fake.count('body')).toBe(1);
    const unsafe = await checkEquivalence(pool, { candidate: `#eval 1\n${CANDIDATE}`, gold: GOLD }, { timeoutMs: 30_000 });
    expect(unsafe).toMatchObject({
      equivalent: false,
      refused: 'candidate',
      reason: expect.stringMatching(/^refused before Lean: the candidate statement: `#eval` runs code/),
    });
    const hostileGold = await checkEquivalence(
      pool,
      {
        candidate: CANDIDATE,
        gold: `open Nat #eval IO.getEnv "OPENAI_API_KEY"
${GOLD}`,
      },
      { timeoutMs: 30_000 },
    );
    expect(hostileGold).toMatchObject({
      equivalent: false,
      refused: 'gold',
      reason: expect.stringMatching(/^refused before Lean: the gold statement/),
    });
    expect(fake.count('body')).toBe(1);
  });

  it("runs a candidate's preamble in a section of its own, which the gate in front of the REPL accepts", async () => {
    const { pool, fake } = setup();
    const result = await checkEquivalence(
      pool,
      { candidate: `variable [inst : Fact False]\n${CANDIDATE}`, gold: GOLD },
      { timeoutMs: 30_000 },
    );
    expect(result.refused).toBeUndefined();
    expect(result.equivalent).toBe(true);
    expect(fake.leaks()).toEqual([]);
  });

  it('answers "not comparable" for a candidate with a definition the gold lacks, without running Lean', async () => {
    const { pool, fake } = setup();
    const result = await checkEquivalence(
      pool,
      { candidate: 'abbrev answer : ℕ := 2\ntheorem c (p : ℕ) (hp : Nat.Prime p) : answer ≤ p := by sorry', gold: GOLD },
      { timeoutMs: 30_000 },
    );
    expect(result).toMatchObject({ equivalent: false, notComparable: true });
    expect(fake.count('body')).toBe(0);
  });

  it('compares two statements with the same definitions, declaring them once in every check', async () => {
    // `answer` exists only where the text defines it; a definition given twice is an error, as in Lean.
    const { pool, fake } = setup({ userNames: 'answer' });
    const defs = 'abbrev answer : ℕ := 5';
    const twice = await pool.check(`${defs}\n${defs}\ntheorem t : answer = 5 := by sorry`);
    expect(twice.messages).toContainEqual(expect.objectContaining({ severity: 'error', text: "'answer' has already been declared" }));
    const before = fake.count('body');
    const result = await checkEquivalence(
      pool,
      {
        candidate: `${defs}\n\ntheorem c : answer = 5 := by sorry`,
        gold: `${defs}\ntheorem g : answer = 5 := by sorry`,
      },
      { timeoutMs: 30_000 },
    );
    expect(result).toMatchObject({ equivalent: true, candidateToGold: { proved: true }, goldToCandidate: { proved: true } });
    expect(result.notComparable).toBeUndefined();
    expect(result.reason).toBeUndefined();
    expect(fake.count('body') - before).toBeGreaterThanOrEqual(4);
  });

  it('screens the candidate as a formalizer text and the gold as a gold statement (screenText)', async () => {
    const { pool, fake } = setup();
    // A gold may leave its proof out (`:= by`); a formalizer text must end in `:= by sorry`.
    const goldWithoutSorry = await checkEquivalence(
      pool,
      { candidate: CANDIDATE, gold: 'theorem gold (p : ℕ) (hp : p.Prime) : p ≥ 2 := by' },
      { timeoutMs: 30_000 },
    );
    expect(goldWithoutSorry).toMatchObject({ equivalent: true });
    const candidateWithoutSorry = await checkEquivalence(
      pool,
      { candidate: 'theorem cand (p : ℕ) (hp : Nat.Prime p) : 2 ≤ p := by', gold: GOLD },
      { timeoutMs: 30_000 },
    );
    expect(candidateWithoutSorry).toMatchObject({
      equivalent: false,
      refused: 'candidate',
      reason: expect.stringMatching(/^refused before Lean: the candidate statement: a proof; the statement must end in `:= by sorry`/),
    });
    const empty = await checkEquivalence(pool, { candidate: CANDIDATE, gold: '   ' }, { timeoutMs: 30_000 });
    expect(empty).toMatchObject({ equivalent: false, refused: 'gold' });
    expect(fake.count('body')).toBeGreaterThan(0);
  });
});
