// `driftline formalize`: start a run, follow its events (one long poll of the run's history at a
// time, no query polling), print the result. Its exit status: bin/exit-codes.ts (0 compiled or
// no Lean to check it, 1 the run failed, 2 Lean rejected it, 3 the screen refused it).
import { configOrExit as config, fail, stackLibraries, stackProviderNames } from './cli-support';
import { connectClient, temporalAddress } from '../infra/connect';
import { runLlmSettings, temporalUiUrl } from '../infra/config';
import { followRunToEnd, TemporalLostError } from '../client/follow-run';
import { startFormalization, temporalUiLink } from '../client/runs';
import { startRequestProblem } from '../client/start-request';
import { printResult, stagePrinter } from './run-output';
import { runConfigFromOptions } from './run-config-options';
import { formalizeExitCode } from './exit-codes';

/** One long poll's limit: Temporal answers within ~20 s when nothing happens; a server that
 * went away is noticed after this, not after the client's own retries of a dead address. */
const POLL_TIMEOUT_MS = 10_000;

function lostTemporalMessage(id: string, address: string, apiUrl: string, err: unknown): string {
  const cause = err instanceof Error ? err.message : String(err);
  return (
    `lost contact with Temporal at ${address} while run ${id} was in progress (${cause}). ` +
    `The run is not lost: Temporal keeps it, and it goes on once Temporal and the workers are back (npm start). ` +
    `Then follow it with: curl ${apiUrl}/v1/formalizations/${id} (or find workflow ${id} in the Temporal UI).`
  );
}

/** A start rule's message with the request's field names as this command's flags. */
function inFlagWords(message: string): string {
  return message
    .replace('retrieval "oracle" needs "goldPremises"', '--retrieval oracle needs --gold-premises NAME,NAME,…')
    .replace(/"providers\.(\w+)"/, '--providers $1')
    .replace(/"tools"/g, '--tools')
    .replace(/"maxSteps"/g, '--max-steps');
}

export async function formalizeCommand(statement: string, opts: Record<string, unknown>): Promise<void> {
  // A client: the workers read the corpus files, this command only names a library the stack serves.
  const cfg = config({ skipFileChecks: true });
  if (!statement.trim()) fail('the statement is empty');
  // The API's limit (its schema counts code points, as here), so both refuse the same statements.
  const length = [...statement].length;
  if (length > cfg.api.maxStatementChars)
    fail(`the statement has ${length} characters; at most ${cfg.api.maxStatementChars} are accepted (DRIFTLINE_MAX_STATEMENT_CHARS)`);
  if (typeof opts.goldStatement === 'string' && [...opts.goldStatement].length > cfg.api.maxStatementChars) {
    fail(`--gold-statement has more than ${cfg.api.maxStatementChars} characters (DRIFTLINE_MAX_STATEMENT_CHARS)`);
  }
  const runConfig = runConfigFromOptions(opts);
  const client = await connectClient(cfg).catch((err: Error) => fail(err.message));
  // The rules every door into runs applies (common/run-config.ts), on the stack's libraries and
  // providers rather than this shell's, in the words of this command's flags.
  const served = stackLibraries(cfg);
  const library = (opts.library as string | undefined) ?? served.defaultLibrary;
  const refused = startRequestProblem(
    { library, config: runConfig, ...(opts.goldPremises ? { goldPremises: ['given'] } : {}) },
    { ...served, providerNames: await stackProviderNames(cfg, client, Object.values(runConfig.providers ?? {})) },
  );
  if (refused) {
    await client.connection.close().catch(() => undefined);
    fail(inFlagWords(refused.message));
  }
  const list = (value: unknown) =>
    typeof value === 'string'
      ? value
          .split(',')
          .map((n) => n.trim())
          .filter(Boolean)
      : undefined;
  const json = Boolean(opts.json);
  const say = (line: string) => !json && process.stderr.write(`${line}\n`);
  let exitCode = 0;
  let failure: string | undefined;
  try {
    const id = await startFormalization(client, {
      statement,
      library,
      config: runConfig,
      exclude: list(opts.exclude),
      ...(opts.leaveOut === 'file' ? { leaveOut: 'file' as const } : {}),
      goldPremises: list(opts.goldPremises),
      goldStatement: opts.goldStatement as string | undefined,
      llm: runLlmSettings(cfg),
    });
    const ui = temporalUiLink(temporalUiUrl(cfg), cfg.temporal.namespace, id);
    say(`run ${id} (library ${library})`);
    say(`  Temporal UI: ${ui}`);
    // Every call below is awaited before the connection closes: a call still in flight (or a
    // gRPC retry timer of one) when it closes throws "Channel has been shut down" from a timer.
    const show = stagePrinter(say);
    // Temporal may restart under us (npm start restarting, a network blip): keep following from
    // the last event seen for a while, then say which run it was and how to find it again.
    const view = await followRunToEnd(client, id, {
      onEvent: show,
      pollTimeoutMs: POLL_TIMEOUT_MS,
      graceMs: cfg.temporal.clientGraceMs,
    }).catch((err: unknown) => {
      if (err instanceof TemporalLostError)
        throw new Error(lostTemporalMessage(id, temporalAddress(cfg), `http://${cfg.api.host}:${cfg.api.port}`, err.cause));
      throw err;
    });
    if (!view) throw new Error(`run ${id} disappeared`);
    if (view.status === 'completed' && view.result) {
      if (json) process.stdout.write(`${JSON.stringify({ id, links: { temporalUi: ui }, ...view.result }, null, 2)}\n`);
      else printResult(view.result);
      exitCode = formalizeExitCode(view.result);
    } else {
      failure = `run ${id} ${view.status === 'canceled' ? 'was canceled' : `failed: ${view.error ?? view.status}`} (${ui})`;
    }
  } catch (err) {
    failure = (err as Error).message;
  } finally {
    await client.connection.close().catch(() => undefined);
  }
  if (failure) fail(failure);
  process.exitCode = exitCode;
}
