// The gate in front of the REPL processes (ReplPool.check) on its own: every hostile input of
// the corpus sent straight to the runner, as a new caller that skipped compileStatement would,
// reaches the fake REPL (inside the real sandbox) with no command word of it. The fake leaves a
// marker for any command word driftline never sends, so a gate that lets one through fails here.
import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { createLeanRunner } from '../../engines/lean/create-runner';
import { fakeRepl } from '../fakes/fake-repl-harness';

const HOSTILE = JSON.parse(readFileSync(new URL('../fixtures/lean-screen/hostile.json', import.meta.url), 'utf8')) as {
  name: string;
  text: string;
}[];

// Issue 34's corpus: texts Lean would read differently or run code from.
const HOSTILE_GRAMMAR = JSON.parse(readFileSync(new URL('../fixtures/lean-screen/hostile-grammar.json', import.meta.url), 'utf8')) as {
  name: string;
  text: string;
}[];

const fake = fakeRepl();
const runner = createLeanRunner({ replCmd: fake.command, header: 'import Mathlib', timeoutMs: 10_000, sandbox: fake.sandbox });

afterAll(async () => {
  await runner.close();
  fake.cleanup();
});

describe('the REPL gate', () => {
  it('sends no hostile command to the REPL, whoever calls the runner', async () => {
    const statuses: string[] = [];
    for (const c of HOSTILE) statuses.push(`${c.name}: ${(await runner.check(c.text)).status}`);
    // The fake did run (the header, and what the gate admits: plain statements).
    await runner.check('theorem t : True := by sorry');
    expect(fake.count('header')).toBeGreaterThan(0);
    expect(fake.leaks()).toEqual([]);
    // Everything else is refused outright. The gate admits these only: sequences of plain
    // statements, definitions and preamble commands (option values bounded), which the strict screen of
    // compileStatement refuses for their shape, not for running anything.
    expect(statuses.filter((s) => !s.endsWith(': refused'))).toEqual([
      'two theorems on one line: ok',
      'two examples: ok',
      'option after the statement: ok',
      'open after the closing end: ok',
      'doc and def after the statement: ok',
      'second theorem with an attribute: ok',
      'no statement: ok',
      'empty: ok',
    ]);
  }, 120_000);

  it('refuses every text of the grammar corpus at the gate, so the fake REPL (which reads as Lean does) runs none', async () => {
    const passed: string[] = [];
    for (const c of HOSTILE_GRAMMAR) if ((await runner.check(c.text)).status !== 'refused') passed.push(c.name);
    expect(passed).toEqual([]);
    expect(fake.leaks()).toEqual([]);
  }, 120_000);

  it('refuses a hostile header given with a check', async () => {
    const result = await runner.check('theorem t : True := by sorry', { header: 'import Mathlib\n#eval IO.getEnv "OPENAI_API_KEY"' });
    expect(result.status).toBe('refused');
    expect(result.reason).toMatch(/^refused before Lean \(the header\): `#eval` runs code/);
    expect(fake.leaks()).toEqual([]);
  });
});
