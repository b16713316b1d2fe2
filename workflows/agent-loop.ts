// The agent's control loop (the second paper's Algorithm 1): at each step the model sees the
// conversation and either calls a tool, whose result joins the conversation, or answers, which
// ends the loop if the answer can be accepted. Steps, tokens and wall-clock time are budgeted.
//
// The loop is written against `AgentOps`, so the same code runs inside the `formalizeAgent`
// workflow (each op an activity, each step durable) and in-process (the benchmark's baseline).
// Deterministic: time comes from `ops.now()`, nothing else is read from outside.
import { rootCauseMessage } from '../common/failures';
import type {
  AgentEnding,
  AgentStepInput,
  AgentStepOutput,
  AgentStepRecord,
  AgentSummary,
  AgentTurn,
  ParsedToolCall,
} from '../common/agent-types';
import type { CompileResult, LeanMessage, NameInfo, ResolveNameResult } from '../common/lean-types';
import type { TokenUsage } from '../common/llm-types';
import type { Example, Premise } from '../common/retrieval-types';
import type { AgentToolName } from '../common/run-config-schema';
import { boundTranscript } from './agent-transcript';
import { compileOutput, inspectOutput, premisesOutput, resolveOutput, screenOutput, summarize, bounded } from './agent-tool-output';

export interface AgentOps {
  step(input: AgentStepInput, step: number): Promise<AgentStepOutput>;
  screen(code: string, step: number): Promise<LeanMessage | null>;
  compile(code: string, step: number): Promise<CompileResult>;
  inspectName(name: string, step: number): Promise<NameInfo>;
  resolveName(token: string, namespaceHints: string[], step: number): Promise<ResolveNameResult>;
  searchPremises(query: string, step: number): Promise<Premise[]>;
  draft(statement: string, step: number): Promise<string>;
  /** Milliseconds since the epoch (workflow time inside a workflow). */
  now(): number;
  /** Runs `fn` for at most `ms`, cancelling it when the time runs out. */
  within<T>(ms: number, fn: () => Promise<T>): Promise<{ value: T } | 'timeout'>;
  /** Whether a tool's failure must end the run (cancellation) rather than go back to the model. */
  isFatal(err: unknown): boolean;
  /** Progress hooks. */
  onStepStart?(step: number): void;
  onRecord?(record: AgentStepRecord): void;
}

export interface AgentLoopInput {
  statement: string;
  tools: AgentToolName[];
  maxSteps: number;
  tokenBudget: number;
  wallClockSeconds: number;
  context?: { premises: Premise[]; examples: Example[] };
}

export interface AgentLoopResult {
  /** The last file written (null: none was). */
  file: string | null;
  /** Lean's verdict on exactly `file`, when the loop compiled it. */
  compileOfFile: CompileResult | null;
  /** The last `write_file` when the screen refused it (its code and the refusal); null when
   * the last write was accepted or there was none. */
  lastWriteRefusal: { code: string; message: LeanMessage } | null;
  steps: AgentStepRecord[];
  summary: AgentSummary;
}

const NO_TOKENS: TokenUsage = { prompt: 0, completion: 0, total: 0 };

/** Why an answer cannot be accepted yet, or null when it can. */
export function refusalOf(tools: readonly AgentToolName[], file: string | null, compileOfFile: CompileResult | null): string | null {
  if (file === null) return 'Not accepted: no Lean file has been written yet. Write it with write_file first.';
  if (!tools.includes('run_lean')) return null;
  if (!compileOfFile) return 'Not accepted: the file you wrote last has not been checked. Run run_lean on it first.';
  // With no Lean configured nothing can ever compile; the run says so instead of looping.
  if (compileOfFile.status === 'ok' || compileOfFile.status === 'skipped') return null;
  if (compileOfFile.status === 'refused')
    return 'Not accepted: the statement screen refused the file you wrote last before Lean. Fix it, write it again and run run_lean.';
  return 'Not accepted: Lean did not accept the file you wrote last. Fix it, write it again and run run_lean.';
}

function addUsage(a: TokenUsage, b: TokenUsage): TokenUsage {
  return { prompt: a.prompt + b.prompt, completion: a.completion + b.completion, total: a.total + b.total };
}

