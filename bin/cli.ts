// The `driftline` command line: start runs, run workers, start the whole stack.
import type { Connection } from '@temporalio/client';
import { Command, Option } from 'commander';
import { configOrExit as config, fail } from './cli-support';
import { connectClient, temporalAddress } from '../infra/connect';
import { getFormalization, startFormalization } from '../api/runs';
import type { FormalizeResult, Stage } from '../common/types';
import { addRunConfigOptions, runConfigFromOptions } from './run-config-options';
import { agentConfigProblem } from '../common/run-config';
import { registerEvalCommand } from './eval-command';
import { registerIndexCommands } from './index-command';
import { registerSweepCommands } from './sweep-command';

const STAGE_LABELS: Record<Stage, string> = {
  starting: 'starting',
  decompose: 'decompose: splitting the statement into atomic concepts',
  retrieve: 'retrieve: finding library premises',
  illustrate: 'illustrate: choosing example theorems',
  formalize: 'formalize: writing the Lean statement',
  compile: 'compile: checking with Lean',
  repair: 'repair: rewriting from the compiler messages',
  judge: 'judge: grading faithfulness',
  agent: 'agent: the model calls tools step by step',
  done: 'done',
};

function printResult(result: FormalizeResult): void {
  const out = process.stdout;
  out.write('\n');
  out.write(`${result.formalStatement}\n\n`);
  const compiled = !result.checked ? 'not checked (no Lean REPL configured)' : result.compiled ? 'yes' : 'no';
  out.write(`compiled:  ${compiled}  (${result.attempts.length} attempt${result.attempts.length === 1 ? '' : 's'})\n`);
  if (result.judge) {
    out.write(`judge:     ${result.judge.grade}/10, ${result.judge.faithful ? 'faithful' : 'not faithful'}\n`);
    out.write(`           ${result.judge.explanation}\n`);
  }
  if (result.equivalence) {
    const e = result.equivalence;
    out.write(`gold:      ${e.equivalent ? 'equivalent (Lean proved both directions)' : `not shown equivalent${e.reason ? `: ${e.reason}` : ''}`}\n`);
  }
  if (result.agent) {
    const a = result.agent;
    out.write(`agent:     ${a.ending}${a.budget ? ` (${a.budget})` : ''} after ${a.steps} step${a.steps === 1 ? '' : 's'}, ${a.tokens.total} tokens\n`);
    for (const s of result.steps ?? []) {
      out.write(`  ${String(s.step).padStart(2)}. ${s.tool ?? 'answer'}${s.error ? ' (error)' : ''}${s.accepted === false ? ' (refused)' : ''}: ${s.output.slice(0, 100)}\n`);
    }
  }
  out.write(`premises:  ${result.premises.map((p) => p.name).join(', ') || '(none)'}\n`);
  out.write(`examples:  ${result.examples.map((e) => e.name).join(', ') || '(none)'}\n`);
  for (const note of result.notes) out.write(`note:      ${note}\n`);
}

const POLL_DEADLINE_MS = 5000;

function lostTemporalMessage(id: string, address: string, apiUrl: string, err: unknown): string {
  const cause = err instanceof Error ? err.message : String(err);
  return (
    `lost contact with Temporal at ${address} while run ${id} was in progress (${cause}). ` +
    `The run is not lost: Temporal keeps it, and it goes on once Temporal and the workers are back (npm start). ` +
    `Then follow it with: curl ${apiUrl}/v1/formalizations/${id} (or find workflow ${id} in the Temporal UI).`
  );
}

