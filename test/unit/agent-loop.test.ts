// The agent loop alone, in-process over scripted steps and tools: acceptance rules, tool
// failures, several calls in one reply, and the transcript bound that keeps histories small.
import { describe, expect, it } from 'vitest';
import { refusalOf, runAgentLoop, type AgentOps } from '../../workflows/agent-loop';
import { boundTranscript, KEEP_RECENT_TURNS, TRANSCRIPT_BUDGET_CHARS } from '../../workflows/agent-transcript';
import type { AgentStepInput, AgentStepOutput, AgentTurn } from '../../common/agent-types';
import type { CompileResult } from '../../common/lean-types';
import type { AgentToolName } from '../../common/run-config-schema';

const OK: CompileResult = { status: 'ok', messages: [], durationMs: 1 };
const GOOD = 'import Mathlib\ntheorem t : 1 + 1 = 2 := by sorry';

type Call = { tool: string; args?: Record<string, unknown> | string };
const reply = (calls: Call[] | string, usage = 10): AgentStepOutput => {
  if (typeof calls === 'string')
    return {
      reply: { role: 'assistant', content: calls },
      calls: [],
      declaresSuccess: calls.includes('success'),
      usage: { prompt: usage, completion: 0, total: usage },
    };
  const toolCalls = calls.map((c, i) => ({
    id: `c${i}`,
    name: c.tool,
    arguments: typeof c.args === 'string' ? c.args : JSON.stringify(c.args ?? {}),
  }));
  return {
    reply: { role: 'assistant', content: null, toolCalls },
    calls: calls.map((c, i) => ({
      id: `c${i}`,
      tool: c.tool as AgentToolName,
      args: (typeof c.args === 'object' ? c.args : {}) as Record<string, unknown>,
    })),
    declaresSuccess: false,
    usage: { prompt: usage, completion: 0, total: usage },
  };
};

function scripted(replies: AgentStepOutput[], over: Partial<AgentOps> = {}): { ops: AgentOps; inputs: AgentStepInput[] } {
  const inputs: AgentStepInput[] = [];
  const ops: AgentOps = {
    step: async (input) => {
      inputs.push(input);
      return replies.length > 1 ? replies.shift()! : replies[0]!;
    },
    screen: async () => null,
    compile: async () => OK,
    inspectName: async (name) => ({ name, exists: true, type: 'Prop' }),
    resolveName: async (token) => ({ token, suggestions: [], considered: 0 }),
    searchPremises: async () => [],
    draft: async () => 'theorem draft : True := by sorry',
    now: () => Date.now(),
    within: async (_ms, fn) => ({ value: await fn() }),
    isFatal: () => false,
    ...over,
  };
  return { ops, inputs };
}

const LOOP = {
  statement: 's',
  tools: ['write_file', 'run_lean', 'inspect_name'] as AgentToolName[],
  maxSteps: 24,
  tokenBudget: 1e9,
  wallClockSeconds: 600,
};