export async function runAgentLoop(ops: AgentOps, input: AgentLoopInput): Promise<AgentLoopResult> {
  let transcript: AgentTurn[] = [];
  const steps: AgentStepRecord[] = [];
  const toolCalls: Record<string, number> = {};
  const deadline = ops.now() + input.wallClockSeconds * 1000;
  let tokens = NO_TOKENS;
  let file: string | null = null;
  let compileOfFile: CompileResult | null = null;
  let lastWriteRefusal: AgentLoopResult['lastWriteRefusal'] = null;
  let ending: AgentEnding | null = null;
  let budget: AgentSummary['budget'];
  let taken = 0;
  let compiledAtStep: number | null = null;

  const record = (r: AgentStepRecord): void => {
    steps.push(r);
    ops.onRecord?.(r);
  };
  const exhausted = (which: NonNullable<AgentSummary['budget']>): void => {
    ending = 'budget-exhausted';
    budget = which;
  };

  /** Runs one valid tool call; returns what the model reads and whether it failed. */
  const runTool = async (
    call: Extract<ParsedToolCall, { args: unknown }>,
    t: number,
  ): Promise<{ text: string; error?: boolean } | 'timeout'> => {
    const args = call.args;
    const remaining = deadline - ops.now();
    const run = async (): Promise<{ text: string; error?: boolean }> => {
      switch (call.tool) {
        case 'write_file': {
          const code = String(args.code);
          const rejection = await ops.screen(code, t);
          lastWriteRefusal = rejection ? { code, message: rejection } : null;
          if (!rejection) {
            file = code;
            compileOfFile = null;
          }
          return { text: screenOutput(rejection, code.length), ...(rejection ? { error: true } : {}) };
        }
        case 'run_lean': {
          if (file === null) return { text: 'There is no working file yet: write it with write_file first.', error: true };
          const checked = file;
          const result = await ops.compile(checked, t);
          if (file === checked) compileOfFile = result;
          if (result.status === 'ok') compiledAtStep ??= t;
          return { text: compileOutput(result) };
        }
        case 'inspect_name':
          return { text: inspectOutput(await ops.inspectName(String(args.name), t)) };
        case 'resolve_name':
          return {
            text: resolveOutput(await ops.resolveName(String(args.token), (args.namespace_hints as string[] | undefined) ?? [], t)),
          };
        case 'search_premises':
          return { text: premisesOutput(await ops.searchPremises(String(args.query), t)) };
        case 'draft':
          return { text: bounded(await ops.draft(String(args.statement), t)) };
      }
    };
    try {
      const outcome = await ops.within(remaining, run);
      return outcome === 'timeout' ? 'timeout' : outcome.value;
    } catch (err) {
      if (ops.isFatal(err)) throw err;
      // A tool that failed after its retries is the model's problem to work around.
      return { text: `The tool failed: ${rootCauseMessage(err)}`, error: true };
    }
  };

  for (let t = 1; ending === null; t++) {
    if (t > input.maxSteps) {
      exhausted('steps');
      break;
    }
    if (tokens.total >= input.tokenBudget) {
      exhausted('tokens');
      break;
    }
    const remaining = deadline - ops.now();
    if (remaining <= 0) {
      exhausted('time');
      break;
    }
    ops.onStepStart?.(t);
    transcript = boundTranscript(transcript);
    const started = ops.now();
    const answer = await ops.within(remaining, () =>
      ops.step(
        {
          statement: input.statement,
          tools: input.tools,
          ...(input.context ? { context: input.context } : {}),
          transcript: [...transcript],
        },
        t,
      ),
    );
    if (answer === 'timeout') {
      exhausted('time');
      break;
    }
    taken = t;
    const reply = answer.value;
    tokens = addUsage(tokens, reply.usage);
    transcript.push(reply.reply);
    let llmMs = ops.now() - started;
    let stepTokens: TokenUsage = reply.usage;

    if (reply.calls.length === 0) {
      const refusal = refusalOf(input.tools, file, compileOfFile);
      record({
        step: t,
        tool: null,
        output: summarize(reply.reply.content ?? ''),
        accepted: refusal === null,
        tokens: stepTokens,
        ms: llmMs,
      });
      if (refusal === null) {
        ending = reply.declaresSuccess ? 'success' : 'answered';
        break;
      }
      transcript.push({ role: 'user', content: refusal });
      continue;
    }

    for (const call of reply.calls) {
      toolCalls[call.tool] = (toolCalls[call.tool] ?? 0) + 1;
      const toolStarted = ops.now();
      const done = 'error' in call ? { text: `Error: ${call.error}. Nothing was run.`, error: true } : await runTool(call, t);
      if (done === 'timeout') {
        exhausted('time');
        break;
      }
      // Every tool call gets its answer, as the chat protocol requires.
      transcript.push({ role: 'tool', toolCallId: call.id, content: done.text });
      record({
        step: t,
        tool: call.tool,
        ...('args' in call ? { arguments: recordedArguments(call.args) } : {}),
        output: summarize(done.text),
        ...(done.error ? { error: true } : {}),
        tokens: stepTokens,
        ms: llmMs + (ops.now() - toolStarted),
      });
      stepTokens = NO_TOKENS;
      llmMs = 0;
    }
  }

  return {
    file,
    compileOfFile,
    lastWriteRefusal,
    steps,
    summary: { ending: ending ?? 'budget-exhausted', ...(budget ? { budget } : {}), steps: taken, tokens, toolCalls, compiledAtStep },
  };
}

/** Arguments as recorded: long strings (a whole file) shortened, so the result stays small. */
function recordedArguments(args: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(args).map(([k, v]) => [k, typeof v === 'string' && v.length > 2000 ? `${v.slice(0, 2000)}…` : v]),
  );
}