async function formalizeCommand(statement: string, opts: Record<string, unknown>): Promise<void> {
  const cfg = config();
  const library = (opts.library as string | undefined) ?? cfg.libraries[0]!.name;
  if (!cfg.libraries.some((l) => l.name === library)) {
    fail(`unknown library "${library}"; known: ${cfg.libraries.map((l) => l.name).join(', ')}`);
  }
  if (!statement.trim()) fail('the statement is empty');
  const runConfig = runConfigFromOptions(opts);
  const agentProblem = agentConfigProblem(runConfig);
  if (agentProblem) fail(agentProblem.replace(/"tools"/g, '--tools').replace(/"maxSteps"/g, '--max-steps'));
  if (runConfig.retrieval === 'oracle' && !opts.goldPremises) fail('--retrieval oracle needs --gold-premises NAME,NAME,…');
  const client = await connectClient(cfg).catch((err: Error) => fail(err.message));
  const list = (value: unknown) => (typeof value === 'string' ? value.split(',').map((n) => n.trim()).filter(Boolean) : undefined);
  const goldPremises = list(opts.goldPremises);
  const id = await startFormalization(client, {
    statement,
    library,
    config: runConfig,
    exclude: list(opts.exclude),
    ...(opts.leaveOut === 'file' ? { leaveOut: 'file' as const } : {}),
    goldPremises,
    goldStatement: opts.goldStatement as string | undefined,
    llm: { timeoutMs: cfg.llm.timeoutMs, maxReasks: cfg.llm.maxReasks },
  });
  const json = Boolean(opts.json);
  if (!json) process.stderr.write(`run ${id} (library ${library})\n`);
  // Stages are printed from the run's own log of finished stages, so none is missed however
  // fast it goes; the one in progress is printed as it starts.
  let printed = 0;
  let repairs = 0;
  const show = (stages: Stage[]) => {
    for (const stage of stages.slice(printed)) {
      if (stage === 'repair') repairs++;
      const round = stage === 'repair' ? ` (round ${repairs})` : '';
      if (!json) process.stderr.write(`  • ${STAGE_LABELS[stage]}${round}\n`);
    }
    printed = Math.max(printed, stages.length);
  };
  // Temporal may restart under us (npm start restarting, a network blip): keep asking for a
  // while, then say which run it was and how to find it again, rather than a bare RPC error.
  let lostSince: number | undefined;
  for (;;) {
    let view: Awaited<ReturnType<typeof getFormalization>>;
    try {
      // A time limit per look: the client alone retries a vanished server for ~40 s.
      let timer: NodeJS.Timeout | undefined;
      view = await Promise.race([
        getFormalization(client, id),
        new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${POLL_DEADLINE_MS} ms`)), POLL_DEADLINE_MS))),
      ]).finally(() => clearTimeout(timer));
      lostSince = undefined;
    } catch (err) {
      lostSince ??= Date.now();
      if (Date.now() - lostSince < cfg.temporal.clientGraceMs) {
        await new Promise((r) => setTimeout(r, 1000));
        continue;
      }
      fail(lostTemporalMessage(id, temporalAddress(cfg), `http://${cfg.api.host}:${cfg.api.port}`, err));
    }
    if (!view) fail(`run ${id} disappeared`);
    if (view.status === 'completed') show(view.result!.stages.filter((s) => s !== 'done'));
    else if (view.progress) show([...view.progress.completed, ...(view.progress.stage === 'starting' ? [] : [view.progress.stage])]);
    if (view.status === 'completed') {
      if (json) process.stdout.write(`${JSON.stringify({ id, ...view.result }, null, 2)}\n`);
      else printResult(view.result!);
      // Exit rather than close the connection: a look that lost its race (a progress query no
      // worker answered, a slow describe) may still be retrying, and a retry on a closed channel
      // throws. Writes to a pipe, file or terminal are synchronous here, so nothing is lost.
      process.exit(0);
    }
    if (view.status === 'failed') fail(`run ${id} failed: ${view.error}`);
    await new Promise((r) => setTimeout(r, 400));
  }
}

const program = new Command();
program.name('driftline').description('Informal mathematics to Lean 4 statements, as durable Temporal runs (DRIFT).');

const formalize = program
  .command('formalize')
  .description('formalize one statement and print the Lean statement and the verdict')
  .argument('<statement>', 'the informal statement')
  .option('-l, --library <name>', 'library to retrieve from (default: the first configured)');
// The run configuration's options come from its one schema (common/run-config-schema.ts).
addRunConfigOptions(formalize)
  .option('--gold-premises <names>', 'comma-separated full names: the premises for --retrieval oracle')
  .option('--gold-statement <lean>', 'a reference Lean statement: Lean checks equivalence with it')
  .option('--exclude <names>', 'comma-separated full names never to retrieve or show (the item under evaluation)')
  .addOption(new Option('--leave-out <policy>', "file: also hide the theorems of the excluded names' source files from analogy votes, the usage prior and examples").choices(['item', 'file']).default('item'))
  .option('--json', 'print the whole result as JSON')
  .action(formalizeCommand);

program
  .command('worker')
  .description('run a worker: the main queue, the Lean queue, or both')
  .addOption(new Option('-q, --queue <queue>', 'which task queue').choices(['main', 'lean', 'all']).default('all'))
  .action(async (opts: { queue: 'main' | 'lean' | 'all' }) => {
    const { runWorkers } = await import('../infra/run-worker');
    await runWorkers(config(), opts.queue);
  });

program
  .command('serve')
  .description('serve the HTTP API and the web page only, against TEMPORAL_ADDRESS (workers run elsewhere)')
  .action(async () => {
    const { serveApi } = await import('../infra/serve');
    await serveApi(config());
  });

program
  .command('setup-temporal')
  .description("register driftline's search attributes on the Temporal cluster at TEMPORAL_ADDRESS (waits for it)")
  .action(async () => {
    const { registerSearchAttributes } = await import('../infra/temporal-setup');
    const cfg = config({ skipFileChecks: true });
    // Temporal may still be starting: keep trying to connect until it answers.
    let client;
    for (let attempt = 0; ; attempt++) {
      try {
        client = await connectClient(cfg);
        break;
      } catch (err) {
        if (attempt >= 60) fail((err as Error).message);
        await new Promise((r) => setTimeout(r, 2000));
      }
    }
    const result = await registerSearchAttributes(client.connection as Connection, cfg.temporal.namespace, { log: (m) => process.stderr.write(`${m}\n`) });
    process.stdout.write(`search attributes in namespace ${cfg.temporal.namespace}: added ${result.added.join(', ') || 'none'}; already present ${result.present.join(', ') || 'none'}\n`);
    await client.connection.close();
  });

program
  .command('start')
  .description('start the whole stack on this machine (same as `npm start`)')
  .action(async () => {
    const { startStack } = await import('../infra/start');
    await startStack();
  });

program
  .command('keys')
  .description('API keys')
  .command('new')
  .description('make a new API key; prints the key once, and the DRIFTLINE_API_KEYS entry (its hash) to configure')
  .requiredOption('--name <name>', 'who or what the key is for (letters, digits, ".", "_", "-")')
  .option('--json', 'print {name, key, entry} as JSON')
  .action(async (opts: { name: string; json?: boolean }) => {
    const { newApiKey } = await import('../api/api-keys');
    if (!/^[A-Za-z0-9_.-]{1,64}$/.test(opts.name)) fail('--name may use letters, digits, ".", "_" and "-" (at most 64)');
    const { key, entry } = newApiKey(opts.name);
    if (opts.json) {
      process.stdout.write(`${JSON.stringify({ name: opts.name, key, entry })}\n`);
      return;
    }
    process.stdout.write(`key:    ${key}\n(shown once: give it to the client; the server keeps only its hash)\n\n`);
    process.stdout.write(`Add to DRIFTLINE_API_KEYS (comma separated):\n${entry}\n`);
  });

registerIndexCommands(program);

registerEvalCommand(program);

registerSweepCommands(program);

await program.parseAsync(process.argv).catch((err: Error) => fail(err.message));
