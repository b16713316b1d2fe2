import { afterEach, describe, expect, it } from 'vitest';
import { LEAN_FAILURE } from '../../common/failures';
import { EngineError } from '../../engines/errors';
import { DEFAULT_SAFETY_POLICY, type SafetyPolicy } from '../../engines/lean/statement-safety';
import { createLeanRunner } from '../../engines/lean/create-runner';
import { SkippedLeanRunner, SKIPPED_REASON, type LeanRunner } from '../../engines/lean/runner-contract';
import { ReplPool } from '../../engines/lean/repl-pool';
import type { FakeReplScript } from '../fakes/fake-repl-rules';
import { fakeRepl, type FakeRepl } from '../fakes/fake-repl-harness';

const runners: LeanRunner[] = [];
const fakes: FakeRepl[] = [];

function setup(
  script: FakeReplScript = {},
  overrides: { timeoutMs?: number; header?: string; maxUses?: number; policy?: SafetyPolicy } = {},
) {
  const fake = fakeRepl(script);
  fakes.push(fake);
  const runner = createLeanRunner({
    replCmd: fake.command,
    header: 'import Mathlib',
    timeoutMs: 10_000,
    sandbox: fake.sandbox,
    ...overrides,
  });
  runners.push(runner);
  return { fake, runner };
}

afterEach(async () => {
  await Promise.all(runners.splice(0).map((r) => r.close()));
  for (const f of fakes.splice(0)) f.cleanup();
});

