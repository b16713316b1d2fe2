// The `formalize` workflow: one formalization run, from an informal statement to a judged Lean
// statement. Deterministic code only: every side effect is an activity. The stages it shares with
// agent mode (DRIFT context, judge, the end of the run) are in run-core.ts; the draft, compile
// and repair loop is its own.
import { log, patched } from '@temporalio/workflow';
import { refusalLabel } from '../common/verdict';
import { llmMeterFor } from '../common/run-config';
import { openedNamespaces, unknownIdentifiers } from '../common/lean-messages';
import type { CompileResult } from '../common/lean-types';
import type { FormalizeInput, FormalizeResult } from '../common/run-types';
import { decide, driftContext, finishRun, judgeRun, startRun, untilBudget, type Run } from './run-core';

export { progressQuery } from './run-core';

/** At most this many unknown identifiers are resolved per repair round. */
const MAX_NAMES_PER_ROUND = 3;

export async function formalize(input: FormalizeInput): Promise<FormalizeResult> {
  // Cache, sample, model and provider choices and budgets for the LLM activities (the ledger).
  const run = startRun(input, { meter: (config) => llmMeterFor(config, input.sample ?? 0, input.llm) });
  let repairStopped: FormalizeResult['repairStopped'];
  // A spent LLM budget ends the run with what it has so far.
  await untilBudget(run, async () => {
    // 1–3. Decompose, retrieve, illustrate.
    await driftContext(run);
    // 4. Formalize, compile, repair: at most `repairRounds` repairs after the first attempt.
    const last = await draftAndRepair(run);
    repairStopped = last.stopped;
    decide(run, run.end.statement, last.result);
    // 5. Judge faithfulness; against a gold statement, Lean's equivalence check runs beside it.
    await judgeRun(run, run.end.attempts.length - 1);
  });
  return finishRun(run, run.end, repairStopped ? { repairStopped } : {});
}

/** Drafts a statement, compiles it, and repairs it while Lean rejects it and rounds remain.
 * Each attempt is kept on the run as it comes, and each statement as it is written (a run
 * stopped by its budget reports the last one). A repair round that would send a prompt
 * already sent (the same attempt, the same Lean messages) would get the same reply: the loop
 * ends there instead, saying so in `stopped`. Answers the last compile result. */
async function draftAndRepair(run: Run): Promise<{ result: CompileResult; stopped?: NonNullable<FormalizeResult['repairStopped']> }> {
  const { input, config, notes, progress, end } = run;
  const llm = run.llm('formalizer');
  const context = { statement: input.statement, premises: run.premises, examples: run.examples, ...run.meter };
  // One activity per stage, so the Temporal UI tells a repair from the first draft; runs started
  // before called both `draftStatement` (docs/decisions/0015).
  const named = patched('formalize-repair-activities');
  run.enter('formalize');
  let statement = await (named ? llm.formalize.executeWithOptions({ summary: 'first draft' }, [context]) : llm.draftStatement(context));
  end.statement = statement;
  // What each repair round was sent (its attempt and Lean's messages on it), by round.
  const asked = new Map<string, number>();
  for (let round = 0; ; round++) {
    run.enter('compile');
    const result = await run.lean.compile({ code: statement, ...run.domain });
    end.attempts.push({ round, statement, compile: result });
    run.showState(
      result.status === 'refused'
        ? { compile: `round ${round}: ${refusalLabel(result)}`, compileBy: result.refusedBy ? 'lean' : 'screen' }
        : {
            compile: `round ${round}: ${result.status}${result.status === 'error' ? ` (${result.messages.filter((m) => m.severity === 'error').length} errors)` : ''}`,
            compileBy: 'lean',
          },
    );
    if (result.status === 'ok' || result.status === 'skipped') return { result };
    if (round >= config.repairRounds) {
      log.info('repair budget exhausted', { rounds: config.repairRounds });
      return { result };
    }
    const repairRound = round + 1;
    const prompt = JSON.stringify([statement, result.messages]);
    const repeats = asked.get(prompt);
    if (repeats !== undefined && patched('repair-stops-on-repeated-prompt')) {
      notes.push(
        `repair: round ${repairRound} would send the formalizer what round ${repeats} was sent (the same attempt and Lean messages), so it was not asked; the loop ended`,
      );
      return { result, stopped: { reason: 'repeated-prompt', round: repairRound, repeats } };
    }
    asked.set(prompt, repairRound);
    progress.round = repairRound;
    run.enter('repair');
    const suggestions = await suggestNames(run, statement, result, repairRound);
    const repair = { ...context, repair: { statement, messages: result.messages, ...(suggestions ? { suggestions } : {}) } };
    statement = await (named
      ? llm.repair.executeWithOptions({ summary: `repair round ${repairRound}` }, [repair])
      : llm.draftStatement(repair));
    end.statement = statement;
  }
}

/** Unknown names: ask the Lean worker for the closest real ones (found in the library, confirmed
 * by Lean), to show them to the formalizer. A failed lookup is noted, not fatal. */
async function suggestNames(
  run: Run,
  statement: string,
  result: CompileResult,
  round: number,
): Promise<Record<string, string[]> | undefined> {
  const unknown = unknownIdentifiers(result.messages).slice(0, MAX_NAMES_PER_ROUND);
  if (unknown.length === 0) return undefined;
  const suggestions: Record<string, string[]> = {};
  const namespaceHints = openedNamespaces(statement);
  const resolved = await Promise.all(
    unknown.map((token) =>
      run.leanTools.resolveName({ token, library: run.input.library, namespaceHints, topK: 5, ...run.domain }).catch((err: Error) => {
        run.notes.push(`resolveName(${token}) failed: ${err.message}`);
        return undefined;
      }),
    ),
  );
  resolved.forEach((found, i) => {
    if (!found) return;
    const names = found.suggestions.map((s) => s.name);
    suggestions[found.token] = names;
    run.tools.push({ tool: 'resolveName', round, input: unknown[i]!, output: names });
  });
  return suggestions;
}
