// The MCP server as an assistant uses it: the SDK's own client over stdio (the real `driftline
// mcp` command, a process of its own) and over streamable HTTP (POST /mcp on the real API
// server), against the real stack (Temporal dev server, workers, fake OpenAI server, fake REPL).
// Every tool, the progress notifications of `formalize`, a `formalize` the client cancels whose
// run still completes, tool errors with the API's reasons, the screen refusing hostile Lean, and
// the API keys in front of /mcp.
import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Worker } from '@temporalio/worker';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult, Progress } from '@modelcontextprotocol/sdk/types.js';
import { buildServer } from '../../api/server';
import { hashKey } from '../../client/api-keys';
import { registryCatalog } from '../../client/library-catalog';
import { TOOL_NAMES } from '../../mcp/server';
import type { CheckStatementsResult } from '../../common/checks';
import { createStack, FIXTURE_CORPUS, FIXTURE_LIBRARY, startTemporal, type TestStack } from '../helpers/stack';
import { miniSpec, MINI_BENCHMARK, startOnStack, waitFor } from '../helpers/sweep';
import { defaultBrain, FAKE_MODELS, type FakeHandler } from '../fakes/openai-server';

const execFileAsync = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const DRIFTLINE = join(ROOT, 'bin/driftline.js');
const KEY = 'dl_test-key-for-mcp';

// A statement with SLOWLY in it gets a slow formalizer: its run is still going when the client
// cancels the call.
const slowWhenAsked: FakeHandler = async (req) => {
  if (req.model === FAKE_MODELS.formalizer && JSON.stringify(req.messages).includes('SLOWLY'))
    await new Promise((r) => setTimeout(r, 4000));
  return defaultBrain(req);
};

const GOOD_LEAN = 'theorem t (p : ℕ) (hp : Nat.Prime p) : 2 ≤ p := by sorry';
const GOLD_LEAN = 'open Nat\ntheorem gold (p : ℕ) (hp : p.Prime) : p ≥ 2 := by sorry';
const HOSTILE_LEAN = 'open Nat #eval IO.getEnv "OPENAI_API_KEY"\ntheorem t : True := by sorry';

let env: TestWorkflowEnvironment;
let stack: TestStack;
let workers: Worker[] = [];
let running: Promise<void>[] = [];
let api: FastifyInstance;
let apiUrl: string;
let keyedApi: FastifyInstance;
let keyedUrl: string;
const clients: Client[] = [];
let stdioLog = '';

async function listen(app: FastifyInstance): Promise<string> {
  await app.listen({ host: '127.0.0.1', port: 0 });
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
}

function apiServer(extra: { apiKeys?: { name: string; sha256: string }[]; rateLimit?: { max: number; timeWindowMs: number } } = {}) {
  return buildServer({
    temporal: env.client,
    libraries: [FIXTURE_LIBRARY],
    defaultLibrary: FIXTURE_LIBRARY,
    maxStatementChars: 20_000,
    readiness: async () => ({ ready: true, checks: {}, missing: [] }),
    taskQueue: stack.mainQueue,
    catalog: registryCatalog(stack.indexes),
    sweeps: { results: stack.results, dataDir: stack.dataDir, leanTaskQueue: stack.leanQueue },
    llm: stack.runLlm,
    // Bundling workflows in this process stalls its event loop; load shedding has its own test.
    pressure: { maxEventLoopDelayMs: 0 },
    ...extra,
  });
}

async function stdioClient(temporalAddress = env.address): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [DRIFTLINE, 'mcp'],
    cwd: ROOT,
    env: {
      ...(process.env as Record<string, string>),
      TEMPORAL_ADDRESS: temporalAddress,
      DRIFTLINE_DATA_DIR: stack.dataDir,
      DRIFTLINE_LIBRARIES: `${FIXTURE_LIBRARY}=${FIXTURE_CORPUS}`,
      DRIFTLINE_LOG_PRETTY: '0',
    },
    stderr: 'pipe',
  });
  transport.stderr?.on('data', (d: Buffer) => (stdioLog += d.toString()));
  const client = new Client({ name: 'driftline-test', version: '1.0.0' });
  await client.connect(transport);
  clients.push(client);
  return client;
}

