// driftline as a Model Context Protocol server: the tools an AI coding assistant calls
// (formalize, get_run, list_runs, search_premises, check_lean, sweep_status) and the runs as
// resources (driftline://runs/{id}). Every tool calls the running service through the Temporal
// client, the way the API and the CLI do; nothing of the pipeline runs here. Built from injected
// parts, so `driftline mcp` (stdio, bin/mcp-command.ts) and POST /mcp on the API
// (api/mcp-route.ts) serve the same tools.
import { randomBytes } from 'node:crypto';
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { McpError, type CallToolResult, type ServerNotification } from '@modelcontextprotocol/sdk/types.js';
import type { Client } from '@temporalio/client';
import { DEFAULT_SAFETY_POLICY, type SafetyPolicy } from '../engines/lean/statement-safety';
import { describeRefusal, screenText } from '../engines/lean/screen-text';
import type { ResultsDb } from '../engines/results/results-db';
import { startRequestProblem } from '../client/start-request';
import type { CheckStatementsResult } from '../common/checks';
import { MAIN_TASK_QUEUE } from '../common/activities';
import type { LlmCallPolicy } from '../common/llm-call-policy';
import type { RunConfig } from '../common/run-config-schema';
// Client-side modules, shared with the API and the CLI (moving to client/: see the report).
import {
  BadPageTokenError,
  getFormalization,
  listFormalizations,
  startFormalization,
  temporalUiLink,
  temporalUiOf,
  type RunView,
} from '../client/runs';
import type { RunEvent } from '../client/run-events';
import { followRunToEnd, TemporalLostError } from '../client/follow-run';
import { getSweepProgress } from '../client/sweeps';
import { startChecks } from '../client/checks';
import {
  checkLeanInput,
  checkLeanOutput,
  formalizeInput,
  getRunInput,
  listRunsInput,
  listRunsOutput,
  runOutput,
  searchPremisesInput,
  searchPremisesOutput,
  sweepStatusInput,
  sweepStatusOutput,
} from './schemas';

/** Premise search over a library's current index, ranked for a person: name matches first (the API's
 * LibraryCatalog is one). */
export interface PremiseSearch {
  names(): string[];
  search(
    library: string,
    query: string,
    k: number,
  ): Promise<{ version: string; hits: { name: string; kind: string; signature: string; module?: string; score: number }[] } | null>;
}

export interface McpDeps {
  temporal: Client;
  libraries: string[];
  defaultLibrary: string;
  maxStatementChars: number;
  /** The main task queue runs and checks are started on (default `driftline`). */
  taskQueue?: string;
  /** Whose texts the runs and checks started here are (over HTTP: the API key's; common/trust-domain.ts). */
  trustDomain?: string;
  /** The Lean task queue checks go to (default `lean`). */
  leanTaskQueue?: string;
  /** The workers' LLM timeout and re-asks, passed to every run (as the API does). */
  llm?: LlmCallPolicy;
  /** The LLM providers configured (a run's `config.providers` may name only these). */
  providerNames?: string[];
  /** What the screen lets through to Lean. */
  screenPolicy?: SafetyPolicy;
  /** Premise search; without it `search_premises` answers that none is served. */
  search?: PremiseSearch;
  /** The results database sweeps are recorded in; without it `sweep_status` answers that none is served. */
  results?: ResultsDb;
  temporalUiUrl?: string;
  namespace?: string;
  /** Where the server says what it does (a run's ID as soon as it starts); stdio: stderr. */
  log?: (message: string, fields?: Record<string, unknown>) => void;
  /** Server name and version told to clients. */
  version?: string;
}

/** The tools by name, as clients see them (the interface outside checks use). */
export const TOOL_NAMES = ['formalize', 'get_run', 'list_runs', 'search_premises', 'check_lean', 'sweep_status'] as const;

/** Runs as resources: `driftline://runs/<id>` (an id may contain "/"). */
export const RUN_URI_PREFIX = 'driftline://runs/';

/** -32002: the JSON-RPC code the MCP specification gives an unknown resource. */
const RESOURCE_NOT_FOUND = -32002;

