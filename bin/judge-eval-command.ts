// `driftline eval judge`: calibrate the LLM judge against human labels. Runs the service's own
// judge (same prompt, same structured reply, same rubric unless --rubric replaces it) over
// model-generated ProofNet statements that people labelled as equivalent to the gold statement
// or not, and reports accuracy, precision, recall and Cohen's kappa with bootstrap intervals —
// and, with --second-model, how well two judge models agree with each other.
import { writeFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Command, InvalidArgumentError } from 'commander';
import { createConfiguredLlm } from '../infra/deps';
import { publicDataDir, type Config } from '../infra/config';
import { configOrExit, fail } from './cli-support';
import { LabelDataError, loadBenchmarkStatements, loadLabelledSet, type LabelledItem } from '../engines/judge-eval/human-labels';
import { judgeReportMarkdown, runJudgeEval, type JudgeUnderTest } from '../engines/judge-eval/run-judge-eval';

export interface EvalJudgeOptions {
  data?: string[];
  benchmark?: string;
  model?: string;
  secondModel?: string;
  threshold: number;
  rubric?: string;
  concurrency: number;
  limit?: number;
  seed: number;
  resamples: number;
  details?: string;
  json?: boolean;
}

function intAtLeast(min: number) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min) throw new InvalidArgumentError(`expected a whole number ≥ ${min}`);
    return n;
  };
}

function grade(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 10) throw new InvalidArgumentError('expected a grade from 0 to 10');
  return n;
}

/** Runs the calibration and returns what the command prints. */
export async function evalJudge(cfg: Config, opts: EvalJudgeOptions, onProgress?: (done: number, total: number) => void): Promise<string> {
  if (Object.keys(cfg.llm.providers).length === 0)
    throw new Error('no LLM endpoint configured: set OPENAI_BASE_URL (and OPENAI_API_KEY), and DRIFTLINE_MODEL_JUDGE or --model');
  const shared = publicDataDir(cfg);
  const dirs = opts.data?.length
    ? opts.data
    : ['o1-generated', 'rautoformalizer-generated'].map((d) => join(shared, 'human_equivalence', d));
  const benchmark = loadBenchmarkStatements(opts.benchmark ?? join(shared, 'proofnet', 'benchmark.jsonl'));
  let items: LabelledItem[] = dirs.flatMap((d) => loadLabelledSet(d, benchmark));
  if (opts.limit !== undefined) items = items.slice(0, opts.limit);
  const rubric = opts.rubric !== undefined ? readFileSync(opts.rubric, 'utf8') : undefined;
  // A judge is the judge role on a provider: the configured one (DRIFTLINE_ROLE_JUDGE), with
  // --model's model; the second judge is --second-model on the same provider, or the judge2 role.
  const judgeWith = (route: { provider: string; model?: string }): JudgeUnderTest => {
    const llm = createConfiguredLlm({ ...cfg, llm: { ...cfg.llm, roles: { ...cfg.llm.roles, judge: route } } });
    return { label: llm.modelFor('judge'), llm };
  };
  const judgeProvider = cfg.llm.roles.judge?.provider ?? 'default';
  const first = opts.model ? { provider: judgeProvider, model: opts.model } : (cfg.llm.roles.judge ?? { provider: judgeProvider });
  const judges = [judgeWith(first)];
  if (opts.secondModel) judges.push(judgeWith({ provider: judgeProvider, model: opts.secondModel }));
  else if (cfg.llm.roles.judge2) judges.push(judgeWith(cfg.llm.roles.judge2));
  const report = await runJudgeEval(items, judges, {
    threshold: opts.threshold,
    ...(rubric !== undefined ? { rubric } : {}),
    concurrency: opts.concurrency,
    seed: opts.seed,
    resamples: opts.resamples,
    ...(onProgress ? { onProgress } : {}),
  });
  if (opts.details) writeFileSync(opts.details, report.verdicts.map((v) => JSON.stringify(v)).join('\n') + '\n');
  if (opts.json) {
    const { verdicts: _omitted, ...summary } = report;
    return JSON.stringify(summary);
  }
  return judgeReportMarkdown(report);
}

export function registerJudgeEvalCommand(group: Command): void {
  group
    .command('judge')
    .description('agreement of the LLM judge with human equivalence labels (and of two judge models with each other)')
    .option(
      '--data <dir...>',
      'labelled sets (autoformalization.json + labels.json); default: both sets in the shared human_equivalence data',
    )
    .option('--benchmark <file>', 'benchmark JSONL with the informal and gold statements (default: the shared ProofNet benchmark)')
    .option('--model <name>', 'judge model (default: DRIFTLINE_MODEL_JUDGE)')
    .option('--second-model <name>', 'a second judge model, for judge-against-judge agreement')
    .option('--threshold <grade>', 'faithful = type-checks and grade ≥ this', grade, 9)
    .option('--rubric <file>', "a file whose text replaces the judge's instructions")
    .option('--concurrency <n>', 'judge calls in flight at once', intAtLeast(1), 4)
    .option('--limit <n>', 'only the first n labelled statements', intAtLeast(1))
    .option('--seed <n>', 'bootstrap seed', intAtLeast(0), 1)
    .option('--resamples <n>', 'bootstrap resamples', intAtLeast(100), 1000)
    .option('--details <file>', 'also write every verdict as JSON lines to this file')
    .option('--json', 'print one JSON object instead of Markdown tables')
    .action(async (opts: EvalJudgeOptions) => {
      const cfg = configOrExit({ skipFileChecks: true });
      let last = 0;
      const progress = (done: number, total: number) => {
        if (opts.json || !process.stderr.isTTY) return;
        if (Date.now() - last < 200 && done < total) return;
        last = Date.now();
        process.stderr.write(`\rjudging ${done}/${total}${done === total ? '\n' : ''}`);
      };
      try {
        process.stdout.write(`${await evalJudge(cfg, opts, progress)}\n`);
      } catch (err) {
        fail(err instanceof LabelDataError ? err.message : (err as Error).message);
      }
    });
}
