// `driftline sweep rescore SOURCE --id NEW --judge PROVIDER[:MODEL]`: judge a finished sweep's
// recorded statements again with another judge (a rubric file, a threshold; optionally the
// equivalence check too), as a durable sweep of its own; returns once it is started.
import { readFile, stat } from 'node:fs/promises';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { configOrExit, fail, stackProviderNames } from './cli-support';
import { printedJsonOrExisting } from './sweep-started-output';
import { connectClient } from '../infra/connect';
import { openResults } from '../infra/results';
import { runLlmSettings } from '../infra/config';
import { FAITHFUL_GRADE } from '../engines/llm/judge-prompt';
import { MAX_RUBRIC_CHARS, rubricProblem, startRescore } from '../client/sweep-rescore';
import { SweepRequestError } from '../client/sweeps';
import { judgeLabel, parseJudgeChoice, type JudgeChoice } from '../common/rescore';

interface RescoreOptions {
  id: string;
  judge: JudgeChoice;
  rubric?: string;
  threshold: number;
  equivalence?: boolean;
  window?: number;
  json?: boolean;
  historyLimit?: number;
}

function judgeArg(value: string): JudgeChoice {
  const choice = parseJudgeChoice(value);
  if (!choice) throw new InvalidArgumentError('expected PROVIDER or PROVIDER:MODEL (a provider name: letters, digits, "_" or "-")');
  return choice;
}

function gradeArg(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 10) throw new InvalidArgumentError('expected a grade from 0 to 10');
  return n;
}

function positiveArg(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('expected a whole number ≥ 1');
  return n;
}

/** The rubric file's text: UTF-8, at most MAX_RUBRIC_CHARS characters. It is only ever sent to
 * the judge as its instructions. */
async function readRubric(file: string): Promise<string> {
  const size = await stat(file).then(
    (s) => (s.isFile() ? s.size : fail(`--rubric ${file}: not a file`)),
    (err: NodeJS.ErrnoException) => fail(`--rubric ${file}: ${err.code === 'ENOENT' ? 'no such file' : err.message}`),
  );
  // Four bytes a character at most: a bigger file cannot be within the limit.
  if (size > MAX_RUBRIC_CHARS * 4) fail(`--rubric ${file}: ${size} bytes; a rubric has at most ${MAX_RUBRIC_CHARS} characters`);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(await readFile(file));
  } catch {
    fail(`--rubric ${file}: not UTF-8 text`);
  }
  const problem = rubricProblem(text);
  if (problem) fail(`--rubric ${file}: ${problem}`);
  return text;
}

async function rescoreCommand(source: string, opts: RescoreOptions): Promise<void> {
  const cfg = configOrExit({ skipFileChecks: true });
  const rubric = opts.rubric !== undefined ? { file: opts.rubric, text: await readRubric(opts.rubric) } : undefined;
  const db = await openResults(cfg).catch((err: Error) => fail(err.message));
  try {
    const client = await connectClient(cfg).catch((err: Error) => fail(err.message));
    try {
      let started;
      try {
        started = await startRescore(client, db, source, {
          id: opts.id,
          judge: opts.judge,
          threshold: opts.threshold,
          equivalence: opts.equivalence ?? false,
          ...(rubric ? { rubric } : {}),
          // The stack's providers, not this shell's: a client needs no provider of its own.
          providerNames: await stackProviderNames(cfg, client, [opts.judge.provider]),
          ...(opts.window ? { window: opts.window } : {}),
          ...(opts.historyLimit ? { historyLimit: opts.historyLimit } : {}),
          llm: runLlmSettings(cfg),
        });
      } catch (err) {
        if (err instanceof SweepRequestError) fail(err.message);
        throw err;
      }
      const differs = (fields: string) =>
        `sweep ${started.id} exists and differs in ${fields}; it is unchanged (choose another --id for a new one)`;
      if (printedJsonOrExisting(started, opts.json, differs)) return;
      process.stdout.write(
        `sweep ${started.id} started: a rescore of ${source} by the judge ${judgeLabel(opts.judge)} (faithful: grade ≥ ${opts.threshold}${rubric ? `, rubric ${rubric.file}` : ''}${opts.equivalence ? ', equivalence checked again' : ''}), ${started.total} runs over ${started.cells.length} configurations\n` +
          `watch it: driftline sweep status ${started.id}\n`,
      );
    } finally {
      await client.connection.close();
    }
  } finally {
    await db.close();
  }
}

export function registerRescoreCommand(sweep: Command): void {
  sweep
    .command('rescore')
    .description(
      "judge a finished sweep's recorded statements again with another judge, without formalizing or compiling again, as a sweep of its own; its report sets both judges side by side (Cohen's kappa per configuration); returns once it is started",
    )
    .argument('<source>', 'the finished sweep to judge again')
    .requiredOption('--id <id>', 'the new sweep ID (an existing ID answers with that sweep)')
    .requiredOption('--judge <provider[:model]>', 'the judge: a configured LLM provider, and optionally a model there', judgeArg)
    .option('--rubric <file>', "a text file whose contents replace the judge's instructions (the rubric; at most 16000 characters)")
    .option('--threshold <grade>', 'faithful = compiled and grade ≥ this', gradeArg, FAITHFUL_GRADE)
    .option('--equivalence', "also run the BEq+ equivalence check against the item's gold again (on the Lean queue)")
    .option('--window <n>', "units in flight at once (default: the source's window)", positiveArg)
    .option('--json', 'print {id, existing, total, cells} as JSON')
    .addOption(new Option('--history-limit <events>', 'continue as new past this many history events').argParser(positiveArg).hideHelp())
    .action(rescoreCommand);
}