/** One long poll's limit: Temporal answers within ~20 s when nothing happens. */
const POLL_TIMEOUT_MS = 30_000;

function toolError(message: string): CallToolResult {
  return { content: [{ type: 'text', text: message }], isError: true };
}

function structured<T extends Record<string, unknown>>(value: T): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(value, null, 2) }], structuredContent: value };
}

/** A run as the tools show it: the API's view, the Lean statement and outcome on top. */
function runPayload(view: RunView, link: string): Record<string, unknown> {
  return {
    ...view,
    ...(view.result ? { formalStatement: view.result.formalStatement, outcome: view.result.outcome } : {}),
    links: { temporalUi: link },
  };
}

/** One line for a progress notification. */
function describeEvent(id: string, event: RunEvent): string {
  const round = event.round !== undefined && (event.stage === 'compile' || event.stage === 'repair') ? ` (round ${event.round})` : '';
  switch (event.type) {
    case 'run.started':
      return `run ${id} started`;
    case 'stage.started':
      return `${event.stage}${round} started`;
    case 'stage.completed':
      if (event.compile)
        return `compile${round}: ${event.compile.status}${event.compile.errors ? `, ${event.compile.errors} error(s)` : ''}`;
      if (event.judge) return `judge: grade ${event.judge.grade}, ${event.judge.faithful ? 'faithful' : 'not faithful'}`;
      return `${event.stage}${round} done`;
    case 'stage.failed':
      return `${event.stage}${round} failed: ${event.error ?? 'no reason given'}`;
    case 'run.completed':
      return `run ${id} completed: ${event.outcome ?? 'done'}`;
    case 'run.failed':
      return `run ${id} failed: ${event.error ?? 'no reason given'}`;
    case 'run.canceled':
      return `run ${id} was canceled`;
  }
}

