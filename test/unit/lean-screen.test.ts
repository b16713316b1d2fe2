// The screen against hostile and legitimate corpora (test/fixtures/lean-screen/): every
// hostile input is refused before any runner sees it, every legitimate statement passes, and
// every gold statement of the shared benchmarks passes with its header. The REPL gate
// (screenReplInput) refuses the hostile ones that are not driftline's own shapes.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { benchmarkRecords } from '../helpers/public-data';
import { compileStatement } from '../../engines/lean/compile';
import { tokenize } from '../../engines/lean/lexer';
import { CountingRunner } from '../helpers/counting-runner';
import { MAX_HEARTBEATS, screenHeader, screenReplInput, screenStatement } from '../../engines/lean/statement-safety';
import { EQUIVALENCE_TACTICS } from '../../engines/lean/equivalence-tactics';

interface Case {
  name: string;
  text: string;
  class?: string;
}
const load = (file: string) => JSON.parse(readFileSync(new URL(`../fixtures/lean-screen/${file}`, import.meta.url), 'utf8')) as Case[];
const HOSTILE = load('hostile.json');
const LEGITIMATE = load('legitimate.json');

describe('the screen on a hostile corpus', () => {
  it('has at least 60 inputs over every class of bypass', () => {
    expect(HOSTILE.length).toBeGreaterThanOrEqual(60);
    expect(new Set(HOSTILE.map((c) => c.class))).toEqual(
      new Set(['lexer', 'one-line', 'glued', 'command', 'evaluation', 'limits', 'shape']),
    );
  });

  for (const c of HOSTILE) {
    it(`refuses (${c.class}) ${c.name}, and nothing reaches the runner`, async () => {
      const runner = new CountingRunner();
      const result = await compileStatement(runner, c.text);
      expect(runner.calls).toEqual([]);
      expect(result.status).toBe('refused');
      expect(result.messages).toHaveLength(1);
      expect(result.messages[0]!.text).toMatch(/^refused before Lean: /);
      expect(result.reason).toMatch(/^refused before Lean: /);
    });
  }

  it('the REPL gate lets no `#eval`, `#exit` or command word of the corpus through', () => {
    for (const c of HOSTILE) {
      const gated = screenReplInput(c.text);
      if (!gated.ok) continue;
      // What the gate admits is only statements and driftline's own commands.
      const words = tokenize(gated.value).filter(
        (t) =>
          t.kind === 'hash' ||
          (t.kind === 'ident' && /^(run_|native|def|instance|initialize|macro|elab|syntax|notation|axiom)/.test(t.text)),
      );
      expect(
        words.map((t) => t.text),
        c.name,
      ).toEqual([]);
    }
  });
});

describe('the screen on legitimate statements', () => {
  it('has at least 60 statements in Mathlib and ConNF style', () => {
    expect(LEGITIMATE.length).toBeGreaterThanOrEqual(60);
  });
  for (const c of LEGITIMATE) {
    it(`accepts ${c.name}`, () => {
      const screened = screenStatement(c.text);
      expect(screened.ok ? 'accepted' : screened.reason).toBe('accepted');
    });
  }
});

