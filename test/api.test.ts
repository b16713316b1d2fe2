// The HTTP API against the real Temporal dev server: what it accepts, what it refuses and why,
// and that a run started over HTTP can be read back to completion.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { buildServer, type ReadinessReport } from '../api/server';
import { createStack, FIXTURE_LIBRARY, startTemporal, type TestStack } from './helpers/stack';

let env: TestWorkflowEnvironment;
let stack: TestStack;
let app: FastifyInstance;
let ready: ReadinessReport = { ready: true, checks: {}, missing: [] };

beforeAll(async () => {
  env = await startTemporal();
  stack = await createStack(env, { queue: 'default' });
  app = await buildServer({
    temporal: env.client,
    libraries: [FIXTURE_LIBRARY, 'other'],
    defaultLibrary: FIXTURE_LIBRARY,
    maxStatementChars: 20_000,
    readiness: async () => ready,
    taskQueue: stack.mainQueue,
  });
});

afterAll(async () => {
  await app?.close();
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
    ['an unknown retrieval mode', { statement: 'p is prime', config: { retrieval: 'psychic' } }, /config.retrieval/],
    ['an unknown library', { statement: 'p is prime', library: 'nope' }, /unknown library "nope"; known: mini, other/],
    ['oracle retrieval without gold premises', { statement: 'p is prime', config: { retrieval: 'oracle' } }, /goldPremises/],
  ])('answers 400 to %s, saying what is wrong', async (_name, body, message) => {
    const response = await post(body);
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ error: 'BadRequest' });
    expect(response.json().message).toMatch(message);
  });

  it('answers 400 to a body that is not JSON', async () => {
    const response = await post('{"statement": ');
    expect(response.statusCode).toBe(400);
  });

  it('starts a run (202 with its id) that can be read back until it completes', async () => {
    const response = await post({ statement: 'If p is a prime number then p is at least 2.', config: { repairRounds: 1 } });
    expect(response.statusCode).toBe(202);
    const { id } = response.json() as { id: string };
    expect(response.headers.location).toBe(`/v1/formalizations/${id}`);

    const first = await app.inject({ url: `/v1/formalizations/${id}` });
    expect(first.statusCode).toBe(200);
    expect(first.json()).toMatchObject({ id, status: 'running' });

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

  it('never starts a second run for a repeated caller-chosen id', async () => {
    const body = { statement: 'If p is a prime number then p is at least 2.', id: 'my-sweep/drift/item-1/0' };
    const first = await post(body);
    expect(first.statusCode).toBe(202);
    expect(first.json()).toEqual({ id: body.id });
    const again = await post(body);
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual({ id: body.id, existing: true });
    // Still so once the run has finished.
    await stack.withWorkers(() => stack.result(body.id));
    const afterwards = await post(body);
    expect(afterwards.statusCode).toBe(200);
    expect(afterwards.json()).toEqual({ id: body.id, existing: true });
    const runs = await env.client.workflow.list({ query: `WorkflowId = '${body.id}'` });
    let count = 0;
    for await (const _ of runs) count++;
    expect(count).toBe(1);
  });

  it('answers 400 to an id with characters outside [A-Za-z0-9._:/-]', async () => {
    const response = await post({ statement: 'p is prime', id: 'spaces are bad' });
    expect(response.statusCode).toBe(400);
    expect(response.json().message).toMatch(/"id"/);
  });
});

describe('GET /v1/formalizations/:id', () => {
  it('answers 404 for an unknown id', async () => {
    const response = await app.inject({ url: '/v1/formalizations/formalize-does-not-exist' });
    expect(response.statusCode).toBe(404);
    expect(response.json().message).toMatch(/formalize-does-not-exist/);
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