export function createMcpServer(deps: McpDeps): McpServer {
  const { temporal } = deps;
  const log = deps.log ?? (() => undefined);
  const taskQueue = deps.taskQueue ?? MAIN_TASK_QUEUE;
  const policy = deps.screenPolicy ?? DEFAULT_SAFETY_POLICY;
  const ui = temporalUiOf(temporal, deps);
  const link = (id: string) => temporalUiLink(ui.temporalUiUrl, ui.namespace, id);
  const server = new McpServer(
    { name: 'driftline', version: deps.version ?? '0.1.0' },
    {
      capabilities: { logging: {} },
      instructions:
        'driftline turns informal mathematics into Lean 4 theorem statements as durable runs. formalize starts a run and waits for it ' +
        '(its ID comes first, in a progress message: a run goes on if you stop waiting; read it with get_run). check_lean compiles a Lean ' +
        'statement you wrote; search_premises finds library declarations to use.',
    },
  );

  server.registerTool(
    'formalize',
    {
      title: 'Formalize a statement in Lean 4',
      description:
        'Starts a durable formalization run (decompose, retrieve premises, illustrate, formalize, compile with Lean, repair, judge) and ' +
        'returns its result, with the Lean statement in `formalStatement`, when it ends. Sends a progress notification per stage; the ' +
        "first one names the run's ID. If you stop waiting, the run goes on: read it with get_run.",
      inputSchema: formalizeInput(deps.maxStatementChars, deps.libraries, deps.defaultLibrary),
      outputSchema: runOutput,
      annotations: { readOnlyHint: false, idempotentHint: false, openWorldHint: false },
    },
    async ({ statement, library, config }, extra) => {
      const refused = startRequestProblem({ library, config: config as Partial<RunConfig> | undefined }, deps);
      if (refused) return toolError(refused.message);
      const chosen = library ?? deps.defaultLibrary;
      const id = await startFormalization(
        temporal,
        {
          statement,
          library: chosen,
          config: config as Partial<RunConfig> | undefined,
          ...(deps.leanTaskQueue ? { leanTaskQueue: deps.leanTaskQueue } : {}),
          ...(deps.llm ? { llm: deps.llm } : {}),
          ...(deps.trustDomain ? { trustDomain: deps.trustDomain } : {}),
        },
        taskQueue,
      );
      log(`run ${id} started`, { id, library: chosen });
      const token = extra._meta?.progressToken;
      let step = 0;
      const notify = async (message: string) => {
        if (token === undefined) return;
        const notification: ServerNotification = {
          method: 'notifications/progress',
          params: { progressToken: token, progress: ++step, message },
        };
        await extra.sendNotification(notification).catch(() => undefined);
      };
      // The run's ID first, so a client that stops waiting can still find the run.
      await notify(`run ${id} started (library ${chosen}); if you stop waiting it goes on: get_run {"id": "${id}"}`);
      await extra
        .sendNotification({
          method: 'notifications/message',
          params: { level: 'info', logger: 'driftline', data: { message: `run ${id} started`, id, links: { temporalUi: link(id) } } },
        })
        .catch(() => undefined);
      // Follow the run to its end (client/follow-run.ts), one long poll at a time.
      let view;
      try {
        view = await followRunToEnd(temporal, id, {
          onEvent: async (event) => {
            if (event.type !== 'run.started') await notify(describeEvent(id, event));
          },
          signal: extra.signal,
          pollTimeoutMs: POLL_TIMEOUT_MS,
        });
      } catch (err) {
        if (extra.signal.aborted) {
          log(`the client stopped waiting for run ${id}; the run goes on`, { id });
          return toolError(`stopped waiting; run ${id} goes on: get_run {"id": "${id}"}`);
        }
        const cause = err instanceof TemporalLostError ? err.cause : err;
        log(`lost contact with Temporal while following run ${id}: ${(cause as Error).message}`, { id });
        return toolError(
          `lost contact with Temporal while run ${id} was in progress (${(cause as Error).message}); the run is not lost: get_run {"id": "${id}"} once Temporal answers`,
        );
      }
      if (!view) return toolError(`run ${id} disappeared`);
      if (view.status !== 'completed') {
        const failed: CallToolResult = structured(runPayload(view, link(id)));
        return {
          ...failed,
          content: [
            { type: 'text', text: `run ${id} ${view.status === 'canceled' ? 'was canceled' : `failed: ${view.error ?? view.status}`}` },
            ...failed.content,
          ],
          isError: true,
        };
      }
      return structured(runPayload(view, link(id)));
    },
  );

  server.registerTool(
    'get_run',
    {
      title: 'Read a run',
      description:
        "A run's status, progress and, once completed, its result (the Lean statement in `formalStatement`, the verdict, premises, attempts).",
      inputSchema: getRunInput,
      outputSchema: runOutput,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async ({ id }) => {
      const view = await getFormalization(temporal, id);
      if (!view) return toolError(`no formalization with id "${id}"`);
      return structured(runPayload(view, link(id)));
    },
  );

  server.registerTool(
    'list_runs',
    {
      title: 'List runs',
      description: "Runs, newest first, from Temporal's visibility store; filter by status, outcome, library or sweep.",
      inputSchema: listRunsInput,
      outputSchema: listRunsOutput,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async (filter) => {
      try {
        const page = await listFormalizations(temporal, filter);
        return structured({ ...page, items: page.items.map((item) => ({ ...item, links: { temporalUi: link(item.id) } })) });
      } catch (err) {
        if (err instanceof BadPageTokenError) return toolError(err.message);
        throw err;
      }
    },
  );

  server.registerTool(
    'search_premises',
    {
      title: "Search a library's premises",
      description:
        "Declarations of a library (Mathlib, con-nf, …) from its current index: names matching the query first (exact, last component, its words), then by the statement's words.",
      inputSchema: searchPremisesInput,
      outputSchema: searchPremisesOutput,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async ({ query, library, k }) => {
      if (!deps.search) return toolError('premise search is not served here');
      const names = deps.search.names();
      const name = library ?? deps.defaultLibrary;
      if (!names.includes(name)) return toolError(`unknown library "${name}"; known: ${names.join(', ')}`);
      const found = await deps.search.search(name, query, k ?? 10);
      if (!found)
        return toolError(`library "${name}" has no index yet; it is built at the first \`npm start\` or by \`driftline index build\``);
      return structured({ library: name, version: found.version, query, items: found.hits });
    },
  );

  server.registerTool(
    'check_lean',
    {
      title: 'Check a Lean statement',
      description:
        'Compiles one Lean 4 theorem statement against the library on the Lean workers (after the same screen as every run), and with ' +
        "`gold` checks that the two statements prove each other. No LLM is involved. Answers with Lean's messages.",
      inputSchema: checkLeanInput(deps.maxStatementChars),
      outputSchema: checkLeanOutput,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async ({ statement, gold }, extra) => {
      // Raw Lean from the caller: refused here already when the screen would refuse it, in the
      // API's words; the Lean worker screens it again before its REPL sees anything.
      for (const [field, text] of [
        ['statement', statement],
        ['gold', gold],
      ] as const) {
        if (text === undefined) continue;
        const screened = screenText({ statement: text, as: field === 'gold' ? 'gold' : 'formalizer' }, policy);
        if (!screened.accepted) return toolError(describeRefusal(screened, field));
      }
      // One code path with the API and the CLI (client/checks.ts).
      const id = await startChecks(temporal, [{ statement, ...(gold !== undefined ? { gold } : {}) }], {
        id: `check-${randomBytes(6).toString('hex')}`,
        taskQueue,
        ...(deps.leanTaskQueue ? { leanTaskQueue: deps.leanTaskQueue } : {}),
        screenPolicy: policy,
        staticSummary: 'check of one Lean statement (MCP check_lean)',
        ...(deps.trustDomain ? { trustDomain: deps.trustDomain } : {}),
      });
      const handle = temporal.workflow.getHandle(id);
      log(`check ${id} started`, { id });
      let outcome: CheckStatementsResult;
      try {
        outcome = (await temporal.connection.withAbortSignal(extra.signal, () => handle.result())) as CheckStatementsResult;
      } catch (err) {
        if (extra.signal.aborted) return toolError(`stopped waiting; check ${id} goes on in Temporal`);
        throw err;
      }
      const checked = outcome.results[0]!;
      return structured({ id, ...checked, links: { temporalUi: link(id) } });
    },
  );

  server.registerTool(
    'sweep_status',
    {
      title: "A sweep's progress",
      description: 'A benchmark sweep: done, running and failed runs per configuration, rate and ETA, and its status.',
      inputSchema: sweepStatusInput,
      outputSchema: sweepStatusOutput,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async ({ id }) => {
      if (!deps.results) return toolError('sweeps are not served here');
      // Every sweep has its row in the results database before its workflow starts (as the API).
      const progress = (await deps.results.getSweep(id)) ? await getSweepProgress(temporal, deps.results, id) : null;
      if (!progress) return toolError(`no sweep "${id}"`);
      return structured({ ...progress, links: { temporalUi: link(id) } });
    },
  );

  server.registerResource(
    'run',
    new ResourceTemplate(`${RUN_URI_PREFIX}{+id}`, {
      list: async () => {
        const page = await listFormalizations(temporal, { limit: 50 });
        return {
          resources: page.items.map((item) => ({
            uri: `${RUN_URI_PREFIX}${item.id}`,
            name: item.id,
            mimeType: 'application/json',
            description: `${item.status}${item.outcome ? `, ${item.outcome}` : ''}, started ${item.startedAt}`,
          })),
        };
      },
    }),
    { title: 'A formalization run', description: 'A run as get_run shows it (JSON)', mimeType: 'application/json' },
    async (uri, variables) => {
      const raw = Array.isArray(variables.id) ? variables.id.join(',') : (variables.id ?? '');
      let id: string;
      try {
        id = decodeURIComponent(raw);
      } catch {
        id = raw;
      }
      const view = await getFormalization(temporal, id);
      if (!view) throw new McpError(RESOURCE_NOT_FOUND, `no formalization with id "${id}"`, { uri: uri.href });
      return { contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify(runPayload(view, link(id)), null, 2) }] };
    },
  );

  return server;
}