describe('the text Lean sees is rebuilt from the tokens', () => {
  it('blanks comments, keeping every position', () => {
    const code = '-- #eval 1\ntheorem t /- run_cmd -/ : True := by sorry';
    const screened = screenStatement(code);
    if (!screened.ok) throw new Error(screened.reason);
    expect(screened.value.text).toHaveLength(code.length);
    expect(screened.value.text).not.toMatch(/#eval|run_cmd/);
    expect(screened.value.text.split('\n')[1]).toMatch(/^theorem t +: True := by sorry$/);
  });

  it('bounds heartbeats and recursion depth instead of forwarding them', () => {
    const off = screenStatement('set_option maxHeartbeats 0 in\ntheorem t : True := by sorry');
    const huge = screenStatement('set_option maxRecDepth 2147483647 in\ntheorem t : True := by sorry');
    if (!off.ok || !huge.ok) throw new Error('refused');
    expect(off.value.text).toContain(`set_option maxHeartbeats ${MAX_HEARTBEATS} in`);
    expect(huge.value.text).toContain('set_option maxRecDepth 8192 in');
    const header = screenHeader('import Mathlib\nset_option maxHeartbeats 0\nopen Nat');
    expect(header.ok && header.value).toContain(`maxHeartbeats ${MAX_HEARTBEATS}`);
  });

  it('splits preamble and signature for the equivalence check', () => {
    const screened = screenStatement('import Mathlib\nopen Nat -- why\ntheorem t (n : ℕ) : n = n := by sorry');
    expect(screened.ok && screened.value).toMatchObject({
      imports: ['Mathlib'],
      preamble: 'open Nat',
      keyword: 'theorem',
      name: 't',
      signature: '(n : ℕ) : n = n',
    });
  });

  it('says what is wrong: a second `:=` after sorry is not "no `:=`"', () => {
    const screened = screenStatement('theorem t : True := by sorry := by sorry');
    expect(!screened.ok && screened.reason).toMatch(/nothing may follow `:= by sorry` \(found `:=`\)/);
  });

  it('points at the offending token', () => {
    const screened = screenStatement('open Nat\n\n  #eval 1\ntheorem t : True := by sorry');
    expect(!screened.ok && screened.message).toMatchObject({ line: 3, column: 2, endLine: 3, endColumn: 7 });
  });
});

describe('the REPL gate', () => {
  it('admits the equivalence check texts and the name tools, and nothing like them', () => {
    for (const tactic of EQUIVALENCE_TACTICS) {
      const body = tactic.script
        .split('\n')
        .map((l) => `  ${l}`)
        .join('\n');
      const text = `open Nat\ntheorem driftline_hyp (n : ℕ) : n = n := by sorry\ntheorem driftline_goal_0 (n : ℕ) : n = n := by\n${body}`;
      expect(screenReplInput(text).ok, tactic.name).toBe(true);
    }
    expect(
      screenReplInput(
        'theorem driftline_hyp : True := trivial\ntheorem g : True := by\n  intros\n  apply driftline_hyp <;> (first | rfl | assumption | simp_all | omega | linarith | norm_num)',
      ).ok,
    ).toBe(true);
    expect(screenReplInput('#check @Nat.succ\n#print Nat.succ').ok).toBe(true);
    expect(screenReplInput('#check @Nat.succ #eval 1').ok).toBe(false);
    expect(screenReplInput('#check Nat.succ').ok).toBe(false);
    expect(screenReplInput('theorem g : True := by\n  intros\n  exact?\n  run_tac pure ()').ok).toBe(false);
    expect(screenReplInput('theorem g : 2 + 2 = 4 := by decide').ok).toBe(false);
  });

  it('refuses a hostile header', () => {
    expect(screenHeader('import Mathlib\n#eval 1').ok).toBe(false);
    expect(screenHeader('import Mathlib\ntheorem t : True := by sorry').ok).toBe(false);
    expect(screenHeader('import Lean').ok).toBe(false);
  });
});

// The benchmarks of the public data, as setup pulled them (engines/benchmarks/named.ts resolves
// ConNF's dev split in the full file from the source or in a mirror's split file).
const BENCHMARKS: [string, string, string | undefined, string][] = [
  ['ConNF dev', 'connf', 'dev', 'formal_stmt'],
  ['ProofNet', 'proofnet', undefined, 'formal_stmt'],
  ['miniF2F', 'minif2f', undefined, 'formal_statement'],
];

describe('every gold statement of the benchmarks, with its header', () => {
  for (const [name, benchmark, split, field] of BENCHMARKS) {
    it(`accepts all of ${name}`, () => {
      const records = benchmarkRecords(benchmark, split);
      const refused: string[] = [];
      let count = 0;
      for (const record of records) {
        const item = record as Record<string, string>;
        count++;
        const header = screenHeader(item.header ?? '');
        const gold = screenStatement(String(item[field]).trim(), undefined, { gold: true });
        if (!header.ok) refused.push(`${item.full_name ?? item.name} header: ${header.reason}`);
        if (!gold.ok) refused.push(`${item.full_name ?? item.name}: ${gold.reason}`);
      }
      expect(count).toBeGreaterThan(300);
      expect(refused).toEqual([]);
    });
  }
});
