// The HTTP API against the real Temporal dev server: what it accepts, what it refuses and why,
// and that a run started over HTTP can be read back to completion.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { buildServer, type ApiOptions, type ReadinessReport } from '../../api/server';
import { hashKey } from '../../client/api-keys';
import { registryCatalog } from '../../client/library-catalog';
import { IndexRegistry } from '../../engines/retrieval/index-registry';
import { join } from 'node:path';
import { createStack, FIXTURE_CORPUS, FIXTURE_LIBRARY, startTemporal, type TestStack } from '../helpers/stack';

let env: TestWorkflowEnvironment;
let stack: TestStack;
let app: FastifyInstance;
let ready: ReadinessReport = { ready: true, checks: {}, missing: [] };

const servers: FastifyInstance[] = [];
/** Another API over the same Temporal, with options of its own (keys, limits). */
async function server(extra: Partial<ApiOptions> = {}): Promise<FastifyInstance> {
  const instance = await buildServer({
    temporal: env.client,
    libraries: [FIXTURE_LIBRARY, 'other'],
    defaultLibrary: FIXTURE_LIBRARY,
    maxStatementChars: 20_000,
    readiness: async () => ready,
    taskQueue: stack.mainQueue,
    // The same store as the workers'; 'other' is configured but has no index yet.
    catalog: registryCatalog(
      new IndexRegistry({
        libraries: [
          { name: FIXTURE_LIBRARY, corpusPath: FIXTURE_CORPUS },
          { name: 'other', corpusPath: '/nonexistent.jsonl' },
        ],
        dir: join(stack.dataDir, 'indexes'),
      }),
    ),
    // Bundling workflows in this process stalls its event loop; load shedding has its own test.
    pressure: { maxEventLoopDelayMs: 0 },
    ...extra,
  });
  servers.push(instance);
  return instance;
}

beforeAll(async () => {
  env = await startTemporal();
  stack = await createStack(env, { queue: 'default' });
  // The catalog lists libraries from the registry; 'other' is configured in the API only.
  await stack.indexes.open(FIXTURE_LIBRARY);
  app = await server();
});

afterAll(async () => {
  for (const instance of servers) await instance.close();
  await stack?.close();
  await env?.teardown();
});

