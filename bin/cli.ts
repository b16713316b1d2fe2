// The `driftline` command line: start runs, run workers, start the whole stack.
// Only commander (and the run configuration's option table) is imported up front: every command
// loads what it needs when it runs, and a command group's module is loaded only when that group
// is named, so `driftline --help` starts in a fraction of a second (test/integration/cli-build.test.ts checks
// what the compiled entry imports).
import { Option, type Command } from 'commander';
import { addRunConfigOptions } from './run-config-options';
import { exitQuietlyOnClosedPipe } from './closed-pipe';
import { EXIT_HELP } from './exit-codes';
import { SuggestingCommand } from './suggesting-command';

exitQuietlyOnClosedPipe();

const program = new SuggestingCommand();
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
  .addOption(
    new Option(
      '--leave-out <policy>',
      "file: also hide the theorems of the excluded names' source files from analogy votes, the usage prior and examples",
    )
      .choices(['item', 'file'])
      .default('item'),
  )
  .option('--json', 'print the whole result as JSON')
  .addHelpText('after', EXIT_HELP.formalize)
  .action(async (statement: string, opts: Record<string, unknown>) =>
    (await import('./formalize-command')).formalizeCommand(statement, opts),
  );

program
  .command('worker')
  .description('run a worker: the main queue (with a queue per LLM provider), the Lean queue, the LLM queues alone, or all')
  .addOption(new Option('-q, --queue <queue>', 'which task queue').choices(['main', 'lean', 'llm', 'all']).default('all'))
  .action(async (opts: { queue: 'main' | 'lean' | 'llm' | 'all' }) => {
    const [{ runWorkers }, { configOrExit }] = await Promise.all([import('../infra/run-worker'), import('./cli-support')]);
    await runWorkers(configOrExit(), opts.queue);
  });

program
  .command('serve')
  .description('serve the HTTP API and the web page only, against TEMPORAL_ADDRESS (workers run elsewhere)')
  .action(async () => {
    const [{ serveApi }, { configOrExit }] = await Promise.all([import('../infra/serve'), import('./cli-support')]);
    await serveApi(configOrExit());
  });

program
  .command('check')
  .description('check a batch of Lean statements without an LLM: each screened, compiled and, with a gold, checked for equivalence')
  .argument('<file>', 'a JSONL file, one {"id"?, "statement", "gold"?} per line')
  .option('--json', 'print the batch and its results as JSON')
  .addHelpText('after', EXIT_HELP.check)
  .action(async (file: string, opts: { json?: boolean }) => (await import('./check-command')).checkCommand(file, opts));

program
  .command('screen')
  .description(
    'screen a JSONL file of Lean texts offline, as every path to Lean does (no stack needed): which would reach Lean, and why not',
  )
  .argument('<file>', 'a JSONL file, one {"id"?, "statement", "header"?} per line (other fields are ignored)')
  .addOption(
    new Option('--as <kind>', "formalizer: a formalizer's whole text (definitions, then the theorem); gold: a benchmark's gold statement")
      .choices(['formalizer', 'gold'])
      .default('formalizer'),
  )
  .option('--json', 'print one line per input line, in order: {"id", "accepted", "reason"?, "line"?, "column"?}')
  .addHelpText(
    'after',
    '\nPositions are in the refused text (the statement, or the header when the reason says so): lines from 1, columns from 0.' +
      '\nExit status: 0 every line was screened (refusals are results), 1 the file cannot be read or a line is not such an object.',
  )
  .action(async (file: string, opts: { as: 'formalizer' | 'gold'; json?: boolean }) =>
    (await import('./screen-command')).screenCommand(file, opts),
  );

program
  .command('mcp')
  .description('serve the Model Context Protocol over stdio (for AI coding assistants), against TEMPORAL_ADDRESS and the data directory')
  .action(async () => (await import('./mcp-command')).mcpCommand());

program
  .command('setup-temporal')
  .description("register driftline's search attributes on the Temporal cluster at TEMPORAL_ADDRESS (waits for it)")
  .option('--create-namespace', 'register TEMPORAL_NAMESPACE first when the cluster does not know it (a new self-hosted cluster)')
  .action(async (opts: { createNamespace?: boolean }) => {
    const [{ ensureNamespace, registerSearchAttributes }, { configOrExit, fail }, { connectClient }] = await Promise.all([
      import('../infra/temporal-setup'),
      import('./cli-support'),
      import('../infra/connect'),
    ]);
    const cfg = configOrExit({ skipFileChecks: true });
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
    const connection = client.connection as import('@temporalio/client').Connection;
    if (opts.createNamespace && (await ensureNamespace(connection, cfg.temporal.namespace, { log: (m) => process.stderr.write(`${m}\n`) })))
      process.stdout.write(`registered namespace ${cfg.temporal.namespace}\n`);
    const result = await registerSearchAttributes(connection, cfg.temporal.namespace, {
      log: (m) => process.stderr.write(`${m}\n`),
    });
    process.stdout.write(
      `search attributes in namespace ${cfg.temporal.namespace}: added ${result.added.join(', ') || 'none'}; already present ${result.present.join(', ') || 'none'}\n`,
    );
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
    const [{ newApiKey }, { fail }] = await Promise.all([import('../client/api-keys'), import('./cli-support')]);
    if (!/^[A-Za-z0-9_.-]{1,64}$/.test(opts.name)) fail('--name may use letters, digits, ".", "_" and "-" (at most 64)');
    const { key, entry } = newApiKey(opts.name);
    if (opts.json) {
      process.stdout.write(`${JSON.stringify({ name: opts.name, key, entry })}\n`);
      return;
    }
    process.stdout.write(`key:    ${key}\n(shown once: give it to the client; the server keeps only its hash)\n\n`);
    process.stdout.write(`Add to DRIFTLINE_API_KEYS (comma separated):\n${entry}\n`);
  });

// Command groups, loaded only when named on the command line; the top-level help lists them.
// A new group goes here (not as a static import), so the help stays fast.
const GROUPS: { name: string; description: string; register: () => Promise<(program: Command) => void> }[] = [
  {
    name: 'runs',
    description: 'list, show and cancel formalization runs',
    register: async () => (await import('./runs-command')).registerRunsCommands,
  },
  {
    name: 'index',
    description: 'premise indexes: build (durably), list versions, promote, search',
    register: async () => (await import('./index-command')).registerIndexCommands,
  },
  {
    name: 'eval',
    description: 'measure parts of the pipeline against benchmarks',
    register: async () => (await import('./eval-command')).registerEvalCommand,
  },
  {
    name: 'data',
    description: 'fetch the public data sets (benchmarks, the default library) into the data directory',
    register: async () => (await import('./data-command')).registerDataCommands,
  },
  {
    name: 'sweep',
    description: 'benchmark sweeps: a benchmark × configurations × samples, as one durable workflow',
    register: async () => (await import('./sweep-command')).registerSweepCommands,
  },
];

const named = process.argv[2] === 'help' ? process.argv[3] : process.argv[2];
for (const group of GROUPS) {
  if (group.name === named) (await group.register())(program);
  else program.command(group.name).description(group.description);
}

await program.parseAsync(process.argv).catch(async (err: Error) => (await import('./cli-support')).fail(err.message));
