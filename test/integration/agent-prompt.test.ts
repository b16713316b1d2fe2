// The agent's prompt and tool calls: switching a tool off removes exactly its block and its
// function definition (checked on the requests a real client sends to the fake provider), and
// malformed calls become messages for the model.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLlmClient, type LlmClient } from '../../engines/llm/client';
import { AGENT_BASE_PROMPT, AGENT_TOOL_BLOCKS, agentSystemPrompt, agentUserMessage } from '../../engines/agent/prompt';
import { runAgentStep } from '../../engines/agent/step';
import { declaresSuccess, parseToolCall } from '../../engines/agent/tool-calls';
import { AGENT_TOOL_NAMES, type AgentToolName } from '../../common/run-config-schema';
import { answer, FAKE_MODELS, startFakeOpenAI, toolCall, type FakeOpenAI } from '../fakes/openai-server';

let fake: FakeOpenAI;
let llm: LlmClient;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  llm = createLlmClient({ baseURL: fake.url, models: { ...FAKE_MODELS }, timeoutMs: 5000, maxReasks: 0 });
});
afterAll(() => fake.close());

const ALL: AgentToolName[] = ['write_file', 'run_lean', 'inspect_name', 'resolve_name', 'search_premises', 'draft'];

describe('agent prompt', () => {
  it('switching tools off removes exactly their blocks and function definitions from the request', async () => {
    const without: AgentToolName[] = ALL.filter((t) => t !== 'run_lean' && t !== 'draft');
    fake.script(FAKE_MODELS.agent, answer('thinking'), answer('thinking'));
    const input = { statement: 'Every prime greater than 2 is odd.', transcript: [] };
    await runAgentStep(llm, { ...input, tools: ALL });
    await runAgentStep(llm, { ...input, tools: without });
    const [full, reduced] = fake.requests.slice(-2);

    // The system prompts differ by exactly the two tools' lines; everything else is equal.
    const fullLines = full!.messages[0]!.content.split('\n');
    const reducedLines = reduced!.messages[0]!.content.split('\n');
    const removed = fullLines.filter((l) => !reducedLines.includes(l));
    expect(removed).toEqual([`- ${AGENT_TOOL_BLOCKS.run_lean}`, `- ${AGENT_TOOL_BLOCKS.draft}`]);
    expect(fullLines.filter((l) => !removed.includes(l))).toEqual(reducedLines);
    expect(full!.messages[0]!.content.startsWith(AGENT_BASE_PROMPT)).toBe(true);
    expect(reduced!.messages[0]!.content.startsWith(AGENT_BASE_PROMPT)).toBe(true);
    // The user message is the same.
    expect(full!.messages[1]).toEqual(reduced!.messages[1]);

    // The function definitions differ by exactly those two.
    const names = (r: typeof full) => r!.tools!.map((t) => t.function.name);
    expect(names(full)).toEqual([...AGENT_TOOL_NAMES]);
    expect(names(reduced)).toEqual(['write_file', 'inspect_name', 'resolve_name', 'search_premises']);
    const kept = full!.tools!.filter((t) => names(reduced).includes(t.function.name));
    expect(kept).toEqual(reduced!.tools);
  });

  it('offers the tools under the contract names and argument names', () => {
    const params = (name: string) => {
      const def = fake.requests.at(-2)!.tools!.find((t) => t.function.name === name)!;
      return def.function.parameters as { properties: Record<string, unknown>; required: string[] };
    };
    expect(Object.keys(params('write_file').properties)).toEqual(['code']);
    expect(Object.keys(params('run_lean').properties)).toEqual([]);
    expect(Object.keys(params('inspect_name').properties)).toEqual(['name']);
    expect(Object.keys(params('resolve_name').properties)).toEqual(['token', 'namespace_hints']);
    expect(params('resolve_name').required).toEqual(['token']);
    expect(Object.keys(params('search_premises').properties)).toEqual(['query']);
    expect(Object.keys(params('draft').properties)).toEqual(['statement']);
  });

  it('puts DRIFT context in the first user message only when given, never in the system prompt', () => {
    const premises = [{ name: 'Nat.Prime', kind: 'def', declaration: 'def Nat.Prime (p : ℕ) : Prop' }];
    const examples = [
      {
        name: 'Nat.Prime.two_le',
        formal: 'theorem Nat.Prime.two_le {p : ℕ} (hp : p.Prime) : 2 ≤ p',
        informal: 'A prime is at least 2.',
        covers: ['Nat.Prime'],
      },
    ];
    const plain = agentUserMessage('Every prime is at least 2.');
    const withContext = agentUserMessage('Every prime is at least 2.', { premises, examples });
    expect(plain).toBe('Statement to formalize:\nEvery prime is at least 2.');
    expect(withContext.startsWith(plain)).toBe(true);
    expect(withContext).toContain('- Nat.Prime: def Nat.Prime (p : ℕ) : Prop');
    expect(withContext).toContain('theorem Nat.Prime.two_le');
    expect(agentSystemPrompt(ALL)).not.toContain('Nat.Prime :');
  });

  it('parses a tool call from the real wire format and reports usage', async () => {
    fake.script(FAKE_MODELS.agent, toolCall('inspect_name', { name: 'Nat.Prime' }, { id: 'call_1' }));
    const out = await runAgentStep(llm, { statement: 's', tools: ALL, transcript: [] });
    expect(out.calls).toEqual([{ id: 'call_1', tool: 'inspect_name', args: { name: 'Nat.Prime' } }]);
    expect(out.reply.toolCalls).toEqual([{ id: 'call_1', name: 'inspect_name', arguments: '{"name":"Nat.Prime"}' }]);
    expect(out.usage.total).toBeGreaterThan(0);
    expect(out.declaresSuccess).toBe(false);
  });
});