async function httpClient(url = apiUrl, key?: string): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(
    new URL('/mcp', url),
    key ? { requestInit: { headers: { authorization: `Bearer ${key}` } } } : {},
  );
  const client = new Client({ name: 'driftline-test', version: '1.0.0' });
  await client.connect(transport);
  clients.push(client);
  return client;
}

function text(result: CallToolResult): string {
  return result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
}

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 })) as CallToolResult;
}

beforeAll(async () => {
  env = await startTemporal();
  // The stdio server starts runs on the production queues, as a user's would.
  stack = await createStack(env, { queue: 'default', llm: { handler: slowWhenAsked }, repl: { unknownIdentifiers: ['Nat.Primez'] } });
  await stack.indexes.open(FIXTURE_LIBRARY);
  workers = await stack.createWorkers();
  running = workers.map((w) => w.run());
  api = await apiServer();
  apiUrl = await listen(api);
  keyedApi = await apiServer({ apiKeys: [{ name: 'assistant', sha256: hashKey(KEY) }] });
  keyedUrl = await listen(keyedApi);
}, 180_000);

afterAll(async () => {
  for (const client of clients) await client.close().catch(() => undefined);
  await api?.close();
  await keyedApi?.close();
  for (const w of workers) w.shutdown();
  await Promise.all(running);
  await stack?.close();
  await env?.teardown();
}, 60_000);

const transports: [string, () => Promise<Client>][] = [
  ['stdio (driftline mcp)', () => stdioClient()],
  ['streamable HTTP (POST /mcp)', () => httpClient()],
];

