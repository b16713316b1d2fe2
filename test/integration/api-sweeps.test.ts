// The sweep routes of the HTTP API against the real Temporal dev server, with the workers and
// fakes in this process: a sweep file's content starts a sweep (idempotent by id, 409 for a
// different file under the same id), progress, pause/resume/cancel, the report in each format,
// and the refusals, each saying what is wrong.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { dirname } from 'node:path';
import { buildServer, type ApiOptions } from '../../api/server';
import { createStack, FIXTURE_LIBRARY, startTemporal, type TestStack } from '../helpers/stack';
import { MINI_BENCHMARK, waitFor } from '../helpers/sweep';
import { staleFirstDescribe } from '../helpers/stale-client';
import { FAKE_MODELS } from '../fakes/openai-server';
import type { SweepBatchesView } from '../../common/wire';

const UI = 'http://ui.example:8233';

let env: TestWorkflowEnvironment;
let stack: TestStack;
let app: FastifyInstance;

beforeAll(async () => {
  env = await startTemporal();
  // The API starts sweeps on the production task queue names (this file has its own server).
  stack = await createStack(env, { queue: 'default' });
  app = await buildServer(serverOptions());
});

function serverOptions(): ApiOptions {
  return {
    temporal: env.client,
    libraries: [FIXTURE_LIBRARY],
    defaultLibrary: FIXTURE_LIBRARY,
    maxStatementChars: 20_000,
    readiness: async () => ({ ready: true, checks: {}, missing: [] }),
    // Bundling workflows in this process stalls its event loop; load shedding has its own test.
    pressure: { maxEventLoopDelayMs: 0 },
    temporalUiUrl: UI,
    providerNames: ['default'],
    // Benchmark paths resolve against the data directory: the fixtures' here.
    sweeps: {
      results: stack.results,
      dataDir: dirname(MINI_BENCHMARK),
      llmQuota: async () => [QUOTA],
      // Batch mode's reader (the batchers' in production): `api-sweep` has batches; reading
      // `api-cancel`'s fails, which must not fail its view.
      batches: async (id) => {
        if (id === 'api-cancel') throw new Error('the batchers cannot be read');
        return id === 'api-sweep' ? BATCHES : undefined;
      },
    },
  };
}

/** A sweep's provider batches as the batchers would report them. */
const BATCHES: SweepBatchesView = {
  inFlight: 1,
  submitted: 3,
  completed: 1,
  failed: 1,
  requests: 130,
  resubmitted: 12,
  synchronous: 2,
  batches: [
    {
      id: 'batch_1',
      provider: 'default',
      model: FAKE_MODELS.judge,
      status: 'in_progress',
      requests: 40,
      since: '2026-12-06T21:00:00.000Z',
    },
  ],
};

/** What the deployment's LLM quota reads (infra/llm-quota.ts in production). */
const QUOTA = { provider: 'default', binding: 'tokens' as const, utilisation: 0.93, summary: 'default: tokens binds at 93%' };

afterAll(async () => {
  await app?.close();
  await stack?.close();
  await env?.teardown();
});

/** A sweep file's content: 2 items × 2 configurations, window 2. */
const sweepFile = (extra: Record<string, unknown> = {}) => ({
  benchmark: { path: 'mini.dev.jsonl', format: 'rautoformalizer', limit: 2 },
  library: FIXTURE_LIBRARY,
  window: 2,
  configurations: { drift: {}, zero: { retrieval: 'none', illustrate: false, repairRounds: 0, judge: false } },
  ...extra,
});

const post = (url: string, body?: unknown) =>
  app.inject({
    method: 'POST',
    url,
    ...(body !== undefined
      ? { headers: { 'content-type': 'application/json' }, payload: typeof body === 'string' ? body : JSON.stringify(body) }
      : {}),
  });
const get = (url: string, headers: Record<string, string> = {}) => app.inject({ method: 'GET', url, headers });

function expectProblem(response: Awaited<ReturnType<typeof get>>, status: number, detail: RegExp): void {
  expect(response.statusCode, response.body).toBe(status);
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(response.json()).toMatchObject({ status, detail: expect.stringMatching(detail) });
}

