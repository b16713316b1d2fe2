// `driftline sweep …`: start a benchmark sweep from a sweep file, watch it (a live progress bar
// with rate and ETA), pause, resume or cancel it, list sweeps, export its runs, write its report.
import { sweepBatchCounts } from '../engines/results/llm-batches';
import { sentBatches } from '../common/llm-batch';
import { createWriteStream } from 'node:fs';
import type { Command } from 'commander';
import { InvalidArgumentError, Option } from 'commander';
import cliProgress from 'cli-progress';
import type { Client } from '@temporalio/client';
import { configOrExit as loadCfg, fail, stackLibraries, stackProviderNames } from './cli-support';
import { servesBatchMode } from '../client/stack-providers';
import { connectClient } from '../infra/connect';
import { openResults } from '../infra/results';
import { createIndexStore } from '../infra/deps';
import { publicDataDir, runLlmSettings, temporalUiUrl, type Config } from '../infra/config';
import { sweepReportInput } from '../client/sweep-report';
import { renderPaperTables, writeSweepReport } from '../engines/report/write-report';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { getSweepProgress, signalSweep, startSweep, SweepEndedError, SweepRequestError } from '../client/sweeps';
import { prepareSweep, sweepStartProblem } from '../client/sweep-prepare';
import { retrySweep, SweepRetryError } from '../client/sweep-retry';
import { readSweepFile, type SweepSpec } from '../engines/sweeps/sweep-file';
import type { ResultsDb } from '../engines/results/results-db';
import { toCsv, toJsonl } from '../engines/results/export';
import { configRate, type SweepCounts, type SweepProgress } from '../common/sweep';
import { formatRate } from '../common/sweep-rate';
import { registerRescoreCommand } from './sweep-rescore-command';
import { printedJsonOrExisting } from './sweep-started-output';
import { EXIT, EXIT_HELP, sweepStatusExitCode } from './exit-codes';
import { quotaSection, quotaSnapshots } from '../infra/llm-quota';
import { sweepBatchesLines } from '../common/sweep-batches-text';

const FINAL = new Set(['completed', 'cancelled', 'failed', 'budget-exhausted']);

function positive(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('expected a whole number ≥ 1');
  return n;
}

/** Runs `fn` with the results database and a Temporal client, closing both afterwards. */
async function withServices<T>(
  fn: (cfg: Config, db: ResultsDb, client: Client) => Promise<T>,
  opts: { temporal?: boolean } = {},
): Promise<T> {
  const cfg = loadCfg({ skipFileChecks: true });
  const db = await openResults(cfg).catch((err: Error) => fail(err.message));
  let client: Client | undefined;
  try {
    if (opts.temporal !== false) client = await connectClient(cfg).catch((err: Error) => fail(err.message));
    return await fn(cfg, db, client!);
  } finally {
    await client?.connection.close();
    await db.close();
  }
}

