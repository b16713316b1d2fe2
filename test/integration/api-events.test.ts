// GET /v1/formalizations/:id/events over a real socket, for a real run through the real Temporal
// dev server: every stage in order, a dropped connection resumed with Last-Event-ID without a
// gap or a repeat, the stream ending after the run's last event, and ending cleanly on shutdown.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Ajv } from 'ajv';
import { buildServer } from '../../api/server';
import { RunEventSchema } from '../../api/schemas';
import { FAKE_MODELS } from '../fakes/openai-server';
import { createStack, FIXTURE_LIBRARY, startTemporal, type TestStack } from '../helpers/stack';

const STATEMENT = 'If p is a prime number then p is at least 2.';
const GOOD = '```lean\ntheorem prime_two_le (p : ℕ) (hp : Nat.Prime p) : 2 ≤ p := by sorry\n```';
const BAD = '```lean\ntheorem prime_two_le (p : ℕ) (hp : Nat.Primee p) : 2 ≤ p := by sorry\n```';

let env: TestWorkflowEnvironment;
let stack: TestStack;
let app: FastifyInstance;
let base: string;
const validEvent = new Ajv({ strict: false }).compile(RunEventSchema);

async function api(): Promise<FastifyInstance> {
  const instance = await buildServer({
    temporal: env.client,
    libraries: [FIXTURE_LIBRARY],
    defaultLibrary: FIXTURE_LIBRARY,
    maxStatementChars: 20_000,
    readiness: async () => ({ ready: true, checks: {}, missing: [] }),
    taskQueue: stack.mainQueue,
    sseKeepAliveMs: 500,
    // Bundling workflows in this process stalls its event loop; no load shedding here.
    pressure: { maxEventLoopDelayMs: 0 },
  });
  await instance.listen({ host: '127.0.0.1', port: 0 });
  return instance;
}

beforeAll(async () => {
  env = await startTemporal();
  stack = await createStack(env, { repl: { unknownIdentifiers: ['Nat.Primee'] } });
  app = await api();
  const { port } = app.server.address() as { port: number };
  base = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  await app?.close();
  await stack?.close();
  await env?.teardown();
});

interface Received {
  id: number;
  event: string;
  data: { seq: number; type: string; stage: string; activity?: string; round?: number; compile?: { status: string }; outcome?: string };
}

/** Reads an event stream; `stopWhen` drops the connection after the event it accepts. */
async function readEvents(url: string, options: { lastEventId?: number; stopWhen?: (e: Received) => boolean } = {}) {
  const abort = new AbortController();
  const response = await fetch(url, {
    headers: options.lastEventId ? { 'last-event-id': String(options.lastEventId) } : {},
    signal: abort.signal,
  });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const events: Received[] = [];
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let ended = false;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) {
      ended = true;
      break;
    }
    buffer += decoder.decode(value, { stream: true });
    let cut: number;
    let stop = false;
    while ((cut = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      const fields = Object.fromEntries(
        block
          .split('\n')
          .filter((l) => !l.startsWith(':') && l.includes(':'))
          .map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 1).trim()]),
      );
      if (!fields.data) continue;
      const received = { id: Number(fields.id), event: fields.event!, data: JSON.parse(fields.data) };
      events.push(received);
      if (options.stopWhen?.(received)) stop = true;
    }
    if (stop) {
      abort.abort();
      break;
    }
  }
  return { events, ended };
}

describe('GET /v1/formalizations/:id/events', () => {
  it('streams every stage of a real run in order, resumes a dropped connection without a gap or repeat, and ends after the last event', async () => {
    stack.llm.script(FAKE_MODELS.decomposer, { content: '{"subqueries":[{"phrase":"p is prime","formal":"Nat.Prime p"}]}', delayMs: 300 });
    stack.llm.script(FAKE_MODELS.formalizer, { content: BAD, delayMs: 300 }, { content: GOOD, delayMs: 300 });
    const id = await stack.start(STATEMENT, { repairRounds: 2 });
    const url = `${base}/v1/formalizations/${encodeURIComponent(id)}/events`;

    const { first, second } = await stack.withWorkers(async () => {
      // Connected while the run is under way; dropped once retrieval has finished.
      const first = await readEvents(url, { stopWhen: (e) => e.data.type === 'stage.completed' && e.data.stage === 'retrieve' });
      const last = first.events.at(-1)!.id;
      const second = await readEvents(url, { lastEventId: last });
      await stack.result(id);
      return { first, second };
    });
    expect(first.ended).toBe(false);
    expect(second.ended).toBe(true);

    // The whole stream read again after the run: the reference.
    const whole = await readEvents(url);
    expect(whole.ended).toBe(true);
    const seqs = whole.events.map((e) => e.id);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(seqs).size).toBe(seqs.length);
    expect([...first.events, ...second.events].map((e) => e.id)).toEqual(seqs);
    for (const e of whole.events) {
      // Each event is what /openapi.json says an event's data is.
      expect(validEvent(e.data), JSON.stringify(validEvent.errors)).toBe(true);
      expect(e.data.seq).toBe(e.id);
      expect(e.event).toBe(e.data.type);
      expect(typeof e.data.stage).toBe('string');
    }

    const story = whole.events.map(
      (e) =>
        `${e.data.type} ${e.data.stage}${e.data.activity ? `/${e.data.activity}` : ''}${e.data.round !== undefined ? ` #${e.data.round}` : ''}${e.data.compile ? ` ${e.data.compile.status}` : ''}`,
    );
    expect(story).toEqual([
      'run.started starting',
      'stage.started decompose/decompose',
      'stage.completed decompose/decompose',
      'stage.started retrieve/retrieve',
      'stage.completed retrieve/retrieve',
      'stage.started illustrate/illustrate',
      'stage.completed illustrate/illustrate',
      'stage.started formalize/formalize',
      'stage.completed formalize/formalize',
      'stage.started compile/compile #0',
      'stage.completed compile/compile #0 error',
      'stage.started repair/resolveName #1',
      'stage.completed repair/resolveName #1',
      'stage.started repair/repair #1',
      'stage.completed repair/repair #1',
      'stage.started compile/compile #1',
      'stage.completed compile/compile #1 ok',
      'stage.started judge/judge',
      'stage.completed judge/judge',
      'run.completed done',
    ]);
    expect(whole.events.at(-1)!.data).toMatchObject({ outcome: 'faithful' });

    // ?after= works like Last-Event-ID; after the last event there is nothing, and the stream ends.
    const tail = await readEvents(`${url}?after=${seqs.at(-2)}`);
    expect(tail.events.map((e) => e.id)).toEqual([seqs.at(-1)]);
    expect((await readEvents(`${url}?after=${seqs.at(-1)}`)).events).toEqual([]);
  });

  it('answers 404 as problem+json for an unknown run', async () => {
    const response = await fetch(`${base}/v1/formalizations/nope/events`);
    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  });

  it('ends open streams cleanly when the server shuts down', async () => {
    const second = await api();
    const { port } = second.server.address() as { port: number };
    // No workers: the run stays at its start, so the stream would otherwise stay open.
    const id = await stack.start(STATEMENT);
    const reading = readEvents(`http://127.0.0.1:${port}/v1/formalizations/${id}/events`);
    await new Promise((r) => setTimeout(r, 500));
    const closed = Date.now();
    await second.close();
    const { events, ended } = await reading;
    expect(ended).toBe(true);
    expect(events.map((e) => e.data.type)).toEqual(['run.started']);
    expect(Date.now() - closed).toBeLessThan(5000);
    await env.client.workflow.getHandle(id).terminate('test over');
  });
});
