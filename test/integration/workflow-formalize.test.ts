// The formalize workflow end to end, on the real Temporal dev server, with the real workers
// and activities talking to a fake OpenAI-compatible server and a fake Lean REPL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WorkflowFailedError } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { INDEX_KEY, LIBRARY_KEY, OUTCOME_KEY, STAGE_KEY } from '../../common/search-attributes';
import { createStack, startTemporal, type TestStack } from '../helpers/stack';
import { FAKE_MODELS } from '../fakes/openai-server';
import { activityRuns, activityTypesOf } from '../helpers/history';
import { HOSTILE_REPLY, refusingCompile } from '../helpers/refusing-lean';
import type { FormalizeResult } from '../../common/run-types';

const STATEMENT = 'If p is a prime number then p is at least 2.';
const GOOD = '```lean\ntheorem prime_two_le (p : ℕ) (hp : Nat.Prime p) : 2 ≤ p := by sorry\n```';
const BAD = '```lean\ntheorem prime_two_le (p : ℕ) (hp : Nat.Primee p) : 2 ≤ p := by sorry\n```';

let env: TestWorkflowEnvironment;
const stacks: TestStack[] = [];

async function stack(options: Parameters<typeof createStack>[1] = {}): Promise<TestStack> {
  const s = await createStack(env, options);
  stacks.push(s);
  return s;
}

async function activityTypes(s: TestStack, id: string): Promise<string[]> {
  return activityTypesOf(await s.client.workflow.getHandle(id).fetchHistory());
}

beforeAll(async () => {
  env = await startTemporal();
});

afterAll(async () => {
  for (const s of stacks) await s.close();
  await env?.teardown();
});