export function formatDuration(seconds: number | null): string {
  if (seconds === null || !Number.isFinite(seconds)) return '--:--';
  const s = Math.round(seconds);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${sec}` : `${m}:${sec}`;
}

async function startCommand(
  file: string,
  opts: { id?: string; reuse?: string; json?: boolean; historyLimit?: number; batch?: boolean },
): Promise<void> {
  const cfg = loadCfg({ skipFileChecks: true });
  let spec: SweepSpec;
  try {
    spec = await readSweepFile(file, { dataDir: publicDataDir(cfg) });
  } catch (err) {
    fail((err as Error).message);
  }
  // --batch: as the file's `llm: {batch: true}`.
  if (opts.batch) spec.llm = { ...spec.llm, batch: true };
  await withServices(async (_cfg, db, client) => {
    // The rules every door applies (client/sweep-prepare.ts), on the stack's libraries and LLM providers.
    const asked = spec.configurations.flatMap((c) => Object.values(c.config.providers ?? {}));
    const providerNames = await stackProviderNames(cfg, client, asked);
    const problem = sweepStartProblem(spec, {
      libraries: stackLibraries(cfg).libraries,
      providerNames,
      ...(spec.llm?.batch ? { batchMode: await servesBatchMode(client) } : {}),
    });
    if (problem) fail(`${file}: ${problem}`);
    // Every record and predictions line is checked before anything starts: a bad line stops
    // here, naming file and line.
    const prepared = await prepareSweep(spec, {
      benchmarks: spec.benchmarks,
      currentIndexVersion: (library) => createIndexStore(cfg).getAlias(library),
    }).catch((err: Error) => fail(`${err instanceof SweepRequestError ? `${file}: ` : ''}${err.message}`));
    for (const note of prepared.notes) process.stderr.write(`note: ${note}\n`);
    const { items, predictions } = prepared;
    let started;
    try {
      started = await startSweep(client, db, spec, items, {
        ...(opts.id ? { id: opts.id } : {}),
        ...(opts.reuse ? { reuse: opts.reuse } : {}),
        ...(prepared.currentIndexVersion ? { currentIndexVersion: prepared.currentIndexVersion } : {}),
        ...(opts.historyLimit ? { historyLimit: opts.historyLimit } : {}),
        llm: runLlmSettings(cfg),
        predictions,
      });
    } catch (err) {
      if (err instanceof SweepRequestError) fail(err.message);
      throw err;
    }
    const differs = (fields: string) =>
      `${file} differs from sweep ${started.id}'s file in ${fields}; the existing sweep is unchanged (choose another --id for a new one)`;
    if (printedJsonOrExisting(started, opts.json, differs)) return;
    const reused = started.reused.length ? `; re-used from ${opts.reuse}: ${started.reused.join(', ')}` : '';
    process.stdout.write(
      `sweep ${started.id} started: ${items.length} items × ${started.cells.length} configurations × ${spec.samples} samples = ${started.total} runs${reused}\n` +
        `watch it: driftline sweep status ${started.id}\n`,
    );
  });
}

async function retryCommand(id: string, opts: { json?: boolean; historyLimit?: number }): Promise<void> {
  await withServices(async (_cfg, db, client) => {
    let retried;
    try {
      retried = await retrySweep(client, db, id, opts.historyLimit ? { historyLimit: opts.historyLimit } : {});
    } catch (err) {
      if (err instanceof SweepRetryError) fail(err.message);
      throw err;
    }
    if (opts.json) {
      process.stdout.write(`${JSON.stringify(retried)}\n`);
      return;
    }
    if (retried.retried === 0) {
      process.stdout.write(`sweep ${id}: no failed runs; nothing to retry, nothing started\n`);
      return;
    }
    const per = Object.entries(retried.perConfig)
      .map(([name, n]) => `${name} ${n}`)
      .join(', ');
    process.stdout.write(
      `sweep ${id}: retry ${retried.round} started: ${retried.retried} failed run${retried.retried === 1 ? '' : 's'} of ${retried.total} started again (${per})\n` +
        `watch it: driftline sweep status ${id}\n`,
    );
  });
}