async function post(body: unknown) {
  return app.inject({
    method: 'POST',
    url: '/v1/formalizations',
    headers: { 'content-type': 'application/json' },
    payload: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

describe('POST /v1/formalizations', () => {
  it.each([
    ['a missing statement', {}, /"statement" is required/],
    ['an empty statement', { statement: '' }, /"statement" must not be empty/],
    ['a blank statement', { statement: '   \n ' }, /"statement" must not be empty/],
    ['a number for the statement', { statement: 42 }, /"statement" must be string/],
    ['a 1 MB statement', { statement: 'x'.repeat(1024 * 1024) }, /longer than 20000 characters/],
    ['an unknown field', { statement: 'p is prime', colour: 'red' }, /unknown field "colour"/],
    ['a wrong config type', { statement: 'p is prime', config: { repairRounds: 'three' } }, /config.repairRounds/],
    [
      'an unknown retrieval mode',
      { statement: 'p is prime', config: { retrieval: 'psychic' } },
      /"config.retrieval" must be one of "drift", "monolithic", "oracle", "none"/,
    ],
    ['an unknown library', { statement: 'p is prime', library: 'nope' }, /"library" must be one of "mini", "other"/],
    ['oracle retrieval without gold premises', { statement: 'p is prime', config: { retrieval: 'oracle' } }, /goldPremises/],
    ['an unknown run mode', { statement: 'p is prime', config: { mode: 'swarm' } }, /config.mode/],
    ['an unknown agent tool', { statement: 'p is prime', config: { mode: 'agent', tools: ['write_file', 'shell'] } }, /config.tools/],
    [
      'agent tools without write_file',
      { statement: 'p is prime', config: { mode: 'agent', tools: ['run_lean'] } },
      /"tools" must include "write_file"/,
    ],
    ['a step budget over 50', { statement: 'p is prime', config: { mode: 'agent', maxSteps: 51 } }, /config.maxSteps/],
    // A gold statement is raw Lean: the screen refuses it before any run starts.
    [
      'a gold statement that runs #eval',
      { statement: 'p is prime', goldStatement: 'open Nat #eval IO.getEnv "OPENAI_API_KEY"\ntheorem t : True := by sorry' },
      /goldStatement is refused before Lean \(line 1, column 9\): `#eval` runs code/,
    ],
    [
      'a gold statement hiding a command behind «--»',
      { statement: 'p is prime', goldStatement: 'theorem t : True := by sorry «--» #exit' },
      /goldStatement is refused before Lean.*(#exit|anything after)/,
    ],
    [
      // Definitions a statement needs may come before its theorem (issue 34), never after it.
      'a gold statement with a declaration after its theorem',
      { statement: 'p is prime', goldStatement: 'theorem t : True := by sorry\ninstance : Inhabited Nat := ⟨0⟩' },
      /goldStatement is refused before Lean \(line 2, column 0\): anything after the statement.*`instance`/,
    ],
    [
      'a gold statement with an unsafe definition',
      { statement: 'p is prime', goldStatement: 'unsafe def f : Nat := 0\ntheorem t : True := by sorry' },
      /goldStatement is refused before Lean.*`unsafe`/,
    ],
  ])('answers 400 to %s, saying what is wrong', async (_name, body, message) => {
    const response = await post(body);
    expect(response.statusCode).toBe(400);
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(response.json()).toMatchObject({ type: 'about:blank', title: 'Bad Request', status: 400 });
    expect(response.json().detail).toMatch(message);
  });

  it('answers 400 to a body that is not JSON', async () => {
    const response = await post('{"statement": ');
    expect(response.statusCode).toBe(400);
    expect(response.json().detail).toMatch(/the body is not valid JSON/);
  });

  it('starts a run (202 with its id) that can be read back until it completes', async () => {
    const response = await post({ statement: 'If p is a prime number then p is at least 2.', config: { repairRounds: 1 } });
    expect(response.statusCode).toBe(202);
    const { id } = response.json() as { id: string };
    expect(response.headers.location).toBe(`/v1/formalizations/${id}`);
    expect(response.json().links.temporalUi).toBe(`http://127.0.0.1:8233/namespaces/default/workflows/${id}`);

    const first = await app.inject({ url: `/v1/formalizations/${id}` });
    expect(first.statusCode).toBe(200);
    expect(first.json()).toMatchObject({ id, status: 'running', links: { events: `/v1/formalizations/${id}/events` } });

    const view = await stack.withWorkers(async () => {
      for (;;) {
        const r = (await app.inject({ url: `/v1/formalizations/${id}` })).json();
        if (r.status !== 'running') return r;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    });
    expect(view.status).toBe('completed');
    expect(view.result).toMatchObject({ compiled: true, judge: { faithful: true } });
    for (const field of ['formalStatement', 'attempts', 'subqueries', 'premises', 'examples']) {
      expect(view.result).toHaveProperty(field);
    }
    expect(view.result.config.repairRounds).toBe(1);
  });

  it('starts an agent run with "config": {"mode": "agent"} and returns its steps', async () => {
    const response = await post({
      statement: 'If p is a prime number then p is at least 2.',
      config: { mode: 'agent', tools: ['write_file', 'run_lean'], maxSteps: 6 },
    });
    expect(response.statusCode).toBe(202);
    const { id } = response.json() as { id: string };
    expect((await env.client.workflow.getHandle(id).describe()).type).toBe('formalizeAgent');
    const view = await stack.withWorkers(async () => {
      for (;;) {
        const r = (await app.inject({ url: `/v1/formalizations/${id}` })).json();
        if (r.status !== 'running') return r;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    });
    expect(view.status).toBe('completed');
    expect(view.result).toMatchObject({ compiled: true, judge: { faithful: true }, config: { mode: 'agent', maxSteps: 6 } });
    expect(view.result.steps.map((s: { tool: string | null }) => s.tool)).toEqual(['write_file', 'run_lean', null]);
    // Only the offered tools were defined in the request.
    const agentRequest = stack.llm.requests.find((r) => r.tools)!;
    expect(agentRequest.tools!.map((t) => t.function.name)).toEqual(['write_file', 'run_lean']);
  });

  it('never starts a second run for a repeated caller-chosen id', async () => {
    const body = { statement: 'If p is a prime number then p is at least 2.', id: 'my-sweep/drift/item-1/0' };
    const first = await post(body);
    expect(first.statusCode).toBe(202);
    expect(first.json()).toMatchObject({ id: body.id });
    expect(first.json().existing).toBeUndefined();
    const again = await post(body);
    expect(again.statusCode).toBe(200);
    expect(again.json()).toMatchObject({ id: body.id, existing: true });
    // Still so once the run has finished.
    await stack.withWorkers(() => stack.result(body.id));
    const afterwards = await post(body);
    expect(afterwards.statusCode).toBe(200);
    expect(afterwards.json()).toMatchObject({ id: body.id, existing: true });
    const runs = await env.client.workflow.list({ query: `WorkflowId = '${body.id}'` });
    let count = 0;
    for await (const _ of runs) count++;
    expect(count).toBe(1);
  });

  it.each(['a b', 'héllo', '../x', 'a//b', 'a/', '/a', 'a/./b', '.'])(
    'answers 400 to the id %j, naming the characters allowed',
    async (id) => {
      const response = await post({ statement: 'p is prime', id });
      expect(response.statusCode).toBe(400);
      expect(response.json().detail).toMatch(/"id" may use letters A-Z and a-z, digits, "\.", "_", ":" and "-", with "\/" between parts/);
    },
  );
});

describe('GET /v1/formalizations/:id', () => {
  it('answers 404 for an unknown id', async () => {
    const response = await app.inject({ url: '/v1/formalizations/formalize-does-not-exist' });
    expect(response.statusCode).toBe(404);
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(response.json().detail).toMatch(/formalize-does-not-exist/);
  });
});

describe('health and readiness', () => {
  it('reports 503 with the failing checks until ready, then 200', async () => {
    ready = { ready: false, checks: { leanWorker: { ok: false, detail: 'no worker polls the "lean" task queue' } }, missing: [] };
    const notReady = await app.inject({ url: '/readyz' });
    expect(notReady.statusCode).toBe(503);
    expect(notReady.json().checks.leanWorker.detail).toMatch(/lean/);
    ready = { ready: true, checks: {}, missing: ['Lean: set LEAN_REPL_CMD'] };
    const ok = await app.inject({ url: '/readyz' });
    expect(ok.statusCode).toBe(200);
    expect(ok.json().missing).toEqual(['Lean: set LEAN_REPL_CMD']);
    expect((await app.inject({ url: '/healthz' })).statusCode).toBe(200);
  });
});

async function postRaw(payload: Buffer | string, headers: Record<string, string> = {}) {
  return app.inject({ method: 'POST', url: '/v1/formalizations', headers: { 'content-type': 'application/json', ...headers }, payload });
}

describe('what a new user met (each refused with the reason)', () => {
  it('answers 400 to a body that is not UTF-8, instead of replacing the bytes', async () => {
    const body = Buffer.concat([Buffer.from('{"statement": "p is prime '), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]);
    const response = await postRaw(body);
    expect(response.statusCode).toBe(400);
    expect(response.json().detail).toBe('the body is not valid UTF-8; send JSON encoded as UTF-8');
  });

  it('answers 400 to a lone surrogate escape', async () => {
    const response = await postRaw('{"statement": "p is prime \\ud800"}');
    expect(response.statusCode).toBe(400);
    expect(response.json().detail).toMatch(/statement contains a lone surrogate/);
    // A proper pair (an emoji) is fine.
    expect((await postRaw('{"statement": "p is prime \\ud83d\\ude00", "config": {"judge": "x"}}')).json().detail).toMatch(/config.judge/);
  });

  it('says a __proto__ key is valid JSON refused for safety', async () => {
    const response = await postRaw('{"statement": "p is prime", "__proto__": {"admin": true}}');
    expect(response.statusCode).toBe(400);
    expect(response.json().detail).toMatch(/valid JSON but has a "__proto__" key .* refused for safety/);
  });

  it('makes every accepted id readable, "/" included', async () => {
    const id = 'sweep-a/drift/item-7/0';
    const started = await post({ statement: 'If p is a prime number then p is at least 2.', id });
    expect(started.statusCode).toBe(202);
    expect(started.headers.location).toBe('/v1/formalizations/sweep-a%2Fdrift%2Fitem-7%2F0');
    const encoded = await app.inject({ url: started.headers.location as string });
    expect(encoded.statusCode).toBe(200);
    expect(encoded.json().id).toBe(id);
    const plain = await app.inject({ url: `/v1/formalizations/${id}` });
    expect(plain.statusCode).toBe(200);
    expect(plain.json().id).toBe(id);
    await stack.withWorkers(() => stack.result(id));
  });

  it('answers 414 to a 10,000-character id without echoing the URL', async () => {
    const response = await app.inject({ url: `/v1/formalizations/${'x'.repeat(10_000)}` });
    expect(response.statusCode).toBe(414);
    expect(response.body.length).toBeLessThan(400);
    expect(response.json().detail).toMatch(/too long/);
  });

  it('answers 409 when an id is re-used with a different request, naming what differs', async () => {
    const id = 'reuse-check-1';
    expect((await post({ statement: 'Every prime is at least 2.', id })).statusCode).toBe(202);
    const same = await post({ statement: 'Every prime is at least 2.', id });
    expect(same.statusCode).toBe(200);
    expect(same.json()).toMatchObject({ id, existing: true });
    const different = await post({ statement: 'Every prime is odd.', id, config: { repairRounds: 0 } });
    expect(different.statusCode).toBe(409);
    expect(different.json()).toMatchObject({ status: 409, id, differences: ['statement', 'config.repairRounds'] });
    expect(different.json().detail).toMatch(/already exists with a different statement, config.repairRounds/);
    await stack.withWorkers(() => stack.result(id));
  });

  it('takes the run id from an Idempotency-Key header', async () => {
    const key = 'idem-key-1';
    const first = await postRaw(JSON.stringify({ statement: 'Every prime is at least 2.' }), { 'idempotency-key': key });
    expect(first.statusCode).toBe(202);
    expect(first.json().id).toBe(key);
    const again = await postRaw(JSON.stringify({ statement: 'Every prime is at least 2.' }), { 'idempotency-key': key });
    expect(again.statusCode).toBe(200);
    const clash = await postRaw(JSON.stringify({ statement: 'Every prime is at least 2.', id: 'other-id' }), { 'idempotency-key': key });
    expect(clash.statusCode).toBe(400);
    expect(clash.json().detail).toMatch(/Idempotency-Key header .* and "id" .* differ/);
    await stack.withWorkers(() => stack.result(key));
  });
});

describe('POST /v1/formalizations/:id/cancel', () => {
  it('cancels a running run, which then reads as canceled; a second cancel is a 409', async () => {
    const { id } = (await post({ statement: 'Every prime is at least 2.' })).json() as { id: string };
    const cancel = await app.inject({ method: 'POST', url: `/v1/formalizations/${id}/cancel` });
    expect(cancel.statusCode).toBe(202);
    expect(cancel.json()).toMatchObject({ id, status: 'canceling' });
    // The workflow sees the request at its first task and ends canceled.
    await stack.withWorkers(() => stack.result(id).catch(() => undefined));
    const view = await app.inject({ url: `/v1/formalizations/${id}` });
    expect(view.json()).toMatchObject({ id, status: 'canceled' });
    const again = await app.inject({ method: 'POST', url: `/v1/formalizations/${id}/cancel` });
    expect(again.statusCode).toBe(409);
    expect(again.json().detail).toMatch(/already ended \(canceled\)/);
  });

  it('answers 404 for an unknown run', async () => {
    const response = await app.inject({ method: 'POST', url: '/v1/formalizations/nope-nope/cancel' });
    expect(response.statusCode).toBe(404);
  });
});

describe('GET /v1/formalizations (from Temporal visibility)', () => {
  async function until<T>(fn: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = await fn();
      if (value !== undefined) return value;
      if (Date.now() > deadline) throw new Error('condition not met in time');
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  it('pages with limit and nextPageToken, and filters by status, outcome and library', async () => {
    // Earlier tests completed several runs; wait until visibility shows at least three.
    const all = await until(async () => {
      const r = (await app.inject({ url: '/v1/formalizations?status=completed&limit=200' })).json();
      return r.items.length >= 3 ? r : undefined;
    });
    expect(all.items.every((i: { status: string }) => i.status === 'completed')).toBe(true);
    // Agent runs are listed too (their workflow type is formalizeAgent).
    expect(all.items.some((i: { config?: string }) => i.config?.startsWith('agent-'))).toBe(true);
    const page1 = (await app.inject({ url: '/v1/formalizations?status=completed&limit=2' })).json();
    expect(page1.items).toHaveLength(2);
    expect(page1.nextPageToken).toEqual(expect.any(String));
    const page2 = (await app.inject({ url: `/v1/formalizations?status=completed&limit=2&pageToken=${page1.nextPageToken}` })).json();
    const ids1 = page1.items.map((i: { id: string }) => i.id);
    for (const item of page2.items) expect(ids1).not.toContain(item.id);
    expect(page1.items[0]).toMatchObject({
      library: FIXTURE_LIBRARY,
      stage: 'done',
      links: { temporalUi: expect.stringContaining('/workflows/') },
    });

    const faithful = (await app.inject({ url: '/v1/formalizations?outcome=faithful&limit=200' })).json();
    expect(faithful.items.length).toBeGreaterThan(0);
    expect(faithful.items.every((i: { outcome: string }) => i.outcome === 'faithful')).toBe(true);
    expect((await app.inject({ url: '/v1/formalizations?library=other' })).json().items).toEqual([]);
    const canceled = (await app.inject({ url: '/v1/formalizations?status=canceled' })).json();
    expect(canceled.items.length).toBeGreaterThan(0);
  });

  it('answers 400 naming the allowed values of a bad filter, and to a forged page token', async () => {
    const bad = await app.inject({ url: '/v1/formalizations?status=lost' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().detail).toMatch(/"status" must be one of "running", "completed", "failed", "canceled"/);
    const forged = await app.inject({ url: '/v1/formalizations?pageToken=Zm9yZ2Vk.AAAAAAAAAAAAAAAA' });
    expect(forged.statusCode).toBe(400);
    expect(forged.json().detail).toMatch(/pageToken/);
    const { nextPageToken } = (await app.inject({ url: '/v1/formalizations?limit=1' })).json();
    const otherFilters = await app.inject({ url: `/v1/formalizations?limit=1&status=completed&pageToken=${nextPageToken}` });
    expect(otherFilters.statusCode).toBe(400);
  });
});

describe('libraries', () => {
  it('lists the libraries with their versions and the current alias', async () => {
    const response = await app.inject({ url: '/v1/libraries' });
    expect(response.statusCode).toBe(200);
    const [mini, other] = response.json().items;
    expect(mini).toMatchObject({ name: FIXTURE_LIBRARY, default: true, current: expect.stringMatching(/^mini-/) });
    expect(mini.versions[0]).toMatchObject({ version: mini.current, complete: true, declarations: expect.any(Number) });
    expect(other).toMatchObject({ name: 'other', default: false, versions: [] });
  });

  it('searches premises of the current version; unknown and unbuilt libraries are refused', async () => {
    const response = await app.inject({ url: '/v1/libraries/mini/search?q=prime%20number&k=3' });
    expect(response.statusCode).toBe(200);
    expect(response.json().items.length).toBeGreaterThan(0);
    expect(response.json().items.length).toBeLessThanOrEqual(3);
    expect(response.json().items[0].name).toMatch(/Prime/);
    // Ranked for a person: a name as typed (hyphens, any case) comes first.
    const named = await app.inject({ url: '/v1/libraries/mini/search?q=is-primitive-root&k=3' });
    expect(named.json().items[0].name).toBe('IsPrimitiveRoot');
    expect((await app.inject({ url: '/v1/libraries/nope/search?q=x' })).statusCode).toBe(404);
    expect((await app.inject({ url: '/v1/libraries/other/search?q=x' })).statusCode).toBe(409);
    expect((await app.inject({ url: '/v1/libraries/mini/search' })).json().detail).toMatch(/"q" is required/);
  });
});

describe('API keys and rate limits', () => {
  it('with keys configured, /v1 needs a valid bearer key; health and docs do not', async () => {
    const keyed = await server({ apiKeys: [{ name: 'alice', sha256: hashKey('secret-alice') }] });
    const none = await keyed.inject({ url: '/v1/libraries' });
    expect(none.statusCode).toBe(401);
    expect(none.headers['www-authenticate']).toBe('Bearer');
    expect(none.json().detail).toMatch(/Authorization: Bearer/);
    expect((await keyed.inject({ url: '/v1/libraries', headers: { authorization: 'Bearer wrong' } })).statusCode).toBe(401);
    expect((await keyed.inject({ url: '/v1/libraries', headers: { authorization: 'Bearer secret-alice' } })).statusCode).toBe(200);
    expect((await keyed.inject({ url: '/healthz' })).statusCode).toBe(200);
    expect((await keyed.inject({ url: '/openapi.json' })).statusCode).toBe(200);
  });

  it("starts a key's runs and checks in that key's trust domain (their Lean checks never share a REPL with another's)", async () => {
    const keyed = await server({ apiKeys: [{ name: 'alice', sha256: hashKey('secret-alice') }] });
    const headers = { authorization: 'Bearer secret-alice', 'content-type': 'application/json' };
    const run = await keyed.inject({
      method: 'POST',
      url: '/v1/formalizations',
      headers,
      payload: { statement: 'Every prime is at least 2.' },
    });
    expect(run.statusCode).toBe(202);
    const checks = await keyed.inject({
      method: 'POST',
      url: '/v1/checks',
      headers,
      payload: { statements: [{ statement: 'theorem t : True := by sorry' }] },
    });
    expect(checks.statusCode).toBe(202);
    for (const id of [run.json().id as string, checks.json().id as string]) {
      const history = await env.client.workflow.getHandle(id).fetchHistory();
      const attributes = history.events?.[0]?.workflowExecutionStartedEventAttributes;
      const [input] = await Promise.all(
        (attributes?.input?.payloads ?? []).map((p) => env.client.options.loadedDataConverter.payloadConverter.fromPayload(p)),
      );
      expect((input as { trustDomain?: string }).trustDomain).toBe('key:alice');
    }
  });

  it('limits each key on its own, answering 429 with Retry-After', async () => {
    const limited = await server({
      apiKeys: [
        { name: 'a', sha256: hashKey('key-a') },
        { name: 'b', sha256: hashKey('key-b') },
      ],
      rateLimit: { max: 2, timeWindowMs: 60_000 },
    });
    const get = (key: string) => limited.inject({ url: '/v1/libraries', headers: { authorization: `Bearer ${key}` } });
    expect((await get('key-a')).statusCode).toBe(200);
    expect((await get('key-a')).statusCode).toBe(200);
    const third = await get('key-a');
    expect(third.statusCode).toBe(429);
    expect(third.headers['retry-after']).toEqual(expect.any(String));
    expect(third.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(third.json().detail).toMatch(/too many requests: at most 2/);
    expect((await get('key-b')).statusCode).toBe(200);
  });
});

describe('load shedding', () => {
  it('answers 503 with Retry-After while the event loop is saturated', async () => {
    const loaded = await server({ pressure: { maxEventLoopDelayMs: 50, sampleIntervalMs: 20 } });
    // An event loop kept busy, as under a burst of heavy requests: blocked for 100 ms at a time
    // for as long as the request takes, so every sample sees it (one single block is forgotten
    // by the sample after it, and the request could land after that).
    const busy = setInterval(() => {
      const until = Date.now() + 100;
      while (Date.now() < until) {
        // blocked
      }
    }, 5);
    try {
      await new Promise((r) => setTimeout(r, 150));
      const response = await loaded.inject({ url: '/v1/libraries' });
      expect(response.statusCode).toBe(503);
      expect(response.headers['retry-after']).toBe('10');
      expect(response.json().detail).toMatch(/overloaded/);
    } finally {
      clearInterval(busy);
    }
  });
});

describe('what Schemathesis found (test/integration/api-schemathesis.test.ts)', () => {
  it('answers 405 with an Allow header to a method the path does not have, before reading any body', async () => {
    const cases: [string, string, string][] = [
      ['TRACE', '/healthz', 'GET, HEAD'],
      // A QUERY has a body: it used to be refused for its missing Content-Type (400) before routing.
      ['QUERY', '/v1/formalizations/some-run', 'GET, HEAD'],
      // Only POST: the catch-all that explains "/" in ids does not count as allowing GET here.
      ['OPTIONS', '/v1/formalizations/some-run/cancel', 'POST'],
      ['DELETE', '/v1/formalizations', 'GET, HEAD, POST'],
    ];
    for (const [method, url, allow] of cases) {
      const response = await app.inject({ method: method as 'GET', url });
      expect(response.statusCode, `${method} ${url}`).toBe(405);
      expect(response.headers.allow, `${method} ${url}`).toBe(allow);
      expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(response.json().detail).toBe(`${method} is not allowed on ${url}; allowed: ${allow}`);
    }
    // A path no route has stays a 404.
    expect((await app.inject({ method: 'TRACE', url: '/v2/nothing' })).statusCode).toBe(404);
  });

  it('documents on every operation the problems the server around it answers, and who needs a key', async () => {
    const keyed = await server({ apiKeys: [{ name: 'alice', sha256: hashKey('secret-alice') }] });
    const doc = (await keyed.inject({ url: '/openapi.json' })).json() as {
      security?: unknown;
      paths: Record<
        string,
        Record<
          string,
          {
            parameters?: { in: string }[];
            requestBody?: unknown;
            security?: unknown;
            responses: Record<string, { content?: Record<string, unknown> }>;
          }
        >
      >;
    };
    expect(doc.security).toBeUndefined();
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        const where = `${method} ${path}`;
        const expected = ['503'];
        if (path.startsWith('/v1/')) expected.push('401', '429');
        if (operation.parameters?.length || operation.requestBody) expected.push('400');
        if (operation.parameters?.some((p) => p.in === 'path')) expected.push('414');
        if (method === 'post') expected.push('413', '415');
        for (const status of expected) {
          expect(Object.keys(operation.responses[status]?.content ?? {}), `${where} ${status}`).toContain('application/problem+json');
        }
        expect(operation.security, where).toEqual(path.startsWith('/v1/') ? [{ apiKey: [] }] : undefined);
      }
    }
    // /readyz's own 503 is its report.
    expect(Object.keys(doc.paths['/readyz']!.get!.responses['503']!.content!)).toEqual(['application/json', 'application/problem+json']);
    // A start links to the operations that take the new run's id.
    const start = doc.paths['/v1/formalizations']!.post!.responses['202'] as {
      links?: Record<string, { operationId: string; parameters: unknown }>;
    };
    expect(start.links).toEqual({
      read: { operationId: 'getFormalization', parameters: { id: '$response.body#/id' } },
      cancel: { operationId: 'cancelFormalization', parameters: { id: '$response.body#/id' } },
      events: { operationId: 'getFormalizationEvents', parameters: { id: '$response.body#/id' } },
    });
    // The libraries a run may name are the configured ones.
    const body = (
      doc.paths['/v1/formalizations']!.post!.requestBody as {
        content: Record<string, { schema: { properties: { library: { enum: string[] } } } }>;
      }
    ).content['application/json']!.schema;
    expect(body.properties.library.enum).toEqual([FIXTURE_LIBRARY, 'other']);
    // Each event of a stream is described as the object of its SSE fields, not as one string.
    const events = doc.paths['/v1/formalizations/{id}/events']!.get!.responses['200']!.content!['text/event-stream'] as {
      schema: { type: string; required: string[] };
    };
    expect(events.schema.type).toBe('object');
    expect(events.schema.required).toEqual(['event', 'data']);
  });

  it('treats the id of another workflow (a sweep) as no run: 404 to read, stream or cancel it, 409 to start a run under it', async () => {
    // Temporal starts any workflow type; nobody polls this queue, so it stays running (it was a 500).
    const other = await env.client.workflow.start('sweep', { taskQueue: 'nobody-polls-this', workflowId: 'not-a-run', args: [] });
    try {
      for (const [method, url] of [
        ['GET', '/v1/formalizations/not-a-run'],
        ['GET', '/v1/formalizations/not-a-run/events'],
        ['POST', '/v1/formalizations/not-a-run/cancel'],
      ] as const) {
        const response = await app.inject({ method, url });
        expect(response.statusCode, `${method} ${url}`).toBe(404);
        expect(response.json().detail).toBe('no formalization with id "not-a-run"');
      }
      expect((await other.describe()).status.name).toBe('RUNNING');
      const taken = await post({ statement: 'p is prime', id: 'not-a-run' });
      expect(taken.statusCode).toBe(409);
      expect(taken.json().detail).toBe('id "not-a-run" belongs to a sweep workflow, not a formalization run; choose another id');
    } finally {
      await other.terminate();
    }
  });

  it("answers the router's own refusals as problems, without echoing the path", async () => {
    const long = await app.inject({ url: `/v1/libraries/${'n'.repeat(2000)}/search?q=prime` });
    expect(long.statusCode).toBe(414);
    expect(long.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(long.json().detail).toBe('a path parameter is too long (at most 1000 characters)');
    const badEscape = await app.inject({ url: '/v1/libraries/%E0%A4%A/search?q=prime' });
    expect(badEscape.statusCode).toBe(400);
    expect(badEscape.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(badEscape.json().detail).toMatch(/the URL path is not valid/);
  });
});

describe('OpenAPI', () => {
  it('describes every route with response schemas at /openapi.json, and serves /docs', async () => {
    const doc = (await app.inject({ url: '/openapi.json' })).json();
    expect(doc.openapi).toMatch(/^3\./);
    const expected: [string, string][] = [
      ['post', '/v1/formalizations'],
      ['get', '/v1/formalizations'],
      ['get', '/v1/formalizations/{id}'],
      ['post', '/v1/formalizations/{id}/cancel'],
      ['get', '/v1/formalizations/{id}/events'],
      ['get', '/v1/libraries'],
      ['get', '/v1/libraries/{name}/search'],
      ['get', '/healthz'],
      ['get', '/readyz'],
    ];
    for (const [method, path] of expected) {
      const operation = doc.paths[path]?.[method];
      expect(operation, `${method} ${path}`).toBeDefined();
      const ok = Object.keys(operation.responses).filter((code) => code.startsWith('2'));
      expect(ok.length, `${method} ${path}`).toBeGreaterThan(0);
      for (const code of ok)
        expect(Object.keys(operation.responses[code].content ?? {}).length, `${method} ${path} ${code}`).toBeGreaterThan(0);
    }
    const docs = await app.inject({ url: '/docs' });
    const page = docs.statusCode === 302 ? await app.inject({ url: docs.headers.location as string }) : docs;
    expect(page.headers['content-type']).toMatch(/text\/html/);
  });
});
