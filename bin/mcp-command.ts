// `driftline mcp`: the MCP server (mcp/server.ts) over stdio, for an AI coding assistant that
// starts it as a subprocess. It finds the service the way the other commands do
// (TEMPORAL_ADDRESS, the data directory): runs and checks go to the workers through Temporal,
// premise search reads the same indexes as the API, sweeps the same results database. Stdout is
// the protocol: every log line goes to stderr.
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { Client, Connection } from '@temporalio/client';
import { configOrExit } from './cli-support';
import { connectClient, temporalAddress } from '../infra/connect';
import { runLlmSettings, temporalUiUrl } from '../infra/config';
import { buildRetrieval, screenPolicyOf } from '../infra/deps';
import { createLogger } from '../infra/logging';
import { closeSafeRetryInterceptor } from '../infra/temporal-connection';
import { openResults } from '../infra/results';
import { registryCatalog } from '../client/library-catalog';
import { createMcpServer } from '../mcp/server';

export async function mcpCommand(): Promise<void> {
  // A client of the service: the workers read the corpus files, this only names libraries.
  const cfg = configOrExit({ skipFileChecks: true });
  const log = createLogger('driftline-mcp', { stderr: true });
  // An assistant starts this with its session, perhaps before the stack: without Temporal the
  // server starts all the same, on a connection that reaches Temporal once it answers.
  const client = await connectClient(cfg).catch((err: Error) => {
    log.warn(`${err.message} The MCP server starts anyway; its tools work once Temporal answers.`);
    return new Client({
      connection: Connection.lazy({ address: temporalAddress(cfg), interceptors: [closeSafeRetryInterceptor()] }),
      namespace: cfg.temporal.namespace,
    });
  });
  const { registry } = await buildRetrieval(cfg, log);
  const results = await openResults(cfg);
  const server = createMcpServer({
    temporal: client,
    libraries: cfg.libraries.map((l) => l.name),
    defaultLibrary: cfg.libraries[0]?.name ?? '',
    maxStatementChars: cfg.api.maxStatementChars,
    llm: runLlmSettings(cfg),
    providerNames: Object.keys(cfg.llm.providers),
    screenPolicy: screenPolicyOf(cfg),
    search: registryCatalog(registry),
    results,
    temporalUiUrl: temporalUiUrl(cfg),
    namespace: cfg.temporal.namespace,
    log: (message, fields) => log.info(fields ?? {}, message),
  });
  const transport = new StdioServerTransport();
  let closing = false;
  const close = async () => {
    if (closing) return;
    closing = true;
    await server.close().catch(() => undefined);
    await registry.close().catch(() => undefined);
    await results.close().catch(() => undefined);
    await client.connection.close().catch(() => undefined);
    process.exit(0);
  };
  // The client ends the session by closing our stdin (or by a signal).
  process.stdin.once('end', () => void close());
  process.once('SIGINT', () => void close());
  process.once('SIGTERM', () => void close());
  await server.connect(transport);
  log.info({ temporal: temporalAddress(cfg), libraries: cfg.libraries.map((l) => l.name) }, 'MCP server on stdio');
}