describe('tool calls', () => {
  const call = (name: string, args: string) =>
    parseToolCall({ id: 'c', name, arguments: args }, ['write_file', 'run_lean', 'resolve_name']);

  it('accepts well-formed calls', () => {
    expect(call('run_lean', '')).toEqual({ id: 'c', tool: 'run_lean', args: {} });
    expect(call('resolve_name', '{"token": "Nat.Primee", "namespace_hints": ["Nat"]}')).toMatchObject({
      args: { token: 'Nat.Primee', namespace_hints: ['Nat'] },
    });
  });

  it.each([
    ['write_file', '{"code": ', /not valid JSON/],
    ['write_file', '[1]', /must be a JSON object/],
    ['write_file', '{}', /needs `code`/],
    ['write_file', '{"code": 3}', /`code` must be a non-empty string/],
    ['write_file', '{"code": "x", "path": "a.lean"}', /no argument `path`/],
    ['resolve_name', '{"token": "x", "namespace_hints": "Nat"}', /array of strings/],
    ['inspect_name', '{"name": "x"}', /no tool `inspect_name`/],
    ['shell', '{}', /no tool `shell`/],
  ])('refuses %s(%s) with a message for the model', (name, args, message) => {
    const parsed = call(name, args);
    expect('error' in parsed && parsed.error).toMatch(message);
  });

  it('recognizes a declared success', () => {
    expect(declaresSuccess('{"status": "success"}')).toBe(true);
    expect(declaresSuccess('Done.\n```json\n{ "status" : "success" }\n```')).toBe(true);
    expect(declaresSuccess('I could not do it.')).toBe(false);
    expect(declaresSuccess(null)).toBe(false);
  });
});

describe('the fake provider speaks the tool-calling protocol', () => {
  it('refuses a conversation whose tool call was never answered, as a real provider does', async () => {
    await expect(
      runAgentStep(llm, {
        statement: 's',
        tools: ALL,
        transcript: [{ role: 'assistant', content: null, toolCalls: [{ id: 'call_x', name: 'run_lean', arguments: '{}' }] }],
      }),
    ).rejects.toThrow(/tool_call_ids did not have response messages: call_x/);
  });
});