async function statusCommand(id: string, opts: { json?: boolean; watch?: boolean }): Promise<void> {
  await withServices(async (cfg, db, client) => {
    // Each LLM provider's quota over the last minute, for the whole deployment (additive to the
    // sweep's own lines: infra/llm-quota.ts).
    const quota = () => quotaSnapshots(cfg, db).catch(() => []);
    // The sweep's provider batches (batch mode; all zero otherwise); a status is still shown
    // when they cannot be read.
    const batches = () => sweepBatchCounts(db.driver, id).catch(() => undefined);
    // Under the sweep's own lines: its batches (when it sent any), then the providers' quota.
    const writeSections = async () => {
      const b = await batches();
      const lines = sweepBatchesLines(b && sentBatches(b) ? b : undefined);
      process.stdout.write(`${lines.map((l) => `  ${l}\n`).join('')}${quotaSection(await quota())}`);
    };
    const read = async () => {
      const p = await getSweepProgress(client, db, id);
      if (!p) fail(`no sweep "${id}" (not in Temporal, not in the results database)`);
      return p;
    };
    if (opts.json) {
      const p = await read();
      process.stdout.write(`${JSON.stringify({ ...p, llmQuota: await quota(), batches: (await batches()) ?? null })}\n`);
      process.exitCode = sweepStatusExitCode(p);
      return;
    }
    let p = await read();
    if (!opts.watch || FINAL.has(p.status)) {
      process.stdout.write(describe(p));
      await writeSections();
      process.exitCode = sweepStatusExitCode(p);
      return;
    }
    if (!process.stdout.isTTY) {
      // Into a file or a pipe: one line whenever something changed, no redrawing.
      let last = '';
      for (;;) {
        const line = `${new Date().toISOString()} ${summaryLine(p)}`;
        const key = summaryLine({ ...p, rate: 0, etaSeconds: null });
        if (key !== last) process.stdout.write(`${line}\n`);
        last = key;
        if (FINAL.has(p.status)) break;
        await new Promise((r) => setTimeout(r, 1000));
        p = await read();
      }
      process.stdout.write(describe(p));
      await writeSections();
      process.exitCode = sweepStatusExitCode(p);
      return;
    }
    // On a terminal: a live bar per configuration and one for the whole sweep, redrawn.
    const bars = new cliProgress.MultiBar(
      {
        format: ' {name} {bar} {percentage}% | {value}/{total} | failed {failed} | {running} running | {rate} | ETA {eta_text}',
        hideCursor: true,
        clearOnComplete: false,
        stopOnComplete: false,
      },
      cliProgress.Presets.shades_classic,
    );
    const width = Math.max(5, ...Object.keys(p.perConfig).map((n) => n.length));
    const pad = (s: string) => s.padEnd(width);
    const fields = (q: SweepProgress, c?: SweepCounts) => {
      const { rate, etaSeconds } = c ? configRate(q, c) : q;
      return {
        failed: (c ?? q).failed,
        running: (c ?? q).running,
        rate: formatRate(rate),
        eta_text: q.status === 'paused' ? 'paused' : formatDuration(etaSeconds),
      };
    };
    const total = bars.create(p.total, p.done, { name: pad('all'), ...fields(p) });
    const per = new Map(
      Object.entries(p.perConfig).map(([name, c]) => [name, bars.create(c.total, c.done, { name: pad(name), ...fields(p, c) })]),
    );
    const stop = () => {
      bars.stop();
      process.exit(EXIT.interrupted);
    };
    process.once('SIGINT', stop);
    while (!FINAL.has(p.status)) {
      await new Promise((r) => setTimeout(r, 1000));
      p = await read();
      total.update(p.done, fields(p));
      for (const [name, c] of Object.entries(p.perConfig)) per.get(name)?.update(c.done, fields(p, c));
    }
    bars.stop();
    process.removeListener('SIGINT', stop);
    process.stdout.write(describe(p));
    await writeSections();
    process.exitCode = sweepStatusExitCode(p);
  });
}

/** The sweep's rate (common/sweep-rate.ts); a closed sweep read from the database has none. */
function rateText(p: SweepProgress): string {
  return p.done > 0 && p.rate === 0 ? 'rate unknown' : formatRate(p.rate);
}

function summaryLine(p: SweepProgress): string {
  const retried = p.retried !== undefined ? `, ${p.retried} retried` : '';
  return `sweep ${p.sweepId}: ${p.status}, ${p.done}/${p.total} runs done, ${p.failed} failed${retried}, ${p.running} running, ${rateText(p)}, ETA ${formatDuration(p.etaSeconds)}`;
}

/** The sweep's LLM budget in words: what was used of it, and why no more runs start. */
function budgetText(p: SweepProgress): string {
  const b = p.budget!;
  const limits = [
    b.tokens !== undefined ? `${b.used.tokens} of ${b.tokens} tokens` : '',
    b.costUsd !== undefined ? `$${(b.used.costUsd ?? 0).toFixed(4)} of $${b.costUsd}` : '',
  ]
    .filter(Boolean)
    .join(', ');
  return b.reached ? `${b.reached}; no more runs were started (${p.total - p.done} not run)` : `${limits} used`;
}

function describe(p: SweepProgress): string {
  const lines = [summaryLine(p)];
  for (const [name, c] of Object.entries(p.perConfig)) {
    const { rate, etaSeconds } = configRate(p, c);
    lines.push(
      `  ${name}: ${c.done}/${c.total} done, ${c.failed} failed${c.retried !== undefined ? `, ${c.retried} retried` : ''}, ${c.running} running, ${p.done > 0 && p.rate === 0 ? 'rate unknown' : formatRate(rate)}, ETA ${formatDuration(etaSeconds)}`,
    );
  }
  if (p.budget) lines.push(`  budget: ${budgetText(p)}`);
  return `${lines.join('\n')}\n`;
}

