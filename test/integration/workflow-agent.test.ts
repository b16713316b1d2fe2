// Agent mode end to end: the `formalizeAgent` workflow on the real Temporal dev server, with the
// real workers and activities, a fake OpenAI-compatible provider scripting tool-calling
// conversations, and the fake Lean REPL.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { activityTypesOf } from '../helpers/history';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { OUTCOME_KEY, STAGE_KEY } from '../../common/search-attributes';
import { getFormalization } from '../../client/runs';
import { buildInProcess } from '../../engines/retrieval/stores/build';
import { createStack, FAKE_TRANSLATOR, FIXTURE_CORPUS, FIXTURE_LIBRARY, startTemporal, type TestStack } from '../helpers/stack';
import { miniSpec, startOnStack } from '../helpers/sweep';
import { answer, defaultBrain, FAKE_MODELS, toolCall, type FakeHandler, type FakeRequest } from '../fakes/openai-server';
import { HOSTILE_FILE, refusingCompile } from '../helpers/refusing-lean';

const STATEMENT = 'If p is a prime number then p is at least 2.';
const BAD = 'import Mathlib\n\ntheorem prime_two_le (p : ℕ) (hp : Nat.Primee p) : 2 ≤ p := by sorry';
const GOOD = 'import Mathlib\n\ntheorem prime_two_le (p : ℕ) (hp : Nat.Prime p) : 2 ≤ p := by sorry';

let env: TestWorkflowEnvironment;
const stacks: TestStack[] = [];

async function stack(options: Parameters<typeof createStack>[1] = {}): Promise<TestStack> {
  const s = await createStack(env, options);
  stacks.push(s);
  return s;
}

async function history(s: TestStack, id: string) {
  return s.client.workflow.getHandle(id).fetchHistory();
}

async function activityTypes(s: TestStack, id: string): Promise<string[]> {
  return activityTypesOf(await history(s, id));
}

/** Each `retrieve` of a run, from its history: what it was asked, what it answered, and the
 * heartbeat timeout it was scheduled with (seconds). */
async function retrieveCalls(s: TestStack, id: string) {
  const events = (await history(s, id)).events ?? [];
  const decode = (p: { payloads?: Array<{ data?: Uint8Array | null }> | null } | null | undefined) =>
    JSON.parse(Buffer.from(p!.payloads![0]!.data!).toString('utf8'));
  return events.flatMap((e) => {
    const a = e.activityTaskScheduledEventAttributes;
    if (a?.activityType?.name !== 'retrieve') return [];
    const done = events.find(
      (c) =>
        c.activityTaskCompletedEventAttributes && Number(c.activityTaskCompletedEventAttributes.scheduledEventId) === Number(e.eventId),
    );
    return [
      {
        input: decode(a.input),
        output: done ? decode(done.activityTaskCompletedEventAttributes!.result) : undefined,
        heartbeatSeconds: Number(a.heartbeatTimeout?.seconds ?? 0),
      },
    ];
  });
}

/** Builds and promotes a new index version of the mini library (its theorems left out), as an
 * index build would in the middle of a sweep; returns it. */
async function promoteNewVersion(s: TestStack): Promise<string> {
  const bare = join(s.dataDir, 'mini-no-theorems.jsonl');
  const lines = readFileSync(FIXTURE_CORPUS, 'utf8')
    .split('\n')
    .filter((l) => l.trim() && !/\b(theorem|lemma)$/.test(JSON.parse(l).kind));
  writeFileSync(bare, lines.join('\n') + '\n');
  const built = await buildInProcess({ library: FIXTURE_LIBRARY, corpusPath: bare, store: s.indexes.store });
  expect(await s.indexes.store.getAlias(FIXTURE_LIBRARY)).toBe(built.version);
  return built.version;
}

/** The agent's requests, and what each one's last message said (tool results, refusals). */
const agentRequests = (s: TestStack): FakeRequest[] => s.llm.requests.filter((r) => r.model === FAKE_MODELS.agent);
const lastMessage = (r: FakeRequest) => r.messages.at(-1)!;

beforeAll(async () => {
  env = await startTemporal();
});

afterAll(async () => {
  for (const s of stacks) await s.close();
  await env?.teardown();
});

