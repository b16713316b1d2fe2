// Name tools: the pure candidate ranking, and inspectName / resolveName against the fake REPL.
import { afterEach, describe, expect, it } from 'vitest';
import { ReplPool } from '../../engines/lean/repl-pool';
import { NameDirectory } from '../../engines/lean/name-directory';
import { inspectName, isLeanIdentifier, resolveName } from '../../engines/lean/name-tools';
import { editDistance, openedNamespaces, rankNameCandidates, unknownIdentifiers } from '../../engines/lean/name-candidates';
import type { FakeReplScript } from '../fakes/fake-repl-rules';
import { fakeRepl, type FakeRepl } from '../fakes/fake-repl-harness';
import { FIXTURE_CORPUS } from '../helpers/stack';

const NAMES = [
  'Nat.Prime',
  'Nat.Prime.two_le',
  'Nat.prime_two',
  'Int.natAbs',
  'Nat.sqrt',
  'Real.sqrt',
  'Real.sqrt_nonneg',
  'NNReal.sqrt',
  'Finset.sum_comm',
  'IsPrimitiveRoot',
  'orderOf',
];

describe('name candidates (pure)', () => {
  it('finds the full name of a suffix written without its namespace', () => {
    expect(rankNameCandidates('sqrt_nonneg', NAMES)[0]).toMatchObject({ name: 'Real.sqrt_nonneg', why: 'suffix' });
  });

  it('matches case-insensitively before anything fuzzier', () => {
    expect(rankNameCandidates('nat.prime', NAMES)[0]).toMatchObject({ name: 'Nat.Prime', why: 'case' });
    expect(rankNameCandidates('isPrimitiveRoot', NAMES)[0]).toMatchObject({ name: 'IsPrimitiveRoot', why: 'case' });
  });

  it('corrects a typo by edit distance', () => {
    expect(rankNameCandidates('Nat.Primee', NAMES)[0]).toMatchObject({ name: 'Nat.Prime', why: 'typo' });
    expect(rankNameCandidates('ordrOf', NAMES).map((c) => c.name)).toContain('orderOf');
  });

  it('swaps the namespace when the last part is right, preferring hinted namespaces', () => {
    const ranked = rankNameCandidates('Int.sqrt', NAMES);
    expect(ranked.map((c) => c.name)).toEqual(expect.arrayContaining(['Nat.sqrt', 'Real.sqrt', 'NNReal.sqrt']));
    expect(ranked.every((c) => c.why === 'namespace-swap')).toBe(true);
    expect(rankNameCandidates('Int.sqrt', NAMES, { namespaceHints: ['Real'] })[0]!.name).toBe('Real.sqrt');
  });

  it('returns nothing for a token unlike any name, and honours topK', () => {
    expect(rankNameCandidates('zzzzqqqq', NAMES)).toEqual([]);
    expect(rankNameCandidates('sqrt', NAMES, { topK: 2 })).toHaveLength(2);
  });

  it('stops edit distance early past the budget', () => {
    expect(editDistance('kitten', 'sitting', 3)).toBe(3);
    expect(editDistance('abc', 'xyzuvw', 2)).toBe(3);
  });

  it('reads unknown identifiers and opened namespaces from Lean output and code', () => {
    expect(
      unknownIdentifiers([
        { severity: 'error', text: "unknown identifier 'Nat.Primee'" },
        { severity: 'error', text: "unknown constant 'Real.sqrtt'" },
        { severity: 'error', text: "unknown identifier 'Nat.Primee'" },
        { severity: 'warning', text: "unknown identifier 'x'" },
      ]),
    ).toEqual(['Nat.Primee', 'Real.sqrtt']);
    expect(openedNamespaces('open Nat Real\nopen Finset in\ntheorem t : True := by sorry')).toEqual(['Nat', 'Real', 'Finset']);
  });

  it('accepts only plain Lean identifiers for splicing into commands', () => {
    expect(isLeanIdentifier('Nat.Prime.two_le')).toBe(true);
    expect(isLeanIdentifier("h'")).toBe(true);
    expect(isLeanIdentifier('Nat.Prime\n#eval 1')).toBe(false);
    expect(isLeanIdentifier('a b')).toBe(false);
  });
});

const pools: ReplPool[] = [];
const fakes: FakeRepl[] = [];
function pool(script: FakeReplScript): { pool: ReplPool; fake: FakeRepl } {
  const fake = fakeRepl(script);
  fakes.push(fake);
  const p = new ReplPool({ replCmd: fake.command, header: 'import Mathlib', timeoutMs: 10_000 });
  pools.push(p);
  return { pool: p, fake };
}
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
  for (const f of fakes.splice(0)) f.cleanup();
});

describe('inspectName', () => {
  it('reports an existing name with its #check type and #print text', async () => {
    const { pool: p } = pool({ knownNames: { 'Nat.Prime': 'ℕ → Prop' }, onlyKnownNames: true });
    const info = await inspectName(p, { name: 'Nat.Prime' });
    expect(info).toMatchObject({ name: 'Nat.Prime', exists: true, type: 'ℕ → Prop' });
    expect(info.text).toMatch(/Nat\.Prime : ℕ → Prop/);
  });

  it("reports a missing name as not existing, with Lean's reason", async () => {
    const { pool: p } = pool({ knownNames: { 'Nat.Prime': 'ℕ → Prop' }, onlyKnownNames: true });
    expect(await inspectName(p, { name: 'Nat.Primee' })).toMatchObject({ exists: false, reason: "unknown identifier 'Nat.Primee'" });
  });

  it('never sends something that is not an identifier to Lean', async () => {
    const { pool: p, fake } = pool({});
    expect(await inspectName(p, { name: 'x\n#eval 1' })).toMatchObject({
      exists: false,
      reason: expect.stringMatching(/not a Lean identifier/),
    });
    expect(fake.processes()).toBe(0);
  });
});

describe('resolveName', () => {
  it('suggests the closest real names from the library, confirmed by #check in one command', async () => {
    const names = await new NameDirectory([{ name: 'mini', corpusPath: FIXTURE_CORPUS }]).names('mini');
    expect(names).toContain('Nat.Prime');
    const { pool: p, fake } = pool({ unknownIdentifiers: ['Nat.Primee'] });
    const result = await resolveName(p, names, { token: 'Nat.Primee', library: 'mini' });
    expect(result.suggestions[0]).toMatchObject({ name: 'Nat.Prime', type: 'Prop', why: 'typo' });
    expect(result.considered).toBeGreaterThanOrEqual(1);
    expect(fake.count('body')).toBe(1);
  });

  it('drops candidates Lean does not confirm', async () => {
    const names = ['Nat.Prime', 'Nat.prime', 'Nat.Primes'];
    const { pool: p } = pool({ knownNames: { 'Nat.Prime': 'ℕ → Prop' }, onlyKnownNames: true });
    const result = await resolveName(p, names, { token: 'Nat.Primee', library: 'x' });
    expect(result.suggestions.map((s) => s.name)).toEqual(['Nat.Prime']);
    expect(result.considered).toBe(3);
  });

  it('asks Lean nothing when no name is close', async () => {
    const { pool: p, fake } = pool({});
    expect(await resolveName(p, NAMES, { token: 'qqqqqqqq', library: 'x' })).toEqual({ token: 'qqqqqqqq', suggestions: [], considered: 0 });
    expect(fake.processes()).toBe(0);
  });

  it('names an unknown library clearly', async () => {
    await expect(new NameDirectory([]).names('nope')).rejects.toThrow(/unknown library "nope"/);
  });
});
