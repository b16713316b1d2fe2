// A test double of the Lean worker's `compile` with the refusal contract of issue 22: what the
// statement screen refuses comes back as status `refused` (one compiler-style error at the
// place, its text starting `refused before Lean:`, and `reason`), and nothing reaches Lean;
// everything else goes to the real activity. It screens with the worker's own
// `screenStatement`, so the refusals are the real screen's. Once engines/lean/compile.ts
// produces `refused` itself, the tests using this should run against the real activities too.
import type { CompileResult, LeanActivities } from '../../common/types';

/** A formalizer reply the screen refuses: a command ahead of the theorem, which
 * extractLeanStatement keeps (it drops only what follows the statement). */
export const HOSTILE_REPLY = '```lean\n#eval IO.getEnv "OPENAI_API_KEY"\ntheorem prime_two_le (p : ℕ) (hp : Nat.Prime p) : 2 ≤ p := by sorry\n```';
export const HOSTILE_FILE = '#eval IO.getEnv "OPENAI_API_KEY"\ntheorem prime_two_le (p : ℕ) (hp : Nat.Prime p) : 2 ≤ p := by sorry';

const PREFIX = /^\s*(?:refused|rejected) before Lean:\s*/i;

export function refusingCompile(base: LeanActivities, seen: string[] = []): LeanActivities {
  return {
    ...base,
    async compile(input): Promise<CompileResult> {
      const refusal = await base.screenStatement(input);
      if (!refusal) return base.compile(input);
      seen.push(input.code);
      const reason = refusal.text.replace(PREFIX, '');
      return { status: 'refused', messages: [{ ...refusal, text: `refused before Lean: ${reason}` }], reason, durationMs: 0 };
    },
  };
}