describe('agent loop', () => {
  it('accepts an answer without a compile only when Lean is not among the tools', async () => {
    expect(refusalOf(['write_file'], GOOD, null)).toBeNull();
    expect(refusalOf(['write_file', 'run_lean'], GOOD, null)).toMatch(/has not been checked/);
    expect(refusalOf(['write_file'], null, null)).toMatch(/no Lean file has been written/);
    expect(refusalOf(['write_file', 'run_lean'], GOOD, { status: 'error', messages: [], durationMs: 1 })).toMatch(/did not accept/);
    const { ops } = scripted([reply([{ tool: 'write_file', args: { code: GOOD } }]), reply('{"status": "success"}')]);
    const out = await runAgentLoop(ops, { ...LOOP, tools: ['write_file'] });
    expect(out.summary).toMatchObject({ ending: 'success', steps: 2 });
    expect(out.file).toBe(GOOD);
    expect(out.compileOfFile).toBeNull();
  });

  it('ends `answered` when an accepted answer does not declare success', async () => {
    const { ops } = scripted([
      reply([{ tool: 'write_file', args: { code: GOOD } }]),
      reply([{ tool: 'run_lean' }]),
      reply('I am done here.'),
    ]);
    const out = await runAgentLoop(ops, LOOP);
    expect(out.summary.ending).toBe('answered');
  });

  it('tells the model when a tool failed, and goes on', async () => {
    const { ops, inputs } = scripted(
      [
        reply([{ tool: 'inspect_name', args: { name: 'X' } }]),
        reply([{ tool: 'write_file', args: { code: GOOD } }]),
        reply([{ tool: 'run_lean' }]),
        reply('{"status": "success"}'),
      ],
      {
        inspectName: async () => {
          throw Object.assign(new Error('Activity task failed'), { cause: new Error('REPL died twice') });
        },
      },
    );
    const out = await runAgentLoop(ops, LOOP);
    expect(inputs[1]!.transcript.at(-1)).toMatchObject({ role: 'tool', content: 'The tool failed: REPL died twice' });
    expect(out.steps[0]).toMatchObject({ tool: 'inspect_name', error: true });
    expect(out.summary.ending).toBe('success');
  });

  it('runs every call of a reply with several, counting the step once and its tokens once', async () => {
    const { ops, inputs } = scripted([
      reply([{ tool: 'write_file', args: { code: GOOD } }, { tool: 'run_lean' }], 30),
      reply('{"status": "success"}', 5),
    ]);
    const out = await runAgentLoop(ops, LOOP);
    expect(out.steps.map((s) => [s.step, s.tool, s.tokens.total])).toEqual([
      [1, 'write_file', 30],
      [1, 'run_lean', 0],
      [2, null, 5],
    ]);
    expect(out.summary.tokens.total).toBe(35);
    expect(inputs[1]!.transcript.map((t) => t.role)).toEqual(['assistant', 'tool', 'tool']);
  });

  it("keeps each step's transcript within its bound over 50 steps of maximal outputs", async () => {
    const big = `import Mathlib\ntheorem t : True := by sorry -- ${'x'.repeat(19_000)}`;
    const { ops, inputs } = scripted([reply([{ tool: 'write_file', args: { code: big } }]), reply([{ tool: 'run_lean' }])], {
      compile: async () => ({
        status: 'error',
        messages: [{ severity: 'error', line: 1, column: 0, text: 'e'.repeat(10_000) }],
        durationMs: 1,
      }),
    });
    // Alternate writes and runs: two replies scripted, the last one repeats; interleave by hand.
    let n = 0;
    ops.step = async (input) => {
      inputs.push(input);
      return n++ % 2 === 0 ? reply([{ tool: 'write_file', args: { code: big } }]) : reply([{ tool: 'run_lean' }]);
    };
    const out = await runAgentLoop(ops, { ...LOOP, maxSteps: 50 });
    expect(out.summary).toMatchObject({ ending: 'budget-exhausted', budget: 'steps', steps: 50 });
    const chars = (turns: AgentTurn[]) => JSON.stringify(turns).length;
    const largest = Math.max(...inputs.map((i) => chars(i.transcript)));
    // The budget plus the latest turns kept whole (each at most a 20k file or a 4k output).
    expect(largest).toBeLessThan(TRANSCRIPT_BUDGET_CHARS + KEEP_RECENT_TURNS * 21_000);
    // The latest turns reach the model whole.
    const last = inputs.at(-1)!.transcript;
    const lastRun = last.filter((t) => t.role === 'tool' && t.content.startsWith('Lean did not accept')).at(-1) as { content: string };
    expect(lastRun.content.length).toBeGreaterThan(4000);
    const lastWrite = last.filter((t) => t.role === 'assistant').at(-1) as { toolCalls: { arguments: string }[] };
    expect(JSON.parse(lastWrite.toolCalls[0]!.arguments)).toEqual({ code: big });
    // …and the oldest were shortened.
    expect(JSON.stringify(last[0])).toMatch(/not repeated/);
    // Without the bound the transcript would be ~50 × 12k characters.
    expect(chars(last)).toBeLessThan(200_000);
  });

  it('leaves a transcript under the budget untouched', () => {
    const turns: AgentTurn[] = [
      { role: 'assistant', content: 'x'.repeat(1000) },
      { role: 'user', content: 'y' },
    ];
    expect(boundTranscript(turns)).toBe(turns);
  });
});

describe('agent configuration', () => {
  it('picks the workflow type from the mode, and labels agent cells by their tool factors', async () => {
    const { workflowTypeFor, describeConfig, resolveRunConfig, agentConfigProblem } = await import('../../common/run-config');
    expect(workflowTypeFor(resolveRunConfig({}))).toBe('formalize');
    expect(workflowTypeFor(resolveRunConfig({ mode: 'agent' }))).toBe('formalizeAgent');
    expect(describeConfig(resolveRunConfig({ mode: 'agent' }))).toBe('agent-FSR+T24+judge');
    expect(describeConfig(resolveRunConfig({ mode: 'agent', tools: ['write_file', 'draft'], maxSteps: 14, judge: false }))).toBe(
      'agent-T+T14',
    );
    expect(describeConfig(resolveRunConfig({ mode: 'agent', driftContext: true, retrieval: 'monolithic', topK: 5 }))).toBe(
      'agent-FSR+T24+ctx-monolithic5+judge',
    );
    expect(agentConfigProblem({ mode: 'agent', tools: ['run_lean'] })).toMatch(/write_file/);
    expect(agentConfigProblem({ tools: ['run_lean'] })).toBeNull();
  });
});