describe.each(transports)('MCP over %s', (transportName, connect) => {
  let client: Client;
  beforeAll(async () => {
    client = await connect();
  }, 120_000);

  it('lists exactly the six tools, each with an input and an output schema, and runs as a resource template', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([...TOOL_NAMES].sort());
    for (const tool of tools) {
      expect(tool.inputSchema.type, tool.name).toBe('object');
      expect(tool.outputSchema?.type, tool.name).toBe('object');
    }
    const formalize = tools.find((t) => t.name === 'formalize')!;
    expect(Object.keys(formalize.inputSchema.properties ?? {}).sort()).toEqual(['config', 'library', 'statement']);
    expect(formalize.inputSchema.required).toEqual(['statement']);
    // The run configuration as the API takes it (derived from the one schema).
    const config = (formalize.inputSchema.properties as Record<string, { properties?: Record<string, { enum?: string[] }> }>).config!;
    expect(config.properties?.retrieval?.enum).toEqual(['drift', 'monolithic', 'oracle', 'none']);
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((r) => r.uriTemplate)).toContain('driftline://runs/{+id}');
  });

  it('formalize: progress per stage, the run ID first, and the Lean statement in the result; get_run, list_runs and the resource read it again', async () => {
    const progress: Progress[] = [];
    const result = (await client.callTool(
      { name: 'formalize', arguments: { statement: 'Every prime number p is at least 2.', config: { judge: true } } },
      undefined,
      {
        onprogress: (p) => progress.push(p),
        resetTimeoutOnProgress: true,
        timeout: 120_000,
      },
    )) as CallToolResult;
    expect(result.isError, text(result)).toBeFalsy();
    const run = result.structuredContent as {
      id: string;
      status: string;
      formalStatement: string;
      outcome: string;
      result: { compiled: boolean };
      links: { temporalUi: string };
    };
    expect(run.status).toBe('completed');
    expect(run.formalStatement).toMatch(/theorem .*:= by sorry/s);
    expect(run.result.compiled).toBe(true);
    expect(run.links.temporalUi).toContain(encodeURIComponent(run.id));
    // The serialized result as text too, for clients that read only text.
    expect(JSON.parse(text(result)).formalStatement).toBe(run.formalStatement);

    const messages = progress.map((p) => p.message ?? '');
    expect(messages[0]).toContain(`run ${run.id} started`);
    expect(messages[0]).toContain(`get_run {"id": "${run.id}"}`);
    for (const stage of [
      'decompose started',
      'retrieve started',
      'illustrate started',
      'formalize started',
      'compile (round 0) started',
      'compile (round 0): ok',
      'judge started',
    ]) {
      expect(messages, stage).toContain(stage);
    }
    expect(messages.at(-1)).toMatch(new RegExp(`run ${run.id} completed: (faithful|unfaithful)`));
    // Progress only grows.
    progress.forEach((p, i) => i > 0 && expect(p.progress).toBeGreaterThan(progress[i - 1]!.progress));

    const again = await call(client, 'get_run', { id: run.id });
    expect(again.isError).toBeFalsy();
    expect(again.structuredContent).toMatchObject({ id: run.id, status: 'completed', formalStatement: run.formalStatement });

    // Temporal's visibility store catches up with a closed run within moments.
    const listedRun = await waitFor('the run in list_runs', async () => {
      const listed = await call(client, 'list_runs', { status: 'completed', limit: 50 });
      expect(listed.isError, text(listed)).toBeFalsy();
      return (listed.structuredContent as { items: { id: string; status: string; library?: string }[] }).items.find((i) => i.id === run.id);
    });
    expect(listedRun).toMatchObject({ status: 'completed', library: FIXTURE_LIBRARY });

    const resource = await client.readResource({ uri: `driftline://runs/${run.id}` });
    expect(resource.contents[0]!.mimeType).toBe('application/json');
    expect(JSON.parse((resource.contents[0] as { text: string }).text)).toMatchObject({ id: run.id, formalStatement: run.formalStatement });
    const listedResource = await waitFor('the run among the resources', async () =>
      (await client.listResources()).resources.find((r) => r.uri === `driftline://runs/${run.id}`),
    );
    expect(listedResource).toMatchObject({ name: run.id, mimeType: 'application/json' });
  }, 120_000);

  it('a cancelled formalize leaves its run going; get_run then reads it completed', async () => {
    const controller = new AbortController();
    let id: string | undefined;
    const pending = client.callTool(
      {
        name: 'formalize',
        arguments: { statement: 'SLOWLY: every prime number p is at least 2.', config: { judge: false, repairRounds: 0 } },
      },
      undefined,
      {
        signal: controller.signal,
        onprogress: (p) => {
          id ??= /run (\S+) started/.exec(p.message ?? '')?.[1];
          // Give up once the slow stage is under way.
          if (p.message === 'formalize started') controller.abort();
        },
        timeout: 120_000,
      },
    );
    await expect(pending).rejects.toThrow();
    expect(id).toMatch(/^formalize-/);
    // The run itself was not cancelled: it finishes on its own.
    const done = await waitFor(
      'the run to complete',
      async () => {
        const r = await call(client, 'get_run', { id });
        const view = r.structuredContent as { status: string } | undefined;
        return view && view.status !== 'running' ? r : null;
      },
      90_000,
    );
    expect(done.structuredContent).toMatchObject({ id, status: 'completed' });
    expect((done.structuredContent as { formalStatement: string }).formalStatement).toMatch(/theorem/);
    if (transportName.startsWith('stdio'))
      await waitFor(
        'the server to log it',
        async () => stdioLog.includes(`the client stopped waiting for run ${id}; the run goes on`),
        10_000,
      );
  }, 150_000);

  it('search_premises searches the library as the API does', async () => {
    const found = await call(client, 'search_premises', { query: 'prime numbers are at least two', k: 3 });
    expect(found.isError, text(found)).toBeFalsy();
    const hits = found.structuredContent as { library: string; version: string; items: { name: string; score: number }[] };
    expect(hits.library).toBe(FIXTURE_LIBRARY);
    expect(hits.version).toMatch(/^mini-/);
    expect(hits.items.length).toBeGreaterThan(0);
    expect(hits.items.length).toBeLessThanOrEqual(3);
    expect(hits.items.map((i) => i.name).join(' ')).toMatch(/Prime/);
    // Ranked for a person, as the API's search: the name typed with hyphens first.
    const named = await call(client, 'search_premises', { query: 'order-of', k: 3 });
    expect((named.structuredContent as { items: { name: string }[] }).items[0]!.name).toBe('orderOf');
  });

  it("check_lean compiles on the Lean queue, checks equivalence with a gold, and reports Lean's errors", async () => {
    const equivalent = await call(client, 'check_lean', { statement: GOOD_LEAN, gold: GOLD_LEAN });
    expect(equivalent.isError, text(equivalent)).toBeFalsy();
    expect(equivalent.structuredContent).toMatchObject({ compiled: true, status: 'ok', equivalent: true });
    const id = (equivalent.structuredContent as { id: string }).id;
    expect(id).toMatch(/^check-/);
    // A durable workflow like any other, whose result says the same.
    const recorded = (await env.client.workflow.getHandle(id).result()) as CheckStatementsResult;
    expect(recorded.results).toHaveLength(1);
    expect(recorded.results[0]).toMatchObject({ compiled: true, equivalent: true });

    const broken = await call(client, 'check_lean', { statement: 'theorem t (p : ℕ) (hp : Nat.Primez p) : 2 ≤ p := by sorry' });
    expect(broken.isError).toBeFalsy();
    const checked = broken.structuredContent as { compiled: boolean; status: string; messages: { severity: string; text: string }[] };
    expect(checked).toMatchObject({ compiled: false, status: 'error' });
    expect(checked.messages.find((m) => m.severity === 'error')?.text).toMatch(/unknown identifier 'Nat.Primez'/);
  }, 60_000);

  it('check_lean: the screen refuses hostile Lean before any of it reaches Lean', async () => {
    const leaksBefore = stack.repl!.leaks().length;
    const refused = await call(client, 'check_lean', { statement: HOSTILE_LEAN });
    expect(refused.isError).toBe(true);
    expect(text(refused)).toMatch(/^statement is refused before Lean \(line 1, column 9\): `#eval` runs code/);
    const gold = await call(client, 'check_lean', { statement: GOOD_LEAN, gold: HOSTILE_LEAN });
    expect(gold.isError).toBe(true);
    expect(text(gold)).toMatch(/^gold is refused before Lean/);
    expect(stack.repl!.leaks().length).toBe(leaksBefore);
  });

  it('sweep_status reads a sweep as the API does', async () => {
    const sweepId = `mcp-sweep-${transportName.startsWith('stdio') ? 'stdio' : 'http'}`;
    await startOnStack(
      stack,
      miniSpec({
        benchmarks: [{ path: MINI_BENCHMARK, format: 'rautoformalizer', limit: 2 }],
        configurations: [{ name: 'zero', config: { retrieval: 'none', illustrate: false, repairRounds: 0, judge: false } }],
      }),
      { id: sweepId },
    );
    const done = await waitFor(
      'the sweep to complete',
      async () => {
        const r = await call(client, 'sweep_status', { id: sweepId });
        expect(r.isError, text(r)).toBeFalsy();
        return (r.structuredContent as { status: string }).status === 'completed' ? r : null;
      },
      90_000,
    );
    expect(done.structuredContent).toMatchObject({
      sweepId,
      status: 'completed',
      total: 2,
      done: 2,
      failed: 0,
      perConfig: { zero: { total: 2, done: 2 } },
    });
  }, 120_000);

  it.each([
    ['get_run of an unknown ID', 'get_run', { id: 'no-such-run' }, /^no formalization with id "no-such-run"$/],
    ['sweep_status of an unknown sweep', 'sweep_status', { id: 'no-such-sweep' }, /^no sweep "no-such-sweep"$/],
    [
      'formalize on an unknown library',
      'formalize',
      { statement: 'p is prime', library: 'nope' },
      /^unknown library "nope"; known: mini\. To add one: .*DRIFTLINE_LIBRARIES=nope=/,
    ],
    [
      'agent tools without write_file',
      'formalize',
      { statement: 'p is prime', config: { mode: 'agent', tools: ['run_lean'] } },
      /"tools" must include "write_file"/,
    ],
    [
      'oracle retrieval (no gold premises here)',
      'formalize',
      { statement: 'p is prime', config: { retrieval: 'oracle' } },
      /retrieval "oracle" needs "goldPremises"/,
    ],
    ['search of an unknown library', 'search_premises', { query: 'prime', library: 'nope' }, /^unknown library "nope"; known: mini$/],
    ['a blank statement', 'formalize', { statement: '   ' }, /must not be empty.*statement/s],
    ['a missing statement', 'formalize', {}, /statement/],
    ['an unknown field', 'formalize', { statement: 'p is prime', colour: 'red' }, /colour/],
    [
      'an unknown retrieval mode',
      'formalize',
      { statement: 'p is prime', config: { retrieval: 'psychic' } },
      /"drift".*config\.retrieval/s,
    ],
    ['a wrong config type', 'formalize', { statement: 'p is prime', config: { repairRounds: 'three' } }, /config\.repairRounds/],
    ['a statement over the limit', 'check_lean', { statement: `theorem t : ${'x'.repeat(20_001)}` }, /longer than 20000 characters/],
    ['an unknown status filter', 'list_runs', { status: 'sleeping' }, /status/],
    ['a limit out of range', 'list_runs', { limit: 500 }, /limit/],
    ['a made-up page token', 'list_runs', { pageToken: 'abc.def' }, /"pageToken" is not a token this API handed out/],
    ['k out of range', 'search_premises', { query: 'prime', k: 0 }, /\bk\b/],
  ])('%s is a tool error with the reason', async (_what, tool, args, reason) => {
    const result = await call(client, tool, args);
    expect(result.isError, JSON.stringify(result)).toBe(true);
    expect(text(result)).toMatch(reason);
  });

  it('an unknown run is an error when read as a resource', async () => {
    await expect(client.readResource({ uri: 'driftline://runs/no-such-run' })).rejects.toThrow(/no formalization with id "no-such-run"/);
  });
});

