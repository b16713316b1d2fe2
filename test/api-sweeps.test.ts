// The sweep routes of the HTTP API against the real Temporal dev server: start a sweep from a
// sweep file's object, read its progress, pause/resume/cancel, and get its report.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { buildServer } from '../api/server';
import { createStack, FIXTURE_LIBRARY, startTemporal, type TestStack } from './helpers/stack';
import { MINI_BENCHMARK, waitFor } from './helpers/sweep';
import { fileURLToPath } from 'node:url';
import { dirname } from 'node:path';

let env: TestWorkflowEnvironment;
let stack: TestStack;
let app: FastifyInstance;

beforeAll(async () => {
  env = await startTemporal();
  stack = await createStack(env);
  app = await buildServer({
    temporal: env.client,
    libraries: [FIXTURE_LIBRARY],
    defaultLibrary: FIXTURE_LIBRARY,
    maxStatementChars: 20_000,
    readiness: async () => ({ ready: true, checks: {}, missing: [] }),
    taskQueue: stack.mainQueue,
    pressure: { maxEventLoopDelayMs: 0 },
    temporalUiUrl: 'http://ui.example:8233',
    // Relative benchmark paths resolve against the data directory: the fixtures' here.
    sweeps: { results: stack.results, dataDir: dirname(MINI_BENCHMARK) },
  });
});

afterAll(async () => {
  await app?.close();
  await stack?.close();
  await env?.teardown();
});

const sweepBody = (extra: Record<string, unknown> = {}) => ({
  benchmark: { path: 'mini.dev.jsonl', format: 'rautoformalizer', limit: 3 },
  library: FIXTURE_LIBRARY,
  window: 2,
  configurations: { drift: {}, zero: { retrieval: 'none', illustrate: false, repairRounds: 0 } },
  ...extra,
});

async function post(url: string, body?: unknown) {
  return app.inject({ method: 'POST', url, ...(body !== undefined ? { headers: { 'content-type': 'application/json' }, payload: JSON.stringify(body) } : {}) });
}

describe('/v1/sweeps', () => {
  it('starts a sweep, reports progress, and serves the report once runs are done', async () => {
    const started = await post('/v1/sweeps?id=api-sweep', sweepBody());
    expect(started.statusCode, started.body).toBe(202);
    expect(started.headers.location).toBe('/v1/sweeps/api-sweep');
    expect(started.json()).toEqual({ id: 'api-sweep', existing: false, total: 6, configurations: ['drift', 'zero'], reused: [] });
    // The same ID again: the existing sweep, nothing new.
    expect((await post('/v1/sweeps?id=api-sweep', sweepBody())).json()).toMatchObject({ id: 'api-sweep', existing: true });

    const early = await app.inject({ method: 'GET', url: '/v1/sweeps/api-sweep' });
    expect(early.json()).toMatchObject({ sweepId: 'api-sweep', status: 'running', total: 6, done: 0 });
    expect((await app.inject({ method: 'GET', url: '/v1/sweeps/api-sweep/report' })).statusCode).toBe(409);

    await stack.withWorkers(async () => {
      expect((await post('/v1/sweeps/api-sweep/pause')).statusCode).toBe(202);
      await waitFor('paused', async () => (await app.inject({ method: 'GET', url: '/v1/sweeps/api-sweep' })).json().status === 'paused');
      expect((await post('/v1/sweeps/api-sweep/resume')).statusCode).toBe(202);
      await stack.client.workflow.getHandle('api-sweep').result();
    });
    const done = (await app.inject({ method: 'GET', url: '/v1/sweeps/api-sweep' })).json();
    expect(done).toMatchObject({ status: 'completed', total: 6, done: 6, failed: 0, perConfig: { zero: { total: 3, done: 3 } } });
    expect((await post('/v1/sweeps/api-sweep/cancel')).statusCode).toBe(409);

    const html = await app.inject({ method: 'GET', url: '/v1/sweeps/api-sweep/report' });
    expect(html.statusCode).toBe(200);
    expect(html.headers['content-type']).toMatch(/text\/html/);
    expect(html.body).toContain('<svg');
    expect(html.body).toContain('http://ui.example:8233/namespaces/default/workflows/');
    const md = await app.inject({ method: 'GET', url: '/v1/sweeps/api-sweep/report?format=md' });
    expect(md.headers['content-type']).toMatch(/text\/markdown/);
    expect(md.body).toContain('zero');
    const csv = await app.inject({ method: 'GET', url: '/v1/sweeps/api-sweep/report?format=csv' });
    expect(csv.body.trimEnd().split('\n')).toHaveLength(7);
  }, 600_000);

  it('refuses a bad sweep file naming the field, a bad record naming its line, and unknown sweeps', async () => {
    const bad = await post('/v1/sweeps', sweepBody({ configurations: { drift: { topK: 0 } } }));
    expect(bad.statusCode).toBe(400);
    expect(bad.json().detail).toMatch(/configurations\.drift\.topK/);
    const line = await post('/v1/sweeps', sweepBody({ benchmark: { path: 'bad-line.jsonl', format: 'rautoformalizer' } }));
    expect(line.statusCode).toBe(400);
    expect(line.json().detail).toMatch(/bad-line\.jsonl:3: informal_stmt/);
    const lib = await post('/v1/sweeps', sweepBody({ library: 'nowhere' }));
    expect(lib.json().detail).toMatch(/library: "nowhere" is not configured/);
    expect((await app.inject({ method: 'GET', url: '/v1/sweeps/nope' })).statusCode).toBe(404);
    expect((await post('/v1/sweeps/nope/pause')).statusCode).toBe(404);
    expect((await app.inject({ method: 'GET', url: '/v1/sweeps/nope/report' })).statusCode).toBe(404);
  });
});