describe('formalizeAgent workflow', () => {
  it('writes, runs Lean, resolves a misspelt name, rewrites, runs again and succeeds; steps in order, judged', async () => {
    const s = await stack({ repl: { unknownIdentifiers: ['Nat.Primee'] } });
    s.llm.script(
      FAKE_MODELS.agent,
      toolCall('write_file', { code: BAD }),
      toolCall('run_lean'),
      toolCall('resolve_name', { token: 'Nat.Primee', namespace_hints: ['Nat'] }),
      toolCall('write_file', { code: GOOD }),
      toolCall('run_lean'),
      answer('The file compiles and says what the text says.\n{"status": "success"}'),
    );
    const id = await s.start(STATEMENT, { mode: 'agent' });
    expect(id).toMatch(/^formalize-/);
    const result = await s.withWorkers(() => s.result(id));

    expect(result.steps!.map((step) => step.tool)).toEqual(['write_file', 'run_lean', 'resolve_name', 'write_file', 'run_lean', null]);
    expect(result.steps!.map((step) => step.step)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(result.steps![0]!.arguments).toEqual({ code: BAD });
    expect(result.steps![1]!.output).toMatch(/unknown identifier 'Nat.Primee'/);
    expect(result.steps![2]!.output).toMatch(/Nat\.Prime\b/);
    expect(result.steps![4]!.output).toMatch(/^Lean accepted the file/);
    expect(result.steps![5]).toMatchObject({ tool: null, accepted: true });
    for (const step of result.steps!) {
      expect(step.tokens.total).toBeGreaterThan(0);
      expect(step.ms).toBeGreaterThanOrEqual(0);
    }
    expect(result.agent).toMatchObject({
      ending: 'success',
      steps: 6,
      toolCalls: { write_file: 2, run_lean: 2, resolve_name: 1 },
      compiledAtStep: 5,
    });
    expect(result.agent!.tokens.total).toBe(result.steps!.reduce((n, step) => n + step.tokens.total, 0));
    expect(result.formalStatement).toBe(GOOD);
    expect(result.compiled).toBe(true);
    expect(result.judge).toMatchObject({ grade: 10, faithful: true });
    expect(result.outcome).toBe('faithful');
    expect(result.config.mode).toBe('agent');

    // The model read Lean's message and the suggested names.
    const requests = agentRequests(s);
    expect(requests).toHaveLength(6);
    expect(lastMessage(requests[2]!).content).toMatch(/unknown identifier 'Nat.Primee'/);
    expect(lastMessage(requests[3]!).content).toMatch(/- Nat\.Prime/);

    // Each LLM step and each tool call is an activity; Lean tools went to the Lean queue.
    expect(await activityTypes(s, id)).toEqual([
      'agentStep',
      'screenStatement',
      'agentStep',
      'compile',
      'agentStep',
      'resolveName',
      'agentStep',
      'screenStatement',
      'agentStep',
      'compile',
      'agentStep',
      'judge',
      'llmUsage',
    ]);
    const events = (await history(s, id)).events ?? [];
    const scheduled = events.map((e) => e.activityTaskScheduledEventAttributes).filter(Boolean);
    const queueOf = (name: string) => scheduled.find((a) => a!.activityType?.name === name)!.taskQueue?.name;
    expect(queueOf('compile')).toBe(s.leanQueue);
    expect(queueOf('resolveName')).toBe(s.leanQueue);
    expect(queueOf('agentStep')).toBe(s.mainQueue);
    // Activity summaries name the step and the tool in the Temporal UI.
    const summaries = events.filter((e) => e.activityTaskScheduledEventAttributes).map((e) => e.userMetadata?.summary?.data);
    const decoded = summaries.map((d) => (d ? JSON.parse(Buffer.from(d).toString('utf8')) : null));
    expect(decoded.slice(0, 6)).toEqual([
      'agent step 1: LLM',
      'agent step 1: write_file',
      'agent step 2: LLM',
      'agent step 2: run_lean',
      'agent step 3: LLM',
      'agent step 3: resolve_name Nat.Primee',
    ]);

    const description = await s.client.workflow.getHandle(id).describe();
    expect(description.type).toBe('formalizeAgent');
    expect(description.typedSearchAttributes.get(STAGE_KEY)).toBe('done');
    expect(description.typedSearchAttributes.get(OUTCOME_KEY)).toBe('faithful');

    const view = await getFormalization(s.client, id);
    expect(view!.progress).toMatchObject({ stage: 'done', step: 6, lastTool: null });
  });

  it('refuses a success declared before the file compiled, and goes on', async () => {
    const s = await stack({ repl: { unknownIdentifiers: ['Nat.Primee'] } });
    s.llm.script(
      FAKE_MODELS.agent,
      toolCall('write_file', { code: BAD }),
      answer('{"status": "success"}'),
      toolCall('run_lean'),
      answer('{"status": "success"}'),
      toolCall('write_file', { code: GOOD }),
      toolCall('run_lean'),
      answer('{"status": "success"}'),
    );
    const id = await s.start(STATEMENT, { mode: 'agent' });
    const result = await s.withWorkers(() => s.result(id));

    expect(result.steps!.map((step) => [step.tool, step.accepted])).toEqual([
      ['write_file', undefined],
      [null, false],
      ['run_lean', undefined],
      [null, false],
      ['write_file', undefined],
      ['run_lean', undefined],
      [null, true],
    ]);
    const requests = agentRequests(s);
    expect(lastMessage(requests[2]!)).toMatchObject({ role: 'user' });
    expect(lastMessage(requests[2]!).content).toMatch(/Not accepted: the file you wrote last has not been checked/);
    expect(lastMessage(requests[4]!).content).toMatch(/Not accepted: Lean did not accept the file/);
    expect(result.outcome).toBe('faithful');
    expect(result.agent!.ending).toBe('success');
  });

  it('answers a malformed tool call with an error message and goes on', async () => {
    const s = await stack({ repl: { unknownIdentifiers: ['Nat.Primee'] } });
    s.llm.script(
      FAKE_MODELS.agent,
      toolCall('write_file', '{"code": "import Mathlib'),
      toolCall('run_lean', { path: 'Main.lean' }),
      toolCall('prove_it', {}),
      toolCall('write_file', { code: GOOD }),
      toolCall('run_lean'),
      answer(),
    );
    const id = await s.start(STATEMENT, { mode: 'agent' });
    const result = await s.withWorkers(() => s.result(id));

    const requests = agentRequests(s);
    expect(lastMessage(requests[1]!)).toMatchObject({ role: 'tool' });
    expect(lastMessage(requests[1]!).content).toMatch(/^Error: the arguments of `write_file` are not valid JSON/);
    expect(lastMessage(requests[2]!).content).toMatch(/`run_lean` has no argument `path`/);
    expect(lastMessage(requests[3]!).content).toMatch(/there is no tool `prove_it`/);
    expect(result.steps!.slice(0, 3).map((step) => step.error)).toEqual([true, true, true]);
    expect(result.steps![0]!.arguments).toBeUndefined();
    expect(result.compiled).toBe(true);
    expect(result.agent!.ending).toBe('success');
    // Malformed calls never reach an activity.
    expect(await activityTypes(s, id)).toEqual([
      'agentStep',
      'agentStep',
      'agentStep',
      'agentStep',
      'screenStatement',
      'agentStep',
      'compile',
      'agentStep',
      'judge',
      'llmUsage',
    ]);
  });

  it('ends with budget-exhausted after T_max steps of a loop that never ends', async () => {
    const s = await stack({ repl: { unknownIdentifiers: ['Nat.Primee'] } });
    s.llm.script(
      FAKE_MODELS.agent,
      toolCall('write_file', { code: GOOD }),
      toolCall('inspect_name', { name: 'Nat.Prime' }, { repeat: true }),
    );
    const id = await s.start(STATEMENT, { mode: 'agent', maxSteps: 4 });
    const result = await s.withWorkers(() => s.result(id));

    expect(result.outcome).toBe('budget-exhausted');
    expect(result.agent).toMatchObject({ ending: 'budget-exhausted', budget: 'steps', steps: 4 });
    expect(result.steps!.map((step) => step.tool)).toEqual(['write_file', 'inspect_name', 'inspect_name', 'inspect_name']);
    expect(agentRequests(s)).toHaveLength(4);
    // The last written file is still checked and judged, for the record.
    expect(result.formalStatement).toBe(GOOD);
    expect(result.compiled).toBe(true);
    const description = await s.client.workflow.getHandle(id).describe();
    expect(description.typedSearchAttributes.get(OUTCOME_KEY)).toBe('budget-exhausted');
  });

  it('ends refused when the screen refused every write_file: the file was never written, Lean saw nothing', async () => {
    const s = await stack({ repl: { unknownIdentifiers: ['Nat.Primee'] } });
    s.llm.script(FAKE_MODELS.agent, toolCall('write_file', { code: HOSTILE_FILE }), answer('{"status": "success"}', { repeat: true }));
    const id = await s.start(STATEMENT, { mode: 'agent', maxSteps: 3 });
    const result = await s.withWorkers(() => s.result(id));

    expect(result.outcome).toBe('refused');
    expect(result.compiled).toBe(false);
    expect(result.checked).toBe(false);
    // The refused write is the run's one attempt, with the screen's message.
    expect(result.formalStatement).toBe(HOSTILE_FILE);
    expect(result.attempts).toHaveLength(1);
    expect(result.attempts[0]!.compile).toMatchObject({ status: 'refused', reason: expect.stringMatching(/`#eval` runs code/) });
    expect(result.notes.join('\n')).toMatch(/compile: refused by the screen: `#eval` runs code/);
    expect(result.steps![0]).toMatchObject({ tool: 'write_file', error: true, output: expect.stringMatching(/^The file was not written/) });
    expect(s.repl!.count('begin')).toBe(0);
    expect(s.repl!.count('body')).toBe(0);
    const description = await s.client.workflow.getHandle(id).describe();
    expect(description.typedSearchAttributes.get(OUTCOME_KEY)).toBe('refused');
  });

  it('ends refused when the last file written is refused at run_lean, and tells the model who refused it', async () => {
    // The compile double refuses what the screen refuses; write_file's screen is told to pass
    // everything here, so the refusal comes from the compile (as when the two screens differ).
    const s = await stack({ wrapLean: (a) => ({ ...refusingCompile(a), screenStatement: async () => null }) });
    s.llm.script(
      FAKE_MODELS.agent,
      toolCall('write_file', { code: HOSTILE_FILE }),
      toolCall('run_lean'),
      answer('{"status": "success"}', { repeat: true }),
    );
    const id = await s.start(STATEMENT, { mode: 'agent', maxSteps: 4, judge: false });
    const result = await s.withWorkers(() => s.result(id));

    expect(result.outcome).toBe('refused');
    expect(result.checked).toBe(false);
    expect(result.attempts.map((a) => a.compile.status)).toEqual(['refused']);
    const requests = agentRequests(s);
    expect(lastMessage(requests[2]!).content).toMatch(
      /^The statement screen refused the file before Lean; nothing was sent to Lean:\nline 1, column 0: error: refused before Lean: `#eval` runs code/,
    );
    expect(lastMessage(requests[3]!).content).toBe(
      'Not accepted: the statement screen refused the file you wrote last before Lean. Fix it, write it again and run run_lean.',
    );
    expect(s.repl!.count('body')).toBe(0);
  });

  it('ends with budget-exhausted when the token budget is spent', async () => {
    const s = await stack();
    s.llm.script(FAKE_MODELS.agent, toolCall('inspect_name', { name: 'Nat.Prime' }, { repeat: true }));
    // One request with the whole prompt is well over 500 tokens.
    const id = await s.start(STATEMENT, { mode: 'agent', tokenBudget: 500 });
    const result = await s.withWorkers(() => s.result(id));
    expect(result.agent).toMatchObject({ ending: 'budget-exhausted', budget: 'tokens', steps: 1 });
    expect(result.outcome).toBe('budget-exhausted');
    expect(result.formalStatement).toBe('');
    expect(result.notes).toContain('agent: no Lean file was written');
  });

  it('ends with budget-exhausted when the wall-clock budget runs out during a step, without waiting for it', async () => {
    const s = await stack();
    s.llm.script(FAKE_MODELS.agent, toolCall('write_file', { code: GOOD }), toolCall('run_lean', {}, { delayMs: 60_000 }));
    const id = await s.start(STATEMENT, { mode: 'agent', wallClockSeconds: 3 });
    const started = Date.now();
    const result = await s.withWorkers(() => s.result(id));
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(result.agent).toMatchObject({ ending: 'budget-exhausted', budget: 'time' });
    expect(result.steps!.map((step) => step.tool)).toEqual(['write_file']);
  }, 60_000);

  it('reports the step and the last tool through the progress query while it runs', async () => {
    const s = await stack();
    s.llm.script(
      FAKE_MODELS.agent,
      toolCall('write_file', { code: GOOD }),
      toolCall('inspect_name', { name: 'Nat.Prime' }, { delayMs: 3_000 }),
      toolCall('run_lean'),
      answer(),
    );
    const id = await s.start(STATEMENT, { mode: 'agent' });
    const result = await s.withWorkers(async () => {
      const deadline = Date.now() + 30_000;
      let seen;
      while (Date.now() < deadline) {
        const view = await getFormalization(s.client, id);
        if (view?.progress?.step === 2) {
          seen = view.progress;
          break;
        }
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(seen).toMatchObject({ stage: 'agent', step: 2, lastTool: 'write_file' });
      return s.result(id);
    });
    expect(result.agent!.ending).toBe('success');
  });

  it('drafts with the translator model when `draft` is offered and a translator is configured', async () => {
    const s = await stack({ translator: true });
    s.llm.script(FAKE_TRANSLATOR, { content: `\`\`\`lean\n${GOOD}\n\`\`\`` });
    s.llm.script(
      FAKE_MODELS.agent,
      toolCall('draft', { statement: STATEMENT }),
      toolCall('write_file', { code: GOOD }),
      toolCall('run_lean'),
      answer(),
    );
    const id = await s.start(STATEMENT, { mode: 'agent', tools: ['draft', 'write_file', 'run_lean'] });
    const result = await s.withWorkers(() => s.result(id));
    expect(s.llm.callsTo(FAKE_TRANSLATOR)).toBe(1);
    expect(s.llm.requests.find((r) => r.model === FAKE_TRANSLATOR)!.messages.at(-1)!.content).toBe(STATEMENT);
    expect(lastMessage(agentRequests(s)[1]!).content).toContain('Nat.Prime p');
    expect(result.steps!.map((step) => step.tool)).toEqual(['draft', 'write_file', 'run_lean', null]);
    expect(await activityTypes(s, id)).toContain('draft');
  });

  it('fails at once, saying what to configure, when `draft` is offered without a translator', async () => {
    const s = await stack();
    const id = await s.start(STATEMENT, { mode: 'agent', tools: ['draft', 'write_file', 'run_lean'] });
    const error = await s.withWorkers(() =>
      s.result(id).then(
        () => null,
        (err: Error) => err,
      ),
    );
    expect(error).not.toBeNull();
    const view = await getFormalization(s.client, id);
    expect(view).toMatchObject({ status: 'failed' });
    expect(view!.error).toMatch(/DRIFTLINE_TRANSLATOR_BASE_URL/);
    expect(agentRequests(s)).toHaveLength(0);
  });

  it('puts DRIFT context (premises and examples) in the first message when configured', async () => {
    const s = await stack();
    s.llm.script(FAKE_MODELS.agent, toolCall('write_file', { code: GOOD }), toolCall('run_lean'), answer());
    const id = await s.start(STATEMENT, { mode: 'agent', driftContext: true });
    const result = await s.withWorkers(() => s.result(id));
    expect(result.premises.map((p) => p.name)).toContain('Nat.Prime');
    const first = agentRequests(s)[0]!.messages[1]!.content;
    expect(first).toMatch(/^Statement to formalize:/);
    expect(first).toContain('Library declarations that are likely relevant:\n- Nat.Prime');
    expect(result.stages.slice(0, 3)).toEqual(['decompose', 'retrieve', 'illustrate']);
    expect((await activityTypes(s, id)).slice(0, 4)).toEqual(['decompose', 'retrieve', 'illustrate', 'agentStep']);
    // The search has a heartbeat timeout (a lost worker is noticed in seconds), and the result
    // carries stage timings like a pipeline run's (a sweep records them as stageMs).
    expect.soft((await retrieveCalls(s, id))[0]!.heartbeatSeconds).toBe(15);
    expect.soft(Object.keys(result.timings ?? {})).toEqual(expect.arrayContaining(['decompose', 'retrieve', 'illustrate', 'agent']));
  });

  it('keeps the history bounded over T_max = 50 steps', async () => {
    const s = await stack();
    s.llm.script(FAKE_MODELS.agent, toolCall('write_file', { code: GOOD }), toolCall('run_lean', {}, { repeat: true }));
    const id = await s.start(STATEMENT, { mode: 'agent', maxSteps: 50, judge: false });
    const result = await s.withWorkers(() => s.result(id));
    expect(result.agent).toMatchObject({ ending: 'budget-exhausted', budget: 'steps', steps: 50 });
    const events = (await history(s, id)).events ?? [];
    const bytes = Buffer.byteLength(historyToJSON(await history(s, id)));
    // Per step: two activities and their workflow tasks and deadline timers.
    if (process.env.SHOW_HISTORY_SIZE) process.stderr.write(`T=50 history: ${events.length} events, ${bytes} bytes\n`);
    expect(events.length).toBeLessThan(50 * 20);
    // The transcript grows with each step and travels with each LLM step; bounded tool outputs
    // keep the whole history to a few megabytes at most, far below Temporal's limits.
    expect(bytes).toBeLessThan(4 * 1024 * 1024);
  }, 120_000);

  it('an agent-mode sweep searches only the index version it pinned, though another is promoted mid-sweep; records stage timings', async () => {
    const s = await stack({ repl: { unknownIdentifiers: ['Nat.Primee'] } });
    const { version: pinned } = await s.indexes.open(FIXTURE_LIBRARY);
    s.llm.script(
      FAKE_MODELS.agent,
      toolCall('search_premises', { query: 'prime number' }),
      toolCall('write_file', { code: GOOD }),
      toolCall('run_lean'),
      answer(),
    );
    const spec = miniSpec({
      configurations: [
        {
          name: 'agent',
          config: { mode: 'agent', driftContext: true, tools: ['write_file', 'run_lean', 'search_premises'], judge: false },
        },
      ],
      maxAttempts: 1,
    });
    const started = await startOnStack(
      s,
      { ...spec, benchmarks: [{ ...spec.benchmarks[0]!, limit: 1 }] },
      { id: 'sw-agent-pin', currentIndexVersion: pinned },
    );
    // The sweep pinned its version; a new one is promoted before its run searches.
    const promoted = await promoteNewVersion(s);
    expect(promoted).not.toBe(pinned);
    await s.withWorkers(() => s.client.workflow.getHandle(started.id).result());

    const [record] = await s.results.runs('sw-agent-pin');
    expect(record!.outcome).toBe('compiled');
    const result = (await s.client.workflow.getHandle(record!.workflowId).result()) as Awaited<ReturnType<TestStack['result']>>;
    expect(result.indexVersion).toBe(pinned);
    // The DRIFT context's retrieve and the agent's search_premises: both asked for and read the pin.
    const calls = await retrieveCalls(s, record!.workflowId);
    expect(calls.map((c) => c.input.statement)).toEqual([result.statement, 'prime number']);
    for (const call of calls) {
      expect(call.input.indexVersion).toBe(pinned);
      expect(call.output.indexVersion).toBe(pinned);
      // A worker lost during a search is noticed within its heartbeat timeout.
      expect(call.heartbeatSeconds).toBeGreaterThan(0);
    }
    // Stage timings, as a pipeline record has them.
    expect(Object.keys(record!.stageMs)).toEqual(expect.arrayContaining(['decompose', 'retrieve', 'illustrate', 'agent']));
    expect(record!.stageMs.agent).toBeGreaterThanOrEqual(0);
  }, 120_000);

  it('keeps search_premises to the index version it found first when another is promoted during the run', async () => {
    let promoted: Promise<string> | undefined;
    let s!: TestStack;
    const handler: FakeHandler = async (req) => {
      if (req.model !== FAKE_MODELS.agent) return defaultBrain(req);
      const step = agentRequests(s).length;
      if (step === 1) return toolCall('search_premises', { query: 'prime number' });
      // Between the two searches, a new version is promoted.
      if (step === 2) {
        promoted ??= promoteNewVersion(s);
        await promoted;
        return toolCall('search_premises', { query: 'divides' });
      }
      if (step === 3) return toolCall('write_file', { code: GOOD });
      if (step === 4) return toolCall('run_lean');
      return answer();
    };
    s = await stack({ llm: { handler }, repl: { unknownIdentifiers: ['Nat.Primee'] } });
    const id = await s.start(STATEMENT, { mode: 'agent', tools: ['write_file', 'run_lean', 'search_premises'], judge: false });
    const result = await s.withWorkers(() => s.result(id));
    expect(result.outcome).toBe('compiled');
    const calls = await retrieveCalls(s, id);
    expect(calls).toHaveLength(2);
    const first = calls[0]!.output.indexVersion;
    expect(first).not.toBe(await promoted);
    expect(calls[1]!.input.indexVersion).toBe(first);
    expect(calls[1]!.output.indexVersion).toBe(first);
    expect(result.indexVersion).toBe(first);
    expect(result.timings!.agent).toBeGreaterThanOrEqual(0);
  });
});