describe('driftline mcp before the stack is up', () => {
  it('starts all the same (an assistant may start it first) and says so on stderr', async () => {
    const client = await stdioClient('127.0.0.1:1');
    expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual([...TOOL_NAMES].sort());
    expect(stdioLog).toContain('Cannot reach Temporal at 127.0.0.1:1');
    expect(stdioLog).toContain('The MCP server starts anyway');
    await client.close();
  }, 60_000);
});

// The workflow behind check_lean, as a batch (what POST /v1/checks will send): one result per
// statement in order, the screen's refusal a result like Lean's, equivalence only where asked.
describe('checkStatements workflow', () => {
  it('checks a batch: compiled, rejected by Lean, refused by the screen, equivalent to its gold', async () => {
    const leaksBefore = stack.repl!.leaks().length;
    const input = {
      statements: [
        { id: 'good', statement: GOOD_LEAN, gold: GOLD_LEAN },
        { id: 'broken', statement: 'theorem t (p : ℕ) (hp : Nat.Primez p) : 2 ≤ p := by sorry', gold: GOLD_LEAN },
        { id: 'hostile', statement: HOSTILE_LEAN },
        { id: 'other', statement: 'theorem u (p : ℕ) (hp : Nat.Prime p) : 3 ≤ p := by sorry', gold: GOLD_LEAN },
        { statement: 'theorem v : 1 + 1 = 2 := by sorry' },
      ],
      leanTaskQueue: stack.leanQueue,
      concurrency: 2,
    };
    const id = `check-batch-${Date.now()}`;
    const result = (await env.client.workflow.execute('checkStatements', {
      workflowId: id,
      taskQueue: stack.mainQueue,
      args: [input],
    })) as CheckStatementsResult;
    expect(result.results.map((r) => r.id)).toEqual(['good', 'broken', 'hostile', 'other', undefined]);
    expect(result.results[0]).toMatchObject({ compiled: true, status: 'ok', equivalent: true });
    // Not compiled: no equivalence check.
    expect(result.results[1]).toMatchObject({ compiled: false, status: 'error' });
    expect(result.results[1]!.equivalent).toBeUndefined();
    expect(result.results[2]).toMatchObject({ compiled: false, status: 'refused' });
    expect(result.results[2]!.messages[0]!.text).toMatch(/^refused before Lean: `#eval` runs code/);
    expect(result.results[3]).toMatchObject({ compiled: true, equivalent: false });
    expect(result.results[4]).toMatchObject({ compiled: true, status: 'ok' });
    expect(result.results[4]!.equivalence).toBeUndefined();
    expect(stack.repl!.leaks().length).toBe(leaksBefore);
    expect(await env.client.workflow.getHandle(id).query('checkProgress')).toEqual({ total: 5, done: 5 });
  }, 60_000);
});

