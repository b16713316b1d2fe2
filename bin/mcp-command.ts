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
  process.once('SIGINT', () => void close());
  process.once('SIGTERM', () => void close());
  // The client ends the session by closing our stdin; requests it sent before are answered first
  // (for at most DRAIN_MS), so a shell can pipe in a few lines and read every answer.
  let answered = (): Promise<void> => Promise.resolve();
  process.stdin.once('end', () => void answered().then(close));
  await server.connect(transport);
  answered = drainOnEnd(transport);
  log.info({ temporal: temporalAddress(cfg), libraries: cfg.libraries.map((l) => l.name) }, 'MCP server on stdio');
}

const DRAIN_MS = 60_000;

/** Tracks the requests read from stdin until their responses are sent; the returned function
 * resolves once none is pending (or after DRAIN_MS). */
function drainOnEnd(transport: StdioServerTransport): () => Promise<void> {
  const pending = new Set<string | number>();
  let settled: (() => void) | undefined;
  const receive = transport.onmessage;
  transport.onmessage = (message) => {
    if ('method' in message && 'id' in message) pending.add(message.id);
    // A cancelled request gets no answer.
    else if ('method' in message && message.method === 'notifications/cancelled') {
      const id = (message.params as { requestId?: string | number } | undefined)?.requestId;
      if (id !== undefined) pending.delete(id);
      if (pending.size === 0) settled?.();
    }
    receive?.(message);
  };
  const send = transport.send.bind(transport);
  transport.send = async (message) => {
    await send(message);
    if (!('method' in message) && 'id' in message && message.id !== undefined) pending.delete(message.id);
    if (pending.size === 0) settled?.();
  };
  return () =>
    pending.size === 0
      ? Promise.resolve()
      : new Promise<void>((resolve) => {
          settled = resolve;
          setTimeout(resolve, DRAIN_MS).unref();
        });
}