async function signalCommand(id: string, signal: 'pause' | 'resume' | 'cancel'): Promise<void> {
  await withServices(async (_cfg, db, client) => {
    const p = await getSweepProgress(client, db, id);
    if (!p) fail(`no sweep "${id}"`);
    if (FINAL.has(p.status)) fail(`sweep ${id} is ${p.status}; it cannot ${signal}`);
    try {
      await signalSweep(client, id, signal);
    } catch (err) {
      if (err instanceof SweepEndedError) fail(err.message);
      throw err;
    }
    process.stdout.write(`sweep ${id}: ${signal} sent\n`);
  });
}

async function listCommand(opts: { json?: boolean }): Promise<void> {
  await withServices(async (_cfg, db, client) => {
    const sweeps = await db.listSweeps();
    const rows = [];
    for (const s of sweeps) {
      const p = await getSweepProgress(client, db, s.id).catch(() => null);
      rows.push({
        id: s.id,
        status: p?.status ?? 'unknown',
        done: p?.done ?? 0,
        failed: p?.failed ?? 0,
        total: s.items * s.cells.length * s.samples,
        library: s.library,
        createdAt: s.createdAt,
        ...(s.rescoreOf ? { rescoreOf: s.rescoreOf } : {}),
      });
    }
    if (opts.json) {
      process.stdout.write(`${JSON.stringify(rows)}\n`);
      return;
    }
    if (rows.length === 0) {
      process.stdout.write('no sweeps yet: driftline sweep start FILE\n');
      return;
    }
    for (const r of rows)
      process.stdout.write(
        `${r.id}  ${r.status.padEnd(9)}  ${r.done}/${r.total} done, ${r.failed} failed  ${r.library}  ${r.createdAt}${r.rescoreOf ? `  (rescore of ${r.rescoreOf})` : ''}\n`,
      );
  });
}

async function exportCommand(id: string, opts: { format: 'jsonl' | 'csv'; out?: string }): Promise<void> {
  await withServices(
    async (_cfg, db) => {
      if (!(await db.getSweep(id))) fail(`no sweep "${id}" in the results database`);
      const runs = await db.runs(id);
      const text = opts.format === 'csv' ? toCsv(runs) : toJsonl(runs);
      if (!opts.out) {
        process.stdout.write(text);
        return;
      }
      await new Promise<void>((resolve, reject) =>
        createWriteStream(opts.out!)
          .end(text, () => resolve())
          .on('error', reject),
      );
      process.stderr.write(`${runs.length} runs written to ${opts.out}\n`);
    },
    { temporal: false },
  );
}

async function reportCommand(id: string, opts: { out?: string; format: 'html' | 'latex' | 'md'; baseline?: string }): Promise<void> {
  await withServices(async (cfg, db, client) => {
    // The status is shown on the report; a sweep whose Temporal history is gone still reports.
    const progress = await getSweepProgress(client, db, id).catch(() => null);
    const status = progress?.budget?.reached ? `${progress.status}: ${budgetText(progress)}` : progress?.status;
    const input = await sweepReportInput(db, id, { status, temporalUi: { base: temporalUiUrl(cfg), namespace: cfg.temporal.namespace } });
    if (!input) fail(`no sweep "${id}" in the results database`);
    if (input.records.length === 0) fail(`sweep ${id} has no finished runs yet; nothing to report`);
    if (opts.format !== 'html') {
      // The paper's tables: to stdout, or DIR/tables.tex (tables.md) with --out.
      let text: string;
      try {
        text = renderPaperTables(input, opts.format, opts.baseline);
      } catch (err) {
        fail((err as Error).message);
      }
      if (!opts.out) {
        process.stdout.write(text);
        return;
      }
      await mkdir(opts.out, { recursive: true });
      const path = join(opts.out, opts.format === 'latex' ? 'tables.tex' : 'tables.md');
      await writeFile(path, text);
      process.stdout.write(`tables of sweep ${id}: ${path}\n`);
      return;
    }
    if (!opts.out) fail('the HTML report is a directory of files: give --out DIR (or --format latex|md for the tables alone)');
    const { files } = await writeSweepReport(opts.out, input);
    process.stdout.write(
      `report of sweep ${id} (${input.records.length} runs${progress && progress.status !== 'completed' ? `, sweep ${progress.status}` : ''}):\n${files.map((f) => `  ${f}`).join('\n')}\n`,
    );
  });
}

