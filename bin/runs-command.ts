// `driftline runs list|show|cancel`: the runs Temporal knows, one run, canceling one.
import { Command, InvalidArgumentError, Option } from 'commander';
import { configOrExit as config, fail } from './cli-support';
import { connectClient } from '../infra/connect';
import { temporalUiUrl, type Config } from '../infra/config';
import {
  cancelFormalization,
  getFormalization,
  listFormalizations,
  RunClosedError,
  RunNotFoundError,
  temporalUiLink,
  type ListFilter,
} from '../client/runs';
import type { Client } from '@temporalio/client';
import { printRunTable, printRunView } from './run-output';
import { OUTCOMES } from '../common/outcomes';

function limit(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 200) throw new InvalidArgumentError('expected a whole number from 1 to 200');
  return n;
}

/** Runs `fn` with a client and closes the connection once every call is done. */
async function withClient<T>(fn: (client: Client, cfg: Config) => Promise<T>): Promise<T> {
  const cfg = config({ skipFileChecks: true });
  const client = await connectClient(cfg).catch((err: Error) => fail(err.message));
  let failure: Error | undefined;
  let result: T | undefined;
  try {
    result = await fn(client, cfg);
  } catch (err) {
    failure = err as Error;
  } finally {
    await client.connection.close().catch(() => undefined);
  }
  if (failure) fail(failure.message);
  return result as T;
}

const link = (cfg: Config, id: string) => temporalUiLink(temporalUiUrl(cfg), cfg.temporal.namespace, id);

export function registerRunsCommands(program: Command): void {
  const runs = program.command('runs').description('list, show and cancel formalization runs');

  runs
    .command('list')
    .description("runs from Temporal's visibility store, newest first")
    .addOption(new Option('--status <status>', 'only runs with this status').choices(['running', 'completed', 'failed', 'canceled']))
    .addOption(new Option('--outcome <outcome>', 'only runs with this outcome').choices([...OUTCOMES]))
    .option('--library <name>', 'only runs on this library')
    .option('--sweep <id>', 'only runs of this sweep')
    .option('-n, --limit <n>', 'runs per page (1-200)', limit, 20)
    .option('--page-token <token>', 'the next page, as printed by the previous one')
    .option('--json', 'print {items, nextPageToken} as JSON')
    .action(
      async (opts: {
        status?: ListFilter['status'];
        outcome?: string;
        library?: string;
        sweep?: string;
        limit: number;
        pageToken?: string;
        json?: boolean;
      }) => {
        await withClient(async (client, cfg) => {
          const page = await listFormalizations(client, {
            status: opts.status,
            outcome: opts.outcome,
            library: opts.library,
            sweep: opts.sweep,
            limit: opts.limit,
            pageToken: opts.pageToken,
          });
          if (opts.json) {
            const items = page.items.map((item) => ({ ...item, links: { temporalUi: link(cfg, item.id) } }));
            process.stdout.write(`${JSON.stringify({ ...page, items }, null, 2)}\n`);
            return;
          }
          printRunTable(page.items);
          if (page.nextPageToken)
            process.stdout.write(
              `\nmore: driftline runs list --page-token ${page.nextPageToken}${opts.status ? ` --status ${opts.status}` : ''}\n`,
            );
          process.stdout.write(`Temporal UI: ${temporalUiUrl(cfg)}/namespaces/${encodeURIComponent(cfg.temporal.namespace)}/workflows\n`);
        });
      },
    );

  runs
    .command('show')
    .description('one run: status, progress, result and its page in the Temporal UI')
    .argument('<id>', 'the run id')
    .option('--json', 'print the run as JSON')
    .action(async (id: string, opts: { json?: boolean }) => {
      await withClient(async (client, cfg) => {
        const view = await getFormalization(client, id);
        if (!view) throw new Error(`no run with id "${id}"`);
        if (opts.json) process.stdout.write(`${JSON.stringify({ ...view, links: { temporalUi: link(cfg, id) } }, null, 2)}\n`);
        else printRunView(view, link(cfg, id));
      });
    });

  runs
    .command('cancel')
    .description('cancel a running run (it ends as canceled)')
    .argument('<id>', 'the run id')
    .option('--json', 'print {id, status} as JSON')
    .action(async (id: string, opts: { json?: boolean }) => {
      await withClient(async (client, cfg) => {
        try {
          await cancelFormalization(client, id);
        } catch (err) {
          if (err instanceof RunNotFoundError || err instanceof RunClosedError) throw new Error(err.message);
          throw err;
        }
        if (opts.json) process.stdout.write(`${JSON.stringify({ id, status: 'canceling', links: { temporalUi: link(cfg, id) } })}\n`);
        else process.stdout.write(`canceling ${id}\nui:        ${link(cfg, id)}\n`);
      });
    });
}
