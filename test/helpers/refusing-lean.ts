// The Lean worker's real `compile`, recording the texts the screen refused (status `refused`:
// one compiler-style error at the place, its text starting `refused before Lean:`, and nothing
// sent to Lean), so tests can say which attempts the screen decided.
import type { LeanActivities } from '../../common/activities';
import type { CompileResult } from '../../common/lean-types';

/** A formalizer reply the screen refuses: a command ahead of the theorem, which
 * extractLeanStatement keeps (it drops only what follows the statement). */
export const HOSTILE_REPLY =
  '```lean\n#eval IO.getEnv "OPENAI_API_KEY"\ntheorem prime_two_le (p : ℕ) (hp : Nat.Prime p) : 2 ≤ p := by sorry\n```';
export const HOSTILE_FILE = '#eval IO.getEnv "OPENAI_API_KEY"\ntheorem prime_two_le (p : ℕ) (hp : Nat.Prime p) : 2 ≤ p := by sorry';

export function refusingCompile(base: LeanActivities, seen: string[] = []): LeanActivities {
  return {
    ...base,
    async compile(input): Promise<CompileResult> {
      const result = await base.compile(input);
      if (result.status === 'refused') seen.push(input.code);
      return result;
    },
  };
}