describe('POST /v1/sweeps refuses', () => {
  it.each([
    ['a field of the wrong type, naming its path', sweepFile({ configurations: { drift: { topK: 0 } } }), /configurations\.drift\.topK/],
    ['an unknown field', sweepFile({ colour: 'red' }), /unknown field "colour"/],
    ['a missing library', { benchmark: sweepFile().benchmark, configurations: { a: {} } }, /library/],
    ['no configurations', { benchmark: sweepFile().benchmark, library: FIXTURE_LIBRARY }, /declare "configurations"/],
    ['an unknown format', sweepFile({ benchmark: { path: 'mini.dev.jsonl', format: 'csv' } }), /benchmark\.format/],
    [
      'a bad record, naming file and line',
      sweepFile({ benchmark: { path: 'bad-line.jsonl', format: 'rautoformalizer' } }),
      /^"bad-line\.jsonl":3: not a record of the benchmark's format \(look at informal_stmt, mathlib_dependencies\)$/,
    ],
    ['a missing benchmark file', sweepFile({ benchmark: { path: 'nowhere.jsonl', format: 'rautoformalizer' } }), /nowhere\.jsonl/],
    [
      'a benchmark outside the data directory',
      sweepFile({ benchmark: { path: '/etc/passwd', format: 'rautoformalizer' } }),
      /data directory only/,
    ],
    [
      'a relative path leaving the data directory',
      sweepFile({ benchmark: { path: '../corpus/mini.jsonl', format: 'rautoformalizer' } }),
      /data directory only/,
    ],
    ['a library not configured', sweepFile({ library: 'nowhere' }), /library: "nowhere" is not configured; known: mini/],
    ['an id with a slash', sweepFile({ id: 'a/b' }), /- id: use letters, digits/],
    ['a body that is not an object', [1, 2], /the body must be a sweep file as a JSON object/],
    [
      'an LLM provider not configured',
      sweepFile({ configurations: { a: { providers: { judge: 'elsewhere' } } } }),
      /configurations\.a: "providers\.judge": no LLM provider "elsewhere" is configured \(configured: "default"\)/,
    ],
    [
      'batch mode on a stack that serves none',
      sweepFile({ llm: { batch: true } }),
      /^llm\.batch: batch mode was asked for, but the stack has no batch-capable LLM provider .*DRIFTLINE_LLM_BATCH=1/,
    ],
    ['a batch setting of the wrong type', sweepFile({ llm: { batch: 'yes' } }), /llm\.batch/],
  ])('%s', async (_name, body, detail) => {
    expectProblem(await post('/v1/sweeps', body), 400, detail);
  });

  it('different ids in the query and the body, and a body that is not JSON', async () => {
    expectProblem(await post('/v1/sweeps?id=one', sweepFile({ id: 'two' })), 400, /differ/);
    const text = await app.inject({ method: 'POST', url: '/v1/sweeps', headers: { 'content-type': 'text/plain' }, payload: 'window: 2' });
    expectProblem(text, 400, /the body must be a sweep file as a JSON object \(Content-Type: application\/json\)/);
  });

  it('answers 404 for a sweep that does not exist, in every route', async () => {
    for (const response of [
      await get('/v1/sweeps/nope'),
      await get(`/v1/sweeps/${encodeURIComponent('a\u0001b/ü')}`),
      await get('/v1/sweeps/nope/report'),
      await post('/v1/sweeps/nope/pause'),
      await post('/v1/sweeps/nope/cancel'),
      await post('/v1/sweeps/nope/rescore', { id: 'nope-rescored', judge: 'default' }),
      await post('/v1/sweeps/nope/retry'),
    ]) {
      expectProblem(response, 404, /no sweep "/);
    }
  });

  it('documents the sweep file as the body schema, and every format of the report, in /openapi.json', async () => {
    const doc = (await get('/openapi.json')).json();
    const start = doc.paths['/v1/sweeps'].post;
    const body = start.requestBody.content['application/json'].schema;
    expect(Object.keys(body.properties)).toEqual(
      expect.arrayContaining(['id', 'benchmark', 'library', 'samples', 'window', 'retry', 'leaveOut', 'configurations', 'factorial']),
    );
    expect(body.properties.configurations.additionalProperties.properties.retrieval.enum).toEqual([
      'drift',
      'monolithic',
      'oracle',
      'none',
    ]);
    expect(Object.keys(start.responses)).toEqual(expect.arrayContaining(['200', '202', '400', '409']));
    const report = doc.paths['/v1/sweeps/{id}/report'].get.responses['200'].content;
    expect(Object.keys(report).sort()).toEqual(['application/json', 'text/csv', 'text/html', 'text/markdown']);
    for (const signal of ['pause', 'resume', 'cancel']) expect(doc.paths[`/v1/sweeps/{id}/${signal}`].post.responses['202']).toBeDefined();
    // A sweep's view documents its provider batches.
    const view = doc.paths['/v1/sweeps/{id}'].get.responses['200'].content['application/json'].schema;
    expect(Object.keys(view.properties.batches.properties)).toEqual(
      expect.arrayContaining(['inFlight', 'submitted', 'completed', 'failed', 'requests', 'resubmitted', 'synchronous', 'batches']),
    );
  });
});

describe('a sweep over HTTP', () => {
  it('starts once per id, pauses, resumes, completes, serves its report; another is cancelled', async () => {
    const started = await post('/v1/sweeps', sweepFile({ id: 'api-sweep' }));
    expect(started.statusCode, started.body).toBe(202);
    expect(started.headers.location).toBe('/v1/sweeps/api-sweep');
    expect(started.json()).toEqual({
      id: 'api-sweep',
      existing: false,
      total: 4,
      configurations: ['drift', 'zero'],
      reused: [],
      links: {
        self: '/v1/sweeps/api-sweep',
        report: '/v1/sweeps/api-sweep/report',
        temporalUi: `${UI}/namespaces/default/workflows/api-sweep`,
        temporalUiRuns: `${UI}/namespaces/default/workflows?query=${encodeURIComponent('DriftlineSweep="api-sweep"')}`,
      },
    });
    // The same sweep file under that id (in the query this time): the existing sweep.
    const again = await post('/v1/sweeps?id=api-sweep', sweepFile());
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json()).toMatchObject({ id: 'api-sweep', existing: true, total: 4 });
    // A different sweep file under that id: refused, naming what differs.
    const other = await post(
      '/v1/sweeps?id=api-sweep',
      sweepFile({ window: 3, configurations: { drift: {}, zero: { retrieval: 'none' } } }),
    );
    expectProblem(other, 409, /already exists with a different window, configurations\.zero/);
    expect(other.json().differences).toEqual(['window', 'configurations.zero']);

    // No worker yet: the progress comes from the results database, and there is nothing to report.
    expect((await get('/v1/sweeps/api-sweep')).json()).toMatchObject({
      sweepId: 'api-sweep',
      status: 'running',
      total: 4,
      done: 0,
      links: { self: '/v1/sweeps/api-sweep' },
      // A sweep still going carries the providers' quota, for its card on the web page.
      llmQuota: [QUOTA],
    });
    expect((await get('/v1/sweeps')).json().items.find((v: { sweepId: string }) => v.sweepId === 'api-sweep').llmQuota).toEqual([QUOTA]);
    // …and its provider batches, as read, in both answers.
    expect((await get('/v1/sweeps/api-sweep')).json().batches).toEqual(BATCHES);
    expect((await get('/v1/sweeps')).json().items.find((v: { sweepId: string }) => v.sweepId === 'api-sweep').batches).toEqual(BATCHES);
    expectProblem(await get('/v1/sweeps/api-sweep/report'), 409, /no finished runs yet/);

    // Paused before any worker runs it: nothing starts until it is resumed.
    expect((await post('/v1/sweeps/api-sweep/pause')).json()).toMatchObject({
      id: 'api-sweep',
      signal: 'pause',
      links: { temporalUi: `${UI}/namespaces/default/workflows/api-sweep` },
    });
    expect((await post('/v1/sweeps', sweepFile({ id: 'api-cancel' }))).statusCode).toBe(202);
    expect((await post('/v1/sweeps/api-cancel/cancel')).statusCode).toBe(202);
    // Batches that cannot be read leave them out of the view, not the view out of the answer.
    const cancelView = await get('/v1/sweeps/api-cancel');
    expect(cancelView.statusCode).toBe(200);
    expect(cancelView.json().batches).toBeUndefined();
    // A retry waits for the sweep to end.
    expectProblem(await post('/v1/sweeps/api-sweep/retry'), 409, /still (running|paused)/);

    await stack.withWorkers(async () => {
      const paused = await waitFor(
        'the paused sweep to answer',
        async () => {
          const view = (await get('/v1/sweeps/api-sweep')).json();
          return view.status === 'paused' ? view : null;
        },
        180_000,
      );
      expect(paused).toMatchObject({ done: 0, running: 0 });
      expect((await post('/v1/sweeps/api-sweep/resume')).statusCode).toBe(202);
      await stack.client.workflow.getHandle('api-sweep').result();
      await stack.client.workflow.getHandle('api-cancel').result();
    });

    const done = (await get('/v1/sweeps/api-sweep')).json();
    expect(done).toMatchObject({
      status: 'completed',
      total: 4,
      done: 4,
      failed: 0,
      running: 0,
      perConfig: { drift: { total: 2, done: 2 }, zero: { total: 2, done: 2 } },
    });
    expect((await get('/v1/sweeps/api-cancel')).json()).toMatchObject({ status: 'cancelled', done: 0 });
    expectProblem(await post('/v1/sweeps/api-sweep/cancel'), 409, /has ended \(completed\)/);
    expectProblem(await post('/v1/sweeps/api-cancel/resume'), 409, /has ended \(cancelled\)/);
    // Nothing failed: a retry answers 200 and starts nothing (`driftline sweep retry` is tested
    // with failed units in sweep-retry.test.ts).
    const retry = await post('/v1/sweeps/api-sweep/retry');
    expect(retry.statusCode).toBe(200);
    expect(retry.json()).toMatchObject({ id: 'api-sweep', round: null, retried: 0, perConfig: {}, total: 4 });

    // A sweep that ends between the route's status check and its signal (Schemathesis met it:
    // a resume of a sweep that another resume had just let finish) is a 409 too, not a 500.
    const stale = await buildServer({ ...serverOptions(), temporal: staleFirstDescribe(env.client) });
    try {
      expectProblem(
        await stale.inject({ method: 'POST', url: '/v1/sweeps/api-sweep/resume' }),
        409,
        /has ended \(just now\); it cannot resume/,
      );
    } finally {
      await stale.close();
    }

    // A rescore of the finished sweep: started (no worker runs it here; the CLI's test does),
    // idempotent by id, and refused with the reason when asked wrongly.
    const rescore = { id: 'api-rescored', judge: 'default:fake-judge-two', threshold: 7, rubric: 'Grade it.' };
    const rescored = await post('/v1/sweeps/api-sweep/rescore', rescore);
    expect(rescored.statusCode, rescored.body).toBe(202);
    expect(rescored.json()).toMatchObject({ id: 'api-rescored', existing: false, total: 4, configurations: ['drift', 'zero'] });
    expect((await post('/v1/sweeps/api-sweep/rescore', rescore)).statusCode).toBe(200);
    expectProblem(
      await post('/v1/sweeps/api-sweep/rescore', { ...rescore, threshold: 9 }),
      409,
      /already exists with a different threshold/,
    );
    expectProblem(
      await post('/v1/sweeps/api-sweep/rescore', { id: 'api-rescored-2', judge: 'elsewhere' }),
      400,
      /judge elsewhere: no LLM provider "elsewhere" is configured \(configured: "default"\)/,
    );
    expectProblem(await post('/v1/sweeps/api-sweep/rescore', { id: 'api-rescored-2', judge: 'no such' }), 400, /judge: expected PROVIDER/);
    expectProblem(await post('/v1/sweeps/api-sweep/rescore', { id: 'a/b', judge: 'default' }), 400, /sweep id "a\/b"/);
    expect((await stack.results.getSweep('api-rescored'))!.rescoreOf).toBe('api-sweep');

    const html = await get('/v1/sweeps/api-sweep/report');
    expect(html.statusCode).toBe(200);
    expect(html.headers['content-type']).toMatch(/^text\/html/);
    expect(html.body).toContain('<svg');
    expect(html.body).toContain(`${UI}/namespaces/default/workflows/${encodeURIComponent('api-sweep/zero/')}`);
    const md = await get('/v1/sweeps/api-sweep/report', { accept: 'text/markdown' });
    expect(md.headers['content-type']).toMatch(/^text\/markdown/);
    expect(md.body).toMatch(/\| zero /);
    const json = await get('/v1/sweeps/api-sweep/report', { accept: 'text/csv;q=0.5, application/json' });
    expect(json.headers['content-type']).toMatch(/^application\/json/);
    expect(Object.keys(json.json())).toEqual(expect.arrayContaining(['sweep']));
    const csv = await get('/v1/sweeps/api-sweep/report?format=csv', { accept: 'text/html' });
    expect(csv.headers['content-type']).toMatch(/^text\/csv/);
    // A header and one row per run.
    expect(csv.body.trimEnd().split('\n')).toHaveLength(5);
  }, 300_000);
});
