// A benchmark file whose statements take the fake LLM's and the fake REPL's three paths: primes
// compile and are judged faithful, "even" statements never compile (the fake Lean reports a type
// mismatch for them, with REPL `typeMismatchPatterns: ['Even \\(2 \\* n\\)']`), the rest compile.
// For the sweeps that the durability tests and benchmarks run with worker processes.
import { writeFileSync } from 'node:fs';

/** The fake REPL's script that makes the "even" items fail to compile. */
export const EVEN_FAILS = { typeMismatchPatterns: ['Even \\(2 \\* n\\)'] };

/** Writes `items` lines in the rautoformalizer format, named `<prefix>.item_<i>`. */
export function writeThreeKindBenchmark(file: string, opts: { items: number; prefix: string; source?: (i: number) => string }): void {
  const kinds = [
    (i: number) => `If p is a prime number larger than ${i} then p is at least 2.`,
    (i: number) => `Twice the number ${i} is even.`,
    (i: number) => `The square of the real number ${i} is nonnegative.`,
  ];
  const lines = Array.from({ length: opts.items }, (_, i) =>
    JSON.stringify({
      full_name: `${opts.prefix}.item_${i}`,
      informal_stmt: kinds[i % 3]!(i),
      formal_stmt: `theorem thm_P : True := by sorry`,
      mathlib_dependencies: i % 3 === 0 ? ['Nat.Prime'] : [],
      source: opts.source?.(i) ?? 'A',
    }),
  );
  writeFileSync(file, `${lines.join('\n')}\n`);
}
