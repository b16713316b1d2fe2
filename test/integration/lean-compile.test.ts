import { afterEach, describe, expect, it } from 'vitest';
import { compileStatement } from '../../engines/lean/compile';
import { DEFAULT_SAFETY_POLICY } from '../../engines/lean/statement-safety';
import { createLeanRunner } from '../../engines/lean/create-runner';
import type { CheckOptions, LeanRunner } from '../../engines/lean/runner-contract';
import type { CompileResult } from '../../common/lean-types';
import { fakeRepl, type FakeRepl } from '../fakes/fake-repl-harness';

/** Records what reached the runner. */
class RecordingRunner implements LeanRunner {
  calls: { code: string; opts?: CheckOptions }[] = [];
  constructor(private readonly delayMs = 0) {}
  async check(code: string, opts?: CheckOptions): Promise<CompileResult> {
    this.calls.push({ code, opts });
    await new Promise((r) => setTimeout(r, this.delayMs));
    return { status: 'ok', messages: [], durationMs: this.delayMs };
  }
  async close(): Promise<void> {}
  ready(): boolean {
    return true;
  }
}

const fakes: FakeRepl[] = [];
const runners: LeanRunner[] = [];
afterEach(async () => {
  await Promise.all(runners.splice(0).map((r) => r.close()));
  for (const f of fakes.splice(0)) f.cleanup();
});

describe('compileStatement', () => {
  it('refuses empty code with a message, without calling Lean', async () => {
    const runner = new RecordingRunner();
    const result = await compileStatement(runner, '   \n');
    expect(result.status).toBe('refused');
    expect(result.reason).toMatch(/empty/);
    expect(result.messages).toEqual([{ severity: 'error', line: 1, column: 0, text: result.reason }]);
    expect(runner.calls).toHaveLength(0);
  });

  it('refuses code with imports but no declaration', async () => {
    const runner = new RecordingRunner();
    expect((await compileStatement(runner, 'import Mathlib\n')).status).toBe('refused');
    expect(runner.calls).toHaveLength(0);
  });

  it('passes the statement, timeout and signal to the runner (never the policy)', async () => {
    const runner = new RecordingRunner(20);
    const signal = new AbortController().signal;
    const result = await compileStatement(runner, 'theorem t : True := by sorry', {
      timeoutMs: 5000,
      signal,
      policy: DEFAULT_SAFETY_POLICY,
    });
    expect(result.status).toBe('ok');
    expect(runner.calls).toEqual([{ code: 'theorem t : True := by sorry', opts: { timeoutMs: 5000, signal } }]);
  });

  it('checks end to end through the fake REPL', async () => {
    const fake = fakeRepl({ unknownIdentifierPattern: '.*Primee' });
    fakes.push(fake);
    const runner = createLeanRunner({ replCmd: fake.command, header: 'import Mathlib', timeoutMs: 10_000, sandbox: fake.sandbox });
    runners.push(runner);
    const bad = await compileStatement(runner, 'theorem t (p : ℕ) (h : Nat.Primee p) : 2 ≤ p := by sorry');
    expect(bad).toMatchObject({ status: 'error', messages: [{ line: 1, column: 23, text: "unknown identifier 'Nat.Primee'" }] });
    const good = await compileStatement(runner, 'theorem t (p : ℕ) (h : Nat.Prime p) : 2 ≤ p := by sorry');
    expect(good.status).toBe('ok');
  });
});
