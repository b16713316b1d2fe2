// Definitions through the pipeline (issue 34): a formalizer's text may hold, before its one
// theorem, the definitions the statement needs (a "find all" answer as an `abbrev`). End to end on
// the real Temporal dev server and workers, the fake OpenAI-compatible server and the fake REPL
// (which elaborates definitions in order and knows a user's name only once it is defined): the
// whole text is screened, compiled, judged, kept in the result and printed.
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { createStack, startTemporal, type TestStack } from '../helpers/stack';
import { FAKE_MODELS } from '../fakes/openai-server';
import { activityTypesOf } from '../helpers/history';
import { printResult } from '../../bin/run-output';

const STATEMENT = 'Find all prime numbers p such that p + 2 and p + 4 are prime too.';
const ANSWER = 'abbrev answer : Set ℕ := {3}';
const THEOREM = 'theorem prime_triples : {p : ℕ | Nat.Prime p ∧ Nat.Prime (p + 2) ∧ Nat.Prime (p + 4)} = answer := by sorry';
const WITH_ANSWER = `Here it is.\n\n\`\`\`lean\n${ANSWER}\n\n${THEOREM}\n\`\`\``;
// The answer used but never defined: Lean knows no `answer`.
const WITHOUT_ANSWER = `\`\`\`lean\n${THEOREM}\n\`\`\``;

let env: TestWorkflowEnvironment;
const stacks: TestStack[] = [];

async function stack(): Promise<TestStack> {
  // `answer` exists only where the text defines it, as a user's own name does in Lean.
  const s = await createStack(env, { repl: { userNames: 'answer' } });
  stacks.push(s);
  return s;
}

beforeAll(async () => {
  env = await startTemporal();
});

afterAll(async () => {
  for (const s of stacks) await s.close();
  await env?.teardown();
});

describe('a formalizer text with definitions', () => {
  it('answering with an abbrev and a theorem: compiled, judged with the abbrev in view, and printed whole', async () => {
    const s = await stack();
    s.llm.script(FAKE_MODELS.formalizer, { content: WITH_ANSWER });
    const id = await s.start(STATEMENT);
    const result = await s.withWorkers(() => s.result(id));

    expect(result.formalStatement).toBe(`${ANSWER}\n\n${THEOREM}`);
    expect(result.compiled).toBe(true);
    expect(result.attempts).toHaveLength(1);
    expect(result.attempts[0]!.compile.status).toBe('ok');
    expect(result.outcome).toBe('faithful');
    expect(result.judge).toMatchObject({ grade: 10, faithful: true });
    expect(await activityTypesOf(await s.client.workflow.getHandle(id).fetchHistory())).toEqual([
      'decompose',
      'retrieve',
      'illustrate',
      'formalize',
      'compile',
      'judge',
      'llmUsage',
    ]);
    // Lean was sent the definition with the theorem, in one command.
    const sent = s.repl!.events().filter((e) => e.event === 'begin');
    expect(sent.map((e) => e.detail)).toEqual(['name=prime_triples']);
    // The judge saw the definition and the theorem.
    const judged = JSON.stringify(s.llm.requests.filter((r) => r.model === FAKE_MODELS.judge).at(-1)!.messages);
    expect(judged).toContain(JSON.stringify(ANSWER).slice(1, -1));
    expect(judged).toContain('prime_triples');
    // The result as the CLI prints it carries the whole text.
    const out = new PassThrough();
    let printed = '';
    out.on('data', (chunk: Buffer) => (printed += chunk.toString()));
    printResult(result, out);
    expect(printed).toContain(`${ANSWER}\n\n${THEOREM}`);
    expect(s.repl!.leaks()).toEqual([]);
  });

  it('repairs a theorem that uses an answer it never defined, from Lean’s unknown identifier, to one with the abbrev', async () => {
    const s = await stack();
    s.llm.script(FAKE_MODELS.formalizer, { content: WITHOUT_ANSWER }, { content: WITH_ANSWER });
    const id = await s.start(STATEMENT);
    const result = await s.withWorkers(() => s.result(id));

    expect(result.attempts.map((a) => a.compile.status)).toEqual(['error', 'ok']);
    const error = result.attempts[0]!.compile.messages.find((m) => m.severity === 'error')!;
    // Where Lean puts it: at the use of `answer` in the theorem's type.
    expect(error).toMatchObject({ line: 1, column: THEOREM.indexOf('answer'), text: "unknown identifier 'answer'" });
    // The repair prompt shows the message and asks for the definitions with the theorem.
    const repair = JSON.stringify(s.llm.requests.filter((r) => r.model === FAKE_MODELS.formalizer)[1]!.messages);
    expect(repair).toContain("unknown identifier 'answer'");
    expect(repair).toContain('corrected definitions (if it needs any) and theorem');
    expect(result.formalStatement).toBe(`${ANSWER}\n\n${THEOREM}`);
    expect(result.compiled).toBe(true);
    expect(result.outcome).toBe('faithful');
  });

  it('refuses a definition that would run code, before Lean, and says so to the repair', async () => {
    const s = await stack();
    const hostile = `\`\`\`lean\n@[implemented_by answerImpl] def answer : Set ℕ := {3}\n\n${THEOREM}\n\`\`\``;
    s.llm.script(FAKE_MODELS.formalizer, { content: hostile }, { content: WITH_ANSWER });
    const id = await s.start(STATEMENT);
    const result = await s.withWorkers(() => s.result(id));

    expect(result.attempts.map((a) => a.compile.status)).toEqual(['refused', 'ok']);
    expect(result.attempts[0]!.compile.reason).toMatch(/^refused before Lean: .*implemented_by/);
    const repair = JSON.stringify(s.llm.requests.filter((r) => r.model === FAKE_MODELS.formalizer)[1]!.messages);
    expect(repair).toContain('refused before Lean by the statement screen');
    expect(repair).toContain('implemented_by');
    expect(s.repl!.events().filter((e) => e.event === 'begin')).toHaveLength(1);
    expect(s.repl!.leaks()).toEqual([]);
    expect(result.compiled).toBe(true);
  });
});