describe('the Lean runner (a pool of one REPL process)', () => {
  it('imports the header once and checks every statement in its environment', async () => {
    const { fake, runner } = setup({ headerDelayMs: 300 });
    expect(runner).toBeInstanceOf(ReplPool);
    for (const name of ['a', 'b', 'c']) {
      const result = await runner.check(`theorem ${name} : 1 + 1 = 2 := by sorry`);
      expect(result.status).toBe('ok');
    }
    expect(fake.count('header')).toBe(1);
    expect(fake.count('body')).toBe(3);
    expect(fake.processes()).toBe(1);
    expect(
      fake
        .events()
        .filter((e) => e.event === 'body')
        .map((e) => e.detail),
    ).toEqual(['env=2 base=0', 'env=4 base=0', 'env=6 base=0']); // each reply is followed by a confirmation (repl-process.ts)
  });

  it('treats a statement that repeats the library import (or a submodule of it) as the same header', async () => {
    const { fake, runner } = setup();
    await runner.check('import Mathlib\ntheorem a : True := by sorry');
    await runner.check('import Mathlib.Data.Nat.Prime.Basic\nopen Nat\ntheorem b : True := by sorry');
    expect(fake.count('header')).toBe(1);
  });

  it('imports each distinct header once: the library one and an item header', async () => {
    const { fake, runner } = setup();
    await runner.check('theorem a : True := by sorry');
    await runner.check('theorem b : True := by sorry', { header: 'import ConNF\nopen ConNF' });
    await runner.check('theorem c : True := by sorry', { header: 'import ConNF\nopen ConNF' });
    await runner.check('theorem d : True := by sorry');
    expect(
      fake
        .events()
        .filter((e) => e.event === 'header')
        .map((e) => e.detail),
    ).toEqual(['env=0 imports=Mathlib', 'env=4 imports=ConNF']);
  });

  it('reports an unknown identifier at its line and column in the statement the LLM wrote', async () => {
    const { runner } = setup({ unknownIdentifiers: ['Nat.Primee'] });
    const statement = ['import Mathlib', 'open Nat', '', 'theorem two_le (p : ℕ)', '    (hp : Nat.Primee p) : 2 ≤ p := by sorry'].join(
      '\n',
    );
    const result = await runner.check(statement);
    expect(result.status).toBe('error');
    expect(result.messages).toEqual([
      { severity: 'error', line: 5, column: 10, endLine: 5, endColumn: 20, text: "unknown identifier 'Nat.Primee'" },
    ]);
    // The position really points at the name in the statement.
    expect(statement.split('\n')[4]!.slice(10, 20)).toBe('Nat.Primee');
  });

  it('reports unknown constants and type mismatches from the script as errors', async () => {
    const { runner } = setup({ unknownConstants: ['Real.sqrtt'], typeMismatchPatterns: ['\\(1 : ℕ\\)'] });
    const result = await runner.check('theorem t : Real.sqrtt 4 = (1 : ℕ) := by sorry');
    expect(result.status).toBe('error');
    expect(result.messages.map((m) => [m.column, m.text.split('\n')[0]])).toEqual([
      [12, "unknown constant 'Real.sqrtt'"],
      [27, 'type mismatch'],
    ]);
  });

  it('counts a statement with only the sorry warning as compiled, keeping the warning', async () => {
    const { runner } = setup();
    const result = await runner.check('theorem t (n : ℕ) : n + 0 = n := by sorry');
    expect(result).toMatchObject({
      status: 'ok',
      messages: [{ severity: 'warning', line: 1, column: 8, text: "declaration uses 'sorry'" }],
    });
    expect(result.durationMs).toBeGreaterThanOrEqual(0);
  });

  it('answers a statement that outlives its timeout with `timeout`, and a fresh process takes the next check', async () => {
    const { fake, runner } = setup();
    await runner.check('theorem warm : True := by sorry');
    const slow = await runner.check('theorem HANG_REPL : True := by sorry', { timeoutMs: 300 });
    expect(slow.status).toBe('timeout');
    expect(slow.reason).toMatch(/within 300 ms/);
    expect(slow.messages[0]?.severity).toBe('error');
    const next = await runner.check('theorem after : True := by sorry');
    expect(next.status).toBe('ok');
    expect(fake.processes()).toBe(2);
    expect(fake.count('header')).toBe(2); // the new process imports the header again
  });

  it('throws a retryable LeanReplCrashed failure when the retry on a fresh process crashes too', async () => {
    const { fake, runner } = setup();
    const error = await runner.check('theorem CRASH_REPL : True := by sorry').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EngineError);
    const failure = error as EngineError;
    expect(failure.type).toBe(LEAN_FAILURE.replCrashed);
    expect(failure.nonRetryable).toBe(false);
    expect(failure.message).toContain('Stack overflow detected');
    const next = await runner.check('theorem fine : True := by sorry');
    expect(next.status).toBe('ok');
    expect(fake.count('crash')).toBe(2); // the first process, then the one retry
    expect(fake.processes()).toBe(3);
  });

  it('serializes concurrent checks and gives each its own answer', async () => {
    const { fake, runner } = setup({ bodyDelayMs: 50, unknownIdentifiers: ['Bad.name'] });
    const results = await Promise.all([
      runner.check('theorem a : True := by sorry'),
      runner.check('theorem b : Bad.name := by sorry'),
      runner.check('theorem c : True := by sorry'),
    ]);
    expect(results.map((r) => r.status)).toEqual(['ok', 'error', 'ok']);
    expect(fake.count('header')).toBe(1);
  });

  it("reports a failing import of the statement's own at that import's line", async () => {
    // Foo is an import root the screen allows here, so the import reaches Lean and fails there.
    const { runner } = setup(
      { missingModules: ['Foo.Bar'] },
      { policy: { ...DEFAULT_SAFETY_POLICY, allowedImports: [...DEFAULT_SAFETY_POLICY.allowedImports, 'Foo'] } },
    );
    const result = await runner.check('import Foo.Bar\ntheorem t : True := by sorry');
    expect(result.status).toBe('error');
    expect(result.messages).toEqual([
      { severity: 'error', line: 1, column: 0, text: expect.stringContaining("unknown module prefix 'Foo'") },
    ]);
  });

  it('fails non-retryably when the library header itself does not import', async () => {
    const { runner } = setup({ missingModules: ['ConNF'] }, { header: 'import ConNF' });
    const error = await runner.check('theorem t : True := by sorry').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EngineError);
    expect((error as EngineError).type).toBe(LEAN_FAILURE.headerFailed);
    expect((error as EngineError).nonRetryable).toBe(true);
  });

  it('does not start a check cancelled while waiting for its turn', async () => {
    const { fake, runner } = setup({ bodyDelayMs: 300 });
    const first = runner.check('theorem a : True := by sorry');
    const controller = new AbortController();
    const second = runner.check('theorem b : True := by sorry', { signal: controller.signal });
    controller.abort(new Error('cancelled'));
    await expect(second).rejects.toThrow('cancelled');
    await expect(first).resolves.toMatchObject({ status: 'ok' });
    expect(fake.count('body')).toBe(1);
  });

  it('recycles the process after maxUses checks', async () => {
    const { fake, runner } = setup({}, { maxUses: 2 });
    for (const name of ['a', 'b', 'c']) expect((await runner.check(`theorem ${name} : True := by sorry`)).status).toBe('ok');
    expect(fake.processes()).toBe(2);
  });

  it('warm() imports the library header ahead of the first check', async () => {
    const { fake, runner } = setup();
    await runner.warm?.();
    expect(fake.count('header')).toBe(1);
    await runner.check('theorem a : True := by sorry');
    expect(fake.count('header')).toBe(1);
  });

  it('is not ready once closed, and close() stops the REPL', async () => {
    const { fake, runner } = setup();
    await runner.check('theorem a : True := by sorry');
    expect(runner.ready()).toBe(true);
    await runner.close();
    expect(runner.ready()).toBe(false);
    expect(fake.count('exit')).toBe(1);
  });
});

describe('SkippedLeanRunner', () => {
  it('is what the factory gives without a REPL command, and checks nothing', async () => {
    const runner = createLeanRunner({ replCmd: '  ', header: 'import Mathlib', timeoutMs: 1000 });
    expect(runner).toBeInstanceOf(SkippedLeanRunner);
    const result = await runner.check('theorem t : True := by sorry');
    expect(result).toEqual({ status: 'skipped', messages: [], reason: SKIPPED_REASON, durationMs: 0 });
    expect(result.reason).toBe('No Lean REPL configured (set LEAN_REPL_CMD); the statement was not checked.');
    expect(runner.ready()).toBe(true);
  });
});