export function registerSweepCommands(program: Command): void {
  const sweep = program
    .command('sweep')
    .description('benchmark sweeps: a benchmark × configurations × samples, as one durable workflow')
    .addHelpText('after', `${EXIT_HELP.sweep} \`sweep status\` says more: driftline sweep status --help.`);
  sweep
    .command('start')
    .description('start a sweep from a sweep file (YAML or JSON); returns once it is started')
    .argument('<file>', 'the sweep file')
    .option('--id <id>', 'the sweep ID (default: the file\'s "id", else sweep-<time>-<random>); an existing ID answers with that sweep')
    .option('--reuse <sweep>', 're-use finished cells of an earlier sweep with the same configuration hash, items and index version')
    .option('--json', 'print {id, existing, total, cells, reused} as JSON')
    .option(
      '--batch',
      "batch mode, as the file's `llm: {batch: true}`: LLM calls to batch-capable providers (DRIFTLINE_LLM_BATCH) go in provider batches, at the batch price, answered within hours",
    )
    .addOption(new Option('--history-limit <events>', 'continue as new past this many history events').argParser(positive).hideHelp())
    .action(startCommand);
  registerRescoreCommand(sweep);
  sweep
    .command('status')
    .description("print a sweep's progress once (per configuration: done, failed, running, rate, ETA); --watch follows it to its end")
    .argument('<id>')
    .option('--json', 'print one JSON object (status, total, done, failed, running, perConfig, rate, etaSeconds) and exit')
    .option('--watch', 'follow the sweep until it ends: live bars on a terminal, one line per change otherwise')
    .addOption(new Option('--once', 'the default: print the progress once').hideHelp())
    .addHelpText('after', EXIT_HELP.sweepStatus)
    .action((id: string, o: { json?: boolean; watch?: boolean }) => statusCommand(id, o));
  sweep
    .command('retry')
    .description(
      'start the failed runs of an ended sweep again (errors, not unfaithful outcomes), each under its own ID, its record replacing the failed one; returns once started',
    )
    .argument('<id>')
    .option('--json', 'print {id, round, retried, perConfig, total} as JSON')
    .addOption(new Option('--history-limit <events>', 'continue as new past this many history events').argParser(positive).hideHelp())
    .action(retryCommand);
  for (const signal of ['pause', 'resume', 'cancel'] as const) {
    const what = {
      pause: 'stop starting new runs (running ones finish)',
      resume: 'start runs again after a pause',
      cancel: 'stop the sweep: no new runs, running ones are cancelled',
    }[signal];
    sweep
      .command(signal)
      .description(what)
      .argument('<id>')
      .action((id: string) => signalCommand(id, signal));
  }
  sweep
    .command('list')
    .description('list sweeps in the results database with their status')
    .option('--json', 'print JSON')
    .action(listCommand);
  sweep
    .command('export')
    .description('print every finished run of a sweep: one JSON object per line, or CSV')
    .argument('<id>')
    .addOption(new Option('--format <format>', 'output format').choices(['jsonl', 'csv']).default('jsonl'))
    .option('-o, --out <file>', 'write to a file instead of standard output')
    .action(exportCommand);
  sweep
    .command('report')
    .description(
      "write the sweep's report (DIR/index.html, Markdown, CSV, JSON, LaTeX tables), or with --format latex|md the paper's tables alone",
    )
    .argument('<id>')
    .option('--out <dir>', 'directory to write the report (or the tables) into')
    .addOption(
      new Option('--format <format>', "html: the whole report; latex or md: the paper's tables (to stdout without --out)")
        .choices(['html', 'latex', 'md'])
        .default('html'),
    )
    .option('--baseline <config>', 'the configuration the ablation table compares against (default: the first)')
    .action(reportCommand);
}