describe('formalize workflow', () => {
  it('passes a statement through all six activities and returns it compiled and judged', async () => {
    const s = await stack({ repl: { unknownIdentifiers: ['Nat.Primee'] } });
    const id = await s.start(STATEMENT);
    const result = await s.withWorkers(() => s.result(id));

    expect(result.compiled).toBe(true);
    expect(result.checked).toBe(true);
    expect(result.outcome).toBe('faithful');
    expect(result.judge).toMatchObject({ grade: 10, faithful: true });
    expect(result.subqueries.length).toBeGreaterThan(0);
    expect(result.premises.map((p) => p.name)).toContain('Nat.Prime');
    expect(result.examples.length).toBeGreaterThan(0);
    expect(result.formalStatement).toMatch(/:= by sorry$/);
    expect(result.attempts).toHaveLength(1);
    // The version retrieve searched is recorded (illustrate read the same one).
    expect(result.indexVersion).toMatch(/^mini-[0-9a-f]{12}-/);

    const types = await activityTypes(s, id);
    expect(types).toEqual(['decompose', 'retrieve', 'illustrate', 'formalize', 'compile', 'judge', 'llmUsage']);
    // The ledger read is a local activity: a marker, no activity task and no workflow task of its own.
    const runs = await activityRuns(s.client, id);
    expect(runs.filter((r) => r.local).map((r) => r.type)).toEqual(['llmUsage']);

    const description = await s.client.workflow.getHandle(id).describe();
    expect(description.typedSearchAttributes.get(STAGE_KEY)).toBe('done');
    expect(description.typedSearchAttributes.get(OUTCOME_KEY)).toBe('faithful');
    expect(description.typedSearchAttributes.get(LIBRARY_KEY)).toBe('mini');
    // The index version retrieval searched is in the result and a search attribute.
    expect(result.indexVersion).toMatch(/^mini-[0-9a-f]{12}-/);
    expect(description.typedSearchAttributes.get(INDEX_KEY)).toBe(result.indexVersion);
    expect(await description.memo).toMatchObject({ statement: STATEMENT });
  });

  it('calls a statement that compiles but says something else unfaithful', async () => {
    // "at least 2" formalized as `3 ≤ p`: Lean accepts it, the judge (grading by meaning) does not.
    const s = await stack();
    s.llm.script(FAKE_MODELS.formalizer, {
      content: '```lean\ntheorem prime_three_le (p : ℕ) (hp : Nat.Prime p) : 3 ≤ p := by sorry\n```',
    });
    const id = await s.start(STATEMENT);
    const result = await s.withWorkers(() => s.result(id));

    expect(result.compiled).toBe(true);
    expect(result.judge!.faithful).toBe(false);
    expect(result.judge!.grade).toBeLessThan(9);
    expect(result.outcome).toBe('unfaithful');
    const description = await s.client.workflow.getHandle(id).describe();
    expect(description.typedSearchAttributes.get(OUTCOME_KEY)).toBe('unfaithful');
  });

  it('repairs a compile error and then succeeds, giving the formalizer the compiler message', async () => {
    const s = await stack({ repl: { unknownIdentifiers: ['Nat.Primee'] } });
    s.llm.script(FAKE_MODELS.formalizer, { content: BAD }, { content: GOOD });
    const id = await s.start(STATEMENT);
    const result = await s.withWorkers(() => s.result(id));

    expect(result.compiled).toBe(true);
    expect(result.attempts).toHaveLength(2);
    expect(result.attempts[0]!.compile.status).toBe('error');
    expect(result.attempts[0]!.compile.messages.map((m) => m.text).join('\n')).toMatch(/unknown identifier 'Nat.Primee'/);
    expect(result.attempts[1]!.compile.status).toBe('ok');
    const repairRequest = s.llm.requests.filter((r) => r.model === FAKE_MODELS.formalizer)[1]!;
    expect(JSON.stringify(repairRequest.messages)).toContain("unknown identifier 'Nat.Primee'");
  });

  it('ends with compiled: false after exactly repairRounds repairs when the formalizer never gets it right', async () => {
    let drafts = 0;
    const s = await stack({
      repl: { unknownIdentifiers: ['Nat.Primee'] },
      // Wrong each time, and each time differently (a repeated attempt would end the loop early).
      llm: {
        handler: (req) =>
          req.model === FAKE_MODELS.formalizer
            ? { content: BAD.replace('prime_two_le', `prime_two_le_${++drafts}`) }
            : req.model === FAKE_MODELS.judge
              ? { content: '{"grade":10,"faithful":true,"explanation":"a careless judge"}' }
              : { content: '{"subqueries":[{"phrase":"p is prime","formal":"Nat.Prime p"}]}' },
      },
    });
    const id = await s.start(STATEMENT, { repairRounds: 2 });
    const result = await s.withWorkers(() => s.result(id));

    expect(result.compiled).toBe(false);
    expect(result.outcome).toBe('not-compiled');
    expect(result.attempts).toHaveLength(3); // the first attempt and two repairs
    expect(s.llm.callsTo(FAKE_MODELS.formalizer)).toBe(3);
    // The judge model said 10/faithful; the rubric's rule in the code (not compiled: at most 3,
    // never faithful) decides.
    expect(result.judge).toMatchObject({ grade: 3, faithful: false });
  });

  it('ends the repair loop, saying why, when a repair would send the formalizer a prompt it was already sent', async () => {
    // The formalizer answers the same wrong statement again: Lean says the same, so the next
    // repair prompt would be the last one again, and with the reply cache get the same reply.
    const s = await stack({ repl: { unknownIdentifiers: ['Nat.Primee'] } });
    s.llm.script(FAKE_MODELS.formalizer, { content: BAD, repeat: true });
    const id = await s.start(STATEMENT, { repairRounds: 3 });
    const result = await s.withWorkers(() => s.result(id));

    expect(result.outcome).toBe('not-compiled');
    expect(result.attempts.map((a) => a.statement)).toEqual([result.attempts[0]!.statement, result.attempts[0]!.statement]);
    expect(s.llm.callsTo(FAKE_MODELS.formalizer)).toBe(2);
    expect(result.repairStopped).toEqual({ reason: 'repeated-prompt', round: 2, repeats: 1 });
    expect(result.notes.join('\n')).toMatch(/repair: round 2 would send the formalizer what round 1 was sent/);
    // The first draft and the repair are told apart by activity, in the Temporal UI too.
    expect(await activityTypes(s, id)).toEqual([
      'decompose',
      'retrieve',
      'illustrate',
      'formalize',
      'compile',
      'resolveName',
      'repair',
      'compile',
      'judge',
      'llmUsage',
    ]);
    const events = (await s.client.workflow.getHandle(id).fetchHistory()).events ?? [];
    const summaries = events
      .filter((e) => ['formalize', 'repair'].includes(e.activityTaskScheduledEventAttributes?.activityType?.name ?? ''))
      .map((e) => JSON.parse(Buffer.from(e.userMetadata!.summary!.data!).toString('utf8')));
    expect(summaries).toEqual(['first draft', 'repair round 1']);
  });

  it('ends refused, not not-compiled, when the screen refuses every attempt: the repair hears why, Lean nothing', async () => {
    const refused: string[] = [];
    const s = await stack({ wrapLean: (a) => refusingCompile(a, refused) });
    s.llm.script(FAKE_MODELS.formalizer, { content: HOSTILE_REPLY }, { content: HOSTILE_REPLY });
    const id = await s.start(STATEMENT, { repairRounds: 1 });
    const result = await s.withWorkers(() => s.result(id));

    expect(result.outcome).toBe('refused');
    expect(result.compiled).toBe(false);
    expect(result.checked).toBe(false);
    expect(result.attempts.map((a) => a.compile.status)).toEqual(['refused', 'refused']);
    expect(result.notes.join('\n')).toMatch(/compile: refused by the screen: `#eval` runs code.*\(nothing was sent to Lean\)/);
    expect(result.notes.join('\n')).not.toMatch(/skipped|Lean rejected/);
    // The repair prompt says who refused it, with the refusal message.
    const repair = JSON.stringify(s.llm.requests.filter((r) => r.model === FAKE_MODELS.formalizer)[1]!.messages);
    expect(repair).toContain('refused before Lean by the statement screen');
    expect(repair).toContain('refused before Lean: `#eval` runs code');
    // The judge may grade the meaning, but a refused statement is never faithful, and says why.
    expect(result.judge).toMatchObject({ faithful: false });
    expect(result.judge!.explanation).toMatch(/Refused by the statement screen before Lean/);
    expect(refused).toHaveLength(2);
    // The REPL was never sent a statement.
    expect(s.repl!.count('begin')).toBe(0);
    expect(s.repl!.count('body')).toBe(0);
    const description = await s.client.workflow.getHandle(id).describe();
    expect(description.typedSearchAttributes.get(OUTCOME_KEY)).toBe('refused');
  });

  it('ends refused also with no Lean configured, and the Temporal UI details say the screen refused it', async () => {
    const s = await stack({ repl: false, wrapLean: (a) => refusingCompile(a) });
    s.llm.script(FAKE_MODELS.formalizer, { content: HOSTILE_REPLY }, { content: HOSTILE_REPLY });
    const id = await s.start(STATEMENT, { repairRounds: 1, judge: false });
    const handle = s.client.workflow.getHandle(id);
    const [result, metadata] = await s.withWorkers(async () => {
      const r = (await s.result(id)) as FormalizeResult;
      // What the Temporal UI shows as the run's current details (asked of a worker).
      return [r, await handle.query<{ currentDetails?: string }>('__temporal_workflow_metadata')] as const;
    });
    expect(result.outcome).toBe('refused');
    expect(result.checked).toBe(false);
    expect(result.attempts.map((a) => a.compile.status)).toEqual(['refused', 'refused']);
    const details = metadata.currentDetails ?? '';
    expect(details).toMatch(/\*\*Outcome\*\* REFUSED by the screen before Lean \(Lean never saw the last attempt\): `#eval` runs code/);
    expect(details).toMatch(/\*\*Screen\*\* \(Lean never saw it\) round 1: refused by the screen: `#eval` runs code/);
    expect(details).not.toMatch(/NOT COMPILED|Lean rejected|\*\*Lean\*\*/);
  });

  it('retries a 429 and a 500 from the LLM and the run succeeds', async () => {
    const s = await stack();
    s.llm.script(FAKE_MODELS.decomposer, { status: 429, retryAfter: 1 }, { status: 500 });
    const id = await s.start(STATEMENT);
    const result = await s.withWorkers(() => s.result(id));

    expect(result.compiled).toBe(true);
    expect(s.llm.callsTo(FAKE_MODELS.decomposer)).toBe(3);
    const types = await activityTypes(s, id);
    expect(types.filter((t) => t === 'decompose')).toHaveLength(1); // one activity, retried by Temporal
  });

  it("waits as long as a 429's Retry-After asks before the next attempt", async () => {
    // Retry-After of 6 s against the retry policy's own 2 s first interval.
    const s = await stack();
    s.llm.script(FAKE_MODELS.decomposer, { status: 429, retryAfter: 6 });
    const id = await s.start(STATEMENT);
    const result = await s.withWorkers(() => s.result(id));

    expect(result.compiled).toBe(true);
    const [decompose] = await activityRuns(s.client, id);
    expect(decompose).toMatchObject({ type: 'decompose', attempt: 2 });
    // The history's started event is the second attempt's: it began at least 6 s after the
    // activity was scheduled (the first attempt's start, failure and the wait all lie between).
    expect(decompose!.startedAt! - decompose!.scheduledAt).toBeGreaterThanOrEqual(6000);
  });

  it('fails the run at once on a 401, with a message that says what to check', async () => {
    const s = await stack();
    s.llm.script(FAKE_MODELS.decomposer, { status: 401, message: 'Incorrect API key provided' });
    const id = await s.start(STATEMENT);
    const error = await s.withWorkers(() =>
      s.result(id).then(
        () => undefined,
        (err: unknown) => err,
      ),
    );

    expect(error).toBeInstanceOf(WorkflowFailedError);
    const cause = (error as WorkflowFailedError).cause?.cause as Error;
    expect(cause.message).toMatch(/OPENAI_API_KEY/);
    expect(s.llm.callsTo(FAKE_MODELS.decomposer)).toBe(1);
  });

  it('fails a run at once when no LLM endpoint is configured, saying how to configure one', async () => {
    const s = await stack({ llmConfigured: false });
    const id = await s.start(STATEMENT);
    const error = await s.withWorkers(() =>
      s.result(id).then(
        () => undefined,
        (err: unknown) => err,
      ),
    );

    expect(error).toBeInstanceOf(WorkflowFailedError);
    expect(((error as WorkflowFailedError).cause?.cause as Error).message).toMatch(/OPENAI_BASE_URL/);
    expect(s.llm.requests).toHaveLength(0);
    const history = await s.client.workflow.getHandle(id).fetchHistory();
    const attempts = (history.events ?? [])
      .filter((e) => e.activityTaskStartedEventAttributes)
      .map((e) => e.activityTaskStartedEventAttributes!.attempt);
    expect(attempts).toEqual([1]); // not retried
  });

  it('reports compile as skipped when no Lean REPL is configured, and runs no repair', async () => {
    const s = await stack({ repl: false });
    s.llm.script(FAKE_MODELS.formalizer, { content: BAD });
    const id = await s.start(STATEMENT);
    const result = await s.withWorkers(() => s.result(id));

    expect(result.checked).toBe(false);
    expect(result.compiled).toBe(false);
    expect(result.outcome).toBe('unchecked');
    expect(result.attempts).toHaveLength(1);
    expect(result.attempts[0]!.compile.status).toBe('skipped');
    expect(result.notes.join('\n')).toMatch(/LEAN_REPL_CMD/);
    expect(result.judge!.faithful).toBe(false);
    expect(s.llm.callsTo(FAKE_MODELS.formalizer)).toBe(1);
  });

  it('switches stages off by configuration: no decomposition, no retrieval, no examples, no judge', async () => {
    const s = await stack();
    const id = await s.start(STATEMENT, { retrieval: 'none', illustrate: false, judge: false });
    const result = await s.withWorkers(() => s.result(id));

    expect(await activityTypes(s, id)).toEqual(['formalize', 'compile', 'llmUsage']);
    expect(result.premises).toEqual([]);
    expect(result.judge).toBeNull();
    expect(result.outcome).toBe('compiled');
  });

  it('checks Lean equivalence against a gold statement beside the judge: the same statement under other names', async () => {
    const s = await stack();
    s.llm.script(FAKE_MODELS.formalizer, { content: GOOD });
    const gold = 'theorem gold (q : ℕ) (hq : Nat.Prime q) : 2 ≤ q := by sorry';
    const id = await s.start(STATEMENT, {}, { goldStatement: gold });
    const result = await s.withWorkers(() => s.result(id));

    expect(await activityTypes(s, id)).toContain('equivalence');
    expect(result.equivalence).toMatchObject({ equivalent: true, candidateToGold: { proved: true }, goldToCandidate: { proved: true } });
    expect(result.tools?.find((t) => t.tool === 'equivalence')?.output).toEqual(['equivalent']);
  });

  it('finds a compiled statement not equivalent to a gold statement that says something else', async () => {
    const s = await stack();
    s.llm.script(FAKE_MODELS.formalizer, { content: GOOD });
    const gold = 'theorem gold (p : ℕ) (hp : Nat.Prime p) : 3 ≤ p := by sorry';
    const id = await s.start(STATEMENT, {}, { goldStatement: gold });
    const result = await s.withWorkers(() => s.result(id));

    expect(result.compiled).toBe(true);
    expect(result.equivalence).toMatchObject({ equivalent: false, candidateToGold: { proved: false } });
    expect(result.tools?.find((t) => t.tool === 'equivalence')?.output).toEqual(['not equivalent']);
  });

  it('says "not comparable", never "not equivalent", when the gold has definitions the statement does not share', async () => {
    const s = await stack();
    s.llm.script(FAKE_MODELS.formalizer, { content: GOOD });
    const gold = 'def twoOf : ℕ := 2\n\ntheorem gold (p : ℕ) (hp : Nat.Prime p) : twoOf ≤ p := by sorry';
    const id = await s.start(STATEMENT, {}, { goldStatement: gold });
    const result = await s.withWorkers(() => s.result(id));

    expect(result.compiled).toBe(true);
    expect(result.equivalence).toMatchObject({ equivalent: false, notComparable: true });
    expect(result.tools?.find((t) => t.tool === 'equivalence')?.output).toEqual(['not comparable']);
  });

  it('uses the gold premises in oracle mode and never shows an excluded name', async () => {
    const s = await stack();
    const id = await s.start(STATEMENT, { retrieval: 'oracle' }, { goldPremises: ['Nat.Prime', 'ZMod'], exclude: ['Nat.Prime.two_le'] });
    const result = await s.withWorkers(() => s.result(id));

    expect(result.premises.map((p) => p.name).sort()).toEqual(['Nat.Prime', 'ZMod']);
    expect(result.examples.map((e) => e.name)).not.toContain('Nat.Prime.two_le');
    expect(await activityTypes(s, id)).not.toContain('decompose');
  });
});