describe('POST /mcp behind API keys', () => {
  it('refuses a client without a key or with a wrong one, and serves one with a valid key', async () => {
    await expect(httpClient(keyedUrl)).rejects.toThrow(/401|Unauthorized|API key/i);
    await expect(httpClient(keyedUrl, 'dl_not-the-key')).rejects.toThrow(/401|Unauthorized|API key/i);
    const client = await httpClient(keyedUrl, KEY);
    expect((await client.listTools()).tools).toHaveLength(TOOL_NAMES.length);
    const missing = await call(client, 'get_run', { id: 'no-such-run' });
    expect(missing.isError).toBe(true);
  });

  it('answers the refusal as /v1 does, and GET /mcp with 405 (a stateless server has no stream to open)', async () => {
    const refused = await fetch(`${keyedUrl}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: '{}',
    });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect((await refused.json()).detail).toMatch(/an API key is required/);
    const get = await fetch(`${apiUrl}/mcp`, { headers: { accept: 'text/event-stream' } });
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
  });

  it('counts /mcp against the same rate limit as /v1', async () => {
    const limited = await apiServer({ rateLimit: { max: 2, timeWindowMs: 60_000 } });
    const url = await listen(limited);
    try {
      const post = () =>
        fetch(`${url}/mcp`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
        });
      expect((await post()).status).toBe(200);
      expect((await fetch(`${url}/v1/formalizations`)).status).toBe(200);
      const third = await post();
      expect(third.status).toBe(429);
    } finally {
      await limited.close();
    }
  });
});

// docs/mcp.md, "Trying the tools without an assistant": the same commands, run here.
describe('without an assistant', () => {
  const LIST = '{"jsonrpc":"2.0","id":1,"method":"tools/list"}';
  const SEARCH =
    '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search_premises","arguments":{"query":"order-of","k":3}}}';

  /** The JSON-RPC messages of a reply: a JSON body, or the `data:` lines of an event stream. */
  function messages(body: string): { id?: number; result?: Record<string, unknown>; error?: unknown }[] {
    const trimmed = body.trim();
    if (trimmed.startsWith('{')) return [JSON.parse(trimmed)];
    return trimmed
      .split('\n')
      .filter((l) => l.startsWith('data: '))
      .map((l) => JSON.parse(l.slice('data: '.length)));
  }

  it('answers plain JSON-RPC over HTTP from curl', async () => {
    // Asynchronously: the API answering is in this process.
    const curl = async (body: string, pipe = '') =>
      (
        await execFileAsync(
          'sh',
          [
            '-c',
            `curl -sS ${apiUrl}/mcp -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' -d '${body}'${pipe}`,
          ],
          { encoding: 'utf8', timeout: 60_000 },
        )
      ).stdout;
    const tools = (messages(await curl(LIST))[0]!.result!.tools as { name: string }[]).map((t) => t.name);
    expect(tools.sort()).toEqual([...TOOL_NAMES].sort());
    // The docs' pipeline: the event's data line, the names by jq.
    const names = await curl(SEARCH, " | sed -n 's/^data: //p' | jq '.result.structuredContent.items[].name'");
    expect(names.split('\n')[0]).toBe('"orderOf"');
  });

  it('answers JSON-RPC lines over stdio, after the initialize handshake', () => {
    const init =
      '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sh","version":"0"}}}';
    const initialized = '{"jsonrpc":"2.0","method":"notifications/initialized"}';
    // As docs/mcp.md has it, with `node bin/driftline.js` for `npx driftline`: stdin ends at once,
    // and the server answers all it was sent before it exits.
    const script = `(printf '%s\\n' '${init}' '${initialized}' '${LIST}' '${SEARCH}') | node bin/driftline.js mcp`;
    const out = spawnSync('sh', ['-c', script], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 90_000,
      env: {
        ...process.env,
        TEMPORAL_ADDRESS: env.address,
        DRIFTLINE_DATA_DIR: stack.dataDir,
        DRIFTLINE_LIBRARIES: `${FIXTURE_LIBRARY}=${FIXTURE_CORPUS}`,
      },
    });
    expect(out.status, out.stderr).toBe(0);
    const replies = out.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { id?: number; result?: Record<string, unknown> });
    expect(
      replies.map((r) => r.id),
      out.stderr.slice(-3000),
    ).toEqual([0, 1, 2]);
    expect((replies[1]!.result!.tools as unknown[]).length).toBe(TOOL_NAMES.length);
    expect((replies[2]!.result as { structuredContent: { items: { name: string }[] } }).structuredContent.items[0]!.name).toBe('orderOf');
  }, 120_000);
});
