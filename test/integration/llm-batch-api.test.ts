// The Batch API client (engines/llm/batch-api.ts) against the fake provider over real HTTP, and
// against a hostile one: a batch answers what the same synchronous calls answer, submission is
// idempotent per flush, failed, expired, partly failed and cancelled batches come back as such,
// and whatever the provider sends wrong ends in a clear error that never shows the files.
import { fork } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { LLM_FAILURE } from '../../common/failures';
import { batchEnded, type ProviderBatchStatus } from '../../common/llm-batch';
import { EngineError } from '../../engines/errors';
import { BatchApi, type BatchLineResult, type BatchRequestLine } from '../../engines/llm/batch-api';
import { startFakeOpenAI, type FakeBatchCounts, type FakeOpenAI } from '../fakes/openai-server';

const KEY = 'sk-batch';
const DELAY_MS = 200;
let fake: FakeOpenAI;
let api: BatchApi;
let sync: OpenAI;

beforeAll(async () => {
  fake = await startFakeOpenAI({ apiKey: KEY, batches: { delayMs: DELAY_MS } });
  api = new BatchApi({ baseURL: fake.url, apiKey: KEY, timeoutMs: 5000 });
  sync = new OpenAI({ baseURL: fake.url, apiKey: KEY, maxRetries: 0 });
});
afterAll(() => fake.close());
beforeEach(() => fake.batches.setDelay(DELAY_MS));

const judgeSchema = {
  type: 'object',
  properties: { grade: { type: 'integer' }, faithful: { type: 'boolean' }, explanation: { type: 'string' } },
  required: ['grade', 'faithful', 'explanation'],
  additionalProperties: false,
};

/** Requests of the three roles, each custom_id unique to the test (the fake counts them across tests). */
function requests(tag: string, n: number): BatchRequestLine[] {
  return Array.from({ length: n }, (_, i) => {
    const statement = `If p is a prime number greater than ${i + 2}, then p is odd`;
    const role = ['decompose', 'formalize', 'judge'][i % 3]!;
    const body =
      role === 'decompose'
        ? {
            model: 'fake-decomposer',
            messages: [
              { role: 'system', content: 'Split the statement into sub-queries.' },
              { role: 'user', content: `Statement:\n${statement}` },
            ],
            max_tokens: 512,
          }
        : role === 'formalize'
          ? { model: 'fake-formalizer', messages: [{ role: 'user', content: `Statement:\n${statement}` }], max_tokens: 1024 }
          : {
              model: 'fake-judge',
              messages: [
                {
                  role: 'user',
                  content: `Informal statement:\n${statement}\n\n\`\`\`lean\ntheorem t (p : ℕ) (hp : Nat.Prime p) : Odd p := by sorry\n\`\`\``,
                },
              ],
              response_format: { type: 'json_schema', json_schema: { name: 'verdict', schema: judgeSchema, strict: true } },
            };
    return { customId: `${tag}/run-${i}/${role}/1`, body };
  });
}

/** Polls until the batch has ended; the statuses seen on the way, in order, without repeats. */
async function untilEnded(batchId: string, timeoutMs = 10_000): Promise<ProviderBatchStatus[]> {
  const seen: ProviderBatchStatus[] = [];
  const until = Date.now() + timeoutMs;
  for (;;) {
    const { status } = await api.state(batchId);
    if (seen.at(-1) !== status) seen.push(status);
    if (batchEnded(status)) return seen;
    if (Date.now() > until) throw new Error(`batch ${batchId} still ${status} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** What a chat completion says, without what differs between any two calls (its ID and time). */
function meaning(completion: unknown): unknown {
  const { id: _id, created: _created, ...rest } = completion as Record<string, unknown>;
  return rest;
}

async function failureOf(p: Promise<unknown>): Promise<EngineError> {
  const err = await p.then(
    () => new Error('expected a failure'),
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(EngineError);
  return err as EngineError;
}

const okIds = (results: BatchLineResult[]) => results.filter((r) => r.ok).map((r) => r.customId);

describe('BatchApi against the fake provider', () => {
  it('a batch moves through its statuses and answers exactly what the same synchronous calls answer', async () => {
    const lines = requests('same', 9);
    const before = fake.batches.stats();
    const submitted = await api.submit('flush-same', lines);
    expect(submitted.status).toBe('validating');
    expect(Math.abs(Date.parse(submitted.createdAt) - Date.now())).toBeLessThan(5000);

    const seen = await untilEnded(submitted.id);
    expect(seen).toEqual(['validating', 'in_progress', 'finalizing', 'completed']);
    const state = await api.state(submitted.id);
    expect(state).toMatchObject({ id: submitted.id, status: 'completed', total: 9, completed: 9, failed: 0 });
    expect(state.outputFileId).toBeDefined();
    expect(state.errorFileId).toBeUndefined();

    const results = await api.results(
      submitted.id,
      lines.map((l) => l.customId),
    );
    expect(results.map((r) => r.customId)).toEqual(lines.map((l) => l.customId));
    for (const [i, line] of lines.entries()) {
      const result = results[i]!;
      if (!result.ok) throw new Error(`line ${line.customId} failed: ${result.error}`);
      const alone = await sync.chat.completions.create(line.body as unknown as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming);
      expect(meaning(JSON.parse(result.body))).toEqual(meaning(alone));
      expect(JSON.parse(result.body).usage.completion_tokens).toBeGreaterThan(0);
    }
    // The fake answered each line once, through the same handler, and billed it as a batch's.
    const answered = fake.requests.filter((r) => r.batch === submitted.id);
    expect(answered.map((r) => r.model)).toEqual(lines.map((l) => l.body.model));
    const billed = fake.usageServed.filter((u) => u.batch === submitted.id);
    expect(billed).toHaveLength(9);
    // The batch object's usage is its lines' (as the real API reports it).
    const { usage } = await sync.batches.retrieve(submitted.id);
    expect(usage?.input_tokens).toBe(billed.reduce((n, u) => n + u.prompt_tokens, 0));
    expect(usage?.output_tokens).toBe(billed.reduce((n, u) => n + u.completion_tokens, 0));
    const after = fake.batches.stats();
    expect(after.batchesCreated - before.batchesCreated).toBe(1);
    expect(after.linesPerBatch.at(-1)).toBe(9);
    expect(after.firstSubmissions - before.firstSubmissions).toBe(9);
    expect(after.duplicateSubmissions).toBe(0);
  });

  it('a flush submitted again finds its batch, even pages down the provider list: one submission per custom_id', async () => {
    const lines = requests('idem', 3);
    const first = await api.submit('flush-idem', lines);
    const again = await api.submit('flush-idem', lines);
    expect(again.id).toBe(first.id);
    // A hundred and one later batches push it to the second page of the list.
    const before = fake.batches.stats();
    for (let i = 0; i < 101; i++) await api.submit(`flush-filler-${i}`, requests(`filler-${i}`, 1));
    const later = await api.submit('flush-idem', lines);
    expect(later.id).toBe(first.id);
    const after = fake.batches.stats();
    expect(after.batchesCreated - before.batchesCreated).toBe(101);
    expect(after.filesUploaded - before.filesUploaded).toBe(101);
    for (const line of lines) expect(after.submissions[line.customId]).toBe(1);
    expect(after.duplicateSubmissions).toBe(0);

    // With the search bounded to one page, it is not found, and the fake counts the double.
    const blind = new BatchApi({ baseURL: fake.url, apiKey: KEY, timeoutMs: 5000, maxListPages: 1 });
    const twice = await blind.submit('flush-idem', lines);
    expect(twice.id).not.toBe(first.id);
    const doubled = fake.batches.stats();
    expect(doubled.duplicateSubmissions).toBe(3);
    expect(doubled.duplicates).toEqual(lines.map((l) => l.customId));
    await untilEnded(twice.id);
  });

  it('a failed batch answers no line; sent again, its lines count as resubmissions', async () => {
    const lines = requests('failed', 3);
    const ids = lines.map((l) => l.customId);
    const before = fake.batches.stats();
    fake.batches.failNext({ kind: 'failed' });
    const failed = await api.submit('flush-failed', lines);
    expect(await untilEnded(failed.id)).toEqual(['validating', 'failed']);
    const results = await api.results(failed.id, ids);
    expect(results.every((r) => !r.ok && r.error === 'no answer in the batch (batch failed: token_limit_exceeded)')).toBe(true);

    const retry = await api.submit('flush-failed-2', lines);
    expect(retry.id).not.toBe(failed.id);
    await untilEnded(retry.id);
    expect(okIds(await api.results(retry.id, ids))).toEqual(ids);
    const after = fake.batches.stats();
    expect(after.firstSubmissions - before.firstSubmissions).toBe(3);
    expect(after.resubmissions - before.resubmissions).toBe(3);
    expect(after.duplicateSubmissions - before.duplicateSubmissions).toBe(0);
  });

  it('an expired batch answers the lines it did; the others come back batch_expired', async () => {
    const lines = requests('expired', 5);
    const ids = lines.map((l) => l.customId);
    fake.batches.failNext({ kind: 'expired', lines: 2 });
    const batch = await api.submit('flush-expired', lines);
    expect((await untilEnded(batch.id)).at(-1)).toBe('expired');
    expect(await api.state(batch.id)).toMatchObject({ total: 5, completed: 3, failed: 2 });
    const results = await api.results(batch.id, ids);
    expect(okIds(results)).toEqual(ids.slice(0, 3));
    for (const r of results.slice(3))
      expect(r).toEqual({ customId: r.customId, ok: false, error: expect.stringMatching(/^batch_expired: /) });

    const before = fake.batches.stats();
    const again = await api.submit('flush-expired-2', lines.slice(3));
    await untilEnded(again.id);
    expect(okIds(await api.results(again.id, ids.slice(3)))).toEqual(ids.slice(3));
    expect(fake.batches.stats().resubmissions - before.resubmissions).toBe(2);
  });

  it('a partly failed batch completes with those lines in its error file as HTTP 500', async () => {
    const lines = requests('partial', 4);
    const ids = lines.map((l) => l.customId);
    fake.batches.failNext({ kind: 'partial', lines: 2 });
    const batch = await api.submit('flush-partial', lines);
    expect((await untilEnded(batch.id)).at(-1)).toBe('completed');
    const state = await api.state(batch.id);
    expect(state).toMatchObject({ completed: 2, failed: 2 });
    expect(state.outputFileId && state.errorFileId).toBeTruthy();
    const results = await api.results(batch.id, ids);
    expect(okIds(results)).toEqual(ids.slice(2));
    expect(results[0]).toMatchObject({ ok: false, error: expect.stringMatching(/^HTTP 500 \(server_error\): The server had an error/) });
  });

  it('a refusal the handler or the request earns is the line answer a synchronous call would get', async () => {
    fake.script('batch-judge-limited', { status: 429, message: 'Rate limit reached' });
    const badSchema = { type: 'object', properties: { a: { type: 'string' } } }; // strict needs additionalProperties: false
    const lines: BatchRequestLine[] = [
      { customId: 'refusal/limited', body: { model: 'batch-judge-limited', messages: [{ role: 'user', content: 'grade' }] } },
      {
        customId: 'refusal/schema',
        body: {
          model: 'fake-judge',
          messages: [{ role: 'user', content: 'grade' }],
          response_format: { type: 'json_schema', json_schema: { name: 'v', schema: badSchema, strict: true } },
        },
      },
      ...requests('refusal', 1),
    ];
    const batch = await api.submit('flush-refusal', lines);
    await untilEnded(batch.id);
    const results = await api.results(batch.id, [...lines.map((l) => l.customId), 'refusal/never-sent']);
    expect(results[0]).toEqual({ customId: 'refusal/limited', ok: false, error: 'HTTP 429 (rate_limit_exceeded): Rate limit reached' });
    expect(results[1]).toMatchObject({ ok: false, error: expect.stringMatching(/^HTTP 400 \(invalid_request_error\): Invalid schema/) });
    expect(results[2]!.ok).toBe(true);
    expect(results[3]).toEqual({ customId: 'refusal/never-sent', ok: false, error: 'no answer in the batch' });
    const syncRefusal = await sync.chat.completions
      .create(lines[1]!.body as unknown as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming)
      .then(
        () => undefined,
        (e: unknown) => e as InstanceType<typeof OpenAI.APIError>,
      );
    expect(syncRefusal?.status).toBe(400);
  });

  it('cancel stops a batch in progress: the lines done come back, the rest have no answer', async () => {
    fake.batches.setDelay(3000);
    const lines = requests('cancel', 30);
    const ids = lines.map((l) => l.customId);
    const batch = await api.submit('flush-cancel', lines);
    for (;;) {
      const s = await api.state(batch.id);
      if (s.status === 'in_progress' && s.completed >= 2) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    await api.cancel(batch.id);
    expect((await api.state(batch.id)).status).toBe('cancelling');
    expect((await untilEnded(batch.id)).at(-1)).toBe('cancelled');
    await api.cancel(batch.id); // an ended batch: nothing to do, no error
    const results = await api.results(batch.id, ids);
    const done = okIds(results);
    expect(done.length).toBeGreaterThanOrEqual(2);
    expect(done.length).toBeLessThan(30);
    expect(done).toEqual(ids.slice(0, done.length));
    expect(results.at(-1)).toMatchObject({ ok: false, error: 'no answer in the batch (batch cancelled)' });
  });

  it('a large batch keeps the configured pace', async () => {
    fake.batches.setDelay(400);
    const lines = requests('large', 2000);
    const started = Date.now();
    const batch = await api.submit('flush-large', lines);
    expect((await untilEnded(batch.id)).at(-1)).toBe('completed');
    const took = Date.now() - started;
    expect(took).toBeGreaterThanOrEqual(400);
    expect(took).toBeLessThan(4000);
    expect(await api.state(batch.id)).toMatchObject({ total: 2000, completed: 2000 });
  });

  it('a batch ID the provider does not know is a 404 no retry mends; a bad ID never reaches it', async () => {
    const missing = await failureOf(api.state('batch_unknown'));
    expect(missing.type).toBe(LLM_FAILURE.notFound);
    expect(missing.nonRetryable).toBe(true);
    expect(missing.message).toContain('the Batch API at');
    const bad = await failureOf(api.state('../files/x'));
    expect(bad.type).toBe(LLM_FAILURE.badRequest);
    const noKey = await failureOf(new BatchApi({ baseURL: fake.url, apiKey: 'wrong', timeoutMs: 5000 }).state('batch_x'));
    expect(noKey.type).toBe(LLM_FAILURE.unauthorized);
    const dup = await failureOf(api.submit('flush-dup', [...requests('dup', 1), ...requests('dup', 1)]));
    expect(dup.type).toBe(LLM_FAILURE.badRequest);
  });
});

describe('the fake speaks the Batch API as the real one does', () => {
  const auth = { authorization: `Bearer ${KEY}` };
  const upload = (form: FormData) => fetch(`${fake.url}/files`, { method: 'POST', headers: auth, body: form });
  const jsonl = (rows: unknown[]) => new Blob([rows.map((r) => JSON.stringify(r)).join('\n') + '\n']);
  const row = (id: string) => ({ custom_id: id, method: 'POST', url: '/v1/chat/completions', body: { model: 'fake-judge', messages: [] } });

  it('refuses an upload without a purpose, with an unknown one, or with a line that is not JSON', async () => {
    const noPurpose = new FormData();
    noPurpose.append('file', jsonl([row('a')]), 'in.jsonl');
    expect((await upload(noPurpose)).status).toBe(400);
    const unknown = new FormData();
    unknown.append('purpose', 'everything');
    unknown.append('file', jsonl([row('a')]), 'in.jsonl');
    expect((await upload(unknown)).status).toBe(400);
    const broken = new FormData();
    broken.append('purpose', 'batch');
    broken.append('file', new Blob([`${JSON.stringify(row('a'))}\n{"custom_id": \n`]), 'in.jsonl');
    const refused = await upload(broken);
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toMatch(/line 2/);
  });

  it('a file whose custom_ids repeat fails validation, and nothing of it counts as submitted', async () => {
    const form = new FormData();
    form.append('purpose', 'batch');
    form.append('file', jsonl([row('twice/1'), row('twice/1')]), 'in.jsonl');
    const file = (await (await upload(form)).json()) as { id: string; purpose: string; bytes: number };
    expect(file.purpose).toBe('batch');
    const raw = new OpenAI({ baseURL: fake.url, apiKey: KEY, maxRetries: 0 });
    expect(await (await raw.files.content(file.id)).text()).toContain('twice/1');
    const batch = await raw.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    await untilEnded(batch.id);
    const failed = await raw.batches.retrieve(batch.id);
    expect(failed.status).toBe('failed');
    expect(failed.errors?.data?.[0]).toMatchObject({ code: 'duplicate_custom_id', line: 2 });
    expect(fake.batches.stats().submissions['twice/1']).toBeUndefined();
    await expect(
      raw.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '48h' as '24h' }),
    ).rejects.toMatchObject({ status: 400 });
  });

  it('lists batches newest first, page by page', async () => {
    const raw = new OpenAI({ baseURL: fake.url, apiKey: KEY, maxRetries: 0 });
    const all = fake.batches.all().map((b) => b.id);
    const first = await raw.batches.list({ limit: 2 });
    expect(first.data.map((b) => b.id)).toEqual(all.slice(0, 2));
    expect(first.has_more).toBe(true);
    const second = await first.getNextPage();
    expect(second.data.map((b) => b.id)).toEqual(all.slice(2, 4));
    const res = await fetch(`${fake.url}/batches?limit=2`, { headers: auth });
    expect(await res.json()).toMatchObject({ object: 'list', first_id: all[0], last_id: all[1], has_more: true });
    expect((await fetch(`${fake.url}/batches?limit=0`, { headers: auth })).status).toBe(400);
  });
});

describe('the fake in a process of its own', () => {
  it('takes its batch pace and faults from FAKE_BATCHES and IPC, and reports its counts', async () => {
    const child = fork(fileURLToPath(new URL('../fakes/openai-server-process.ts', import.meta.url)), [], {
      execArgv: ['--import', 'tsx'],
      env: { ...process.env, FAKE_BATCHES: JSON.stringify({ delayMs: 100, faults: [{ kind: 'partial', lines: 1 }] }) },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    try {
      const ask = <T>(msg: unknown, key: string) =>
        new Promise<T>((resolve) => {
          const on = (m: unknown) => {
            if (typeof m === 'object' && m !== null && key in m) {
              child.off('message', on);
              resolve((m as Record<string, T>)[key]!);
            }
          };
          child.on('message', on);
          child.send(msg as string);
        });
      const url = await new Promise<string>((resolve, reject) => {
        child.once('message', (m) => resolve((m as { url: string }).url));
        child.once('exit', (code) => reject(new Error(`the fake exited (${code})`)));
      });
      const remote = new BatchApi({ baseURL: url, timeoutMs: 5000 });
      const poll = async (id: string) => {
        while (!batchEnded((await remote.state(id)).status)) await new Promise((r) => setTimeout(r, 10));
      };
      const lines = requests('process', 2);
      const first = await remote.submit('flush-p1', lines);
      await poll(first.id);
      expect(okIds(await remote.results(first.id, [lines[0]!.customId, lines[1]!.customId]))).toEqual([lines[1]!.customId]);
      await ask({ batchFault: { kind: 'failed' } }, 'batchFaultSet');
      const second = await remote.submit('flush-p2', [lines[0]!]);
      await poll(second.id);
      expect((await remote.state(second.id)).status).toBe('failed');
      const counts = await ask<FakeBatchCounts>('batches', 'batches');
      expect(counts).toMatchObject({
        batchesCreated: 2,
        linesPerBatch: [2, 1],
        firstSubmissions: 2,
        resubmissions: 1,
        duplicateSubmissions: 0,
      });
    } finally {
      child.kill();
    }
  });
});

// ---- a hostile provider ----

type Route = (path: string, res: import('node:http').ServerResponse) => boolean;

describe('BatchApi against a hostile provider', () => {
  let server: Server;
  let url: string;
  let listCalls = 0;
  const SECRET = 'SECRET-CONTENT-42';
  const batchObject = (id: string, extra: Record<string, unknown>) => ({
    id,
    object: 'batch',
    endpoint: '/v1/chat/completions',
    input_file_id: 'file-in',
    completion_window: '24h',
    status: 'completed',
    created_at: 1_700_000_000,
    request_counts: { total: 1, completed: 1, failed: 0 },
    ...extra,
  });
  const json = (res: import('node:http').ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const batches: Record<string, Record<string, unknown>> = {
    'b-status': batchObject('b-status', { status: 'exploding' }),
    'b-notjson': batchObject('b-notjson', { output_file_id: 'f-notjson' }),
    'b-huge': batchObject('b-huge', { output_file_id: 'f-huge' }),
    'b-stream': batchObject('b-stream', { output_file_id: 'f-stream' }),
    'b-noid': batchObject('b-noid', { output_file_id: 'f-noid' }),
    'b-odd': batchObject('b-odd', { output_file_id: 'f-odd' }),
    'b-running': batchObject('b-running', { status: 'in_progress' }),
    'b-counts': batchObject('b-counts', { request_counts: { total: -1, completed: 0, failed: 0 } }),
  };
  const files: Record<string, string> = {
    'f-notjson': `{"custom_id": "a", "response": {"status_code": 200, "body": ${SECRET}}}\n`,
    'f-noid': `${JSON.stringify({ response: { status_code: 200, body: { choices: [], note: SECRET } } })}\n`,
    'f-odd': `${JSON.stringify({ custom_id: 'a', response: { status_code: 200, body: { note: SECRET } }, error: null })}\n${JSON.stringify({ custom_id: 'stranger', response: { status_code: 200, body: { choices: [] } } })}\n`,
  };
  const routes: Route[] = [
    (path, res) => {
      if (path === '/v1/batches') {
        listCalls++;
        // has_more forever, the same page again: a provider that would keep a client paging.
        json(res, 200, { object: 'list', data: [batchObject('b-other', {})], has_more: true, first_id: 'b-other', last_id: 'b-other' });
        return true;
      }
      return false;
    },
    (path, res) => {
      const m = /^\/v1\/batches\/([^/]+)$/.exec(path);
      if (!m) return false;
      if (m[1] === 'b-503') json(res, 503, { error: { message: 'overloaded', type: 'server_error' } });
      else if (m[1] === 'b-429') json(res, 429, { error: { message: 'slow down', type: 'rate_limit_exceeded' } });
      else if (batches[m[1]!]) json(res, 200, batches[m[1]!]);
      else json(res, 404, { error: { message: 'no such batch' } });
      return true;
    },
    (path, res) => {
      const m = /^\/v1\/files\/([^/]+)\/content$/.exec(path);
      if (!m) return false;
      if (m[1] === 'f-huge') {
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(10 * 1024 * 1024) });
        res.end();
      } else if (m[1] === 'f-stream') {
        // No length said: the client must stop reading by itself.
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        const chunk = `${SECRET}\n`.repeat(4096);
        let sent = 0;
        const more = () => {
          while (sent < 200 && res.write(chunk)) sent++;
          if (sent >= 200) res.end();
          else res.once('drain', more);
        };
        res.on('error', () => {});
        more();
      } else res.end(files[m[1]!] ?? '');
      return true;
    },
    (path, res) => {
      if (path === '/v1/files') {
        json(res, 200, {
          id: 'file-up',
          object: 'file',
          bytes: 1,
          created_at: 1,
          filename: 'x.jsonl',
          purpose: 'batch',
          status: 'processed',
        });
        return true;
      }
      return false;
    },
  ];

  beforeAll(async () => {
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const path = (req.url ?? '').split('?')[0]!;
        if (req.method === 'POST' && path === '/v1/batches') return json(res, 200, batchObject('b-created', { status: 'validating' }));
        if (!routes.some((route) => route(path, res))) json(res, 404, { error: { message: 'no route' } });
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  afterAll(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const hostile = (over: Partial<ConstructorParameters<typeof BatchApi>[0]> = {}) =>
    new BatchApi({ baseURL: url, timeoutMs: 3000, maxFileBytes: 1024 * 1024, maxListPages: 3, ...over });

  it('a status the Batch API does not have is an error, not a guess', async () => {
    const err = await failureOf(hostile().state('b-status'));
    expect(err.type).toBe(LLM_FAILURE.badReply);
    expect(err.message).toContain('status "exploding", which is not a Batch API status');
    expect((await failureOf(hostile().state('b-counts'))).message).toContain('unreadable total count');
  });

  it('malformed result lines make a clear error that shows nothing of the file', async () => {
    const notJson = await failureOf(hostile().results('b-notjson', ['a']));
    expect(notJson.type).toBe(LLM_FAILURE.badReply);
    expect(notJson.message).toMatch(/line 1 of the output file of batch b-notjson is not JSON/);
    const noId = await failureOf(hostile().results('b-noid', ['a']));
    expect(noId.message).toMatch(/has no readable custom_id/);
    for (const err of [notJson, noId]) expect(err.message).not.toContain(SECRET);
    // A line that is JSON but no chat completion fails only itself; strangers are ignored.
    expect(await hostile().results('b-odd', ['a'])).toEqual([
      { customId: 'a', ok: false, error: 'HTTP 200 without a chat completion in the body' },
    ]);
  });

  it('an output file over the limit is refused, whether its length is said or found while reading', async () => {
    for (const id of ['b-huge', 'b-stream']) {
      const err = await failureOf(hostile().results(id, ['a']));
      expect(err.type).toBe(LLM_FAILURE.badReply);
      expect(err.message).toContain(`larger than the ${1024 * 1024} bytes driftline reads`);
      expect(err.message).not.toContain(SECRET);
    }
  });

  it('5xx and 429 are retryable, the results of a batch still running are not read', async () => {
    for (const id of ['b-503', 'b-429']) {
      const err = await failureOf(hostile().state(id));
      expect(err.type).toBe(LLM_FAILURE.unavailable);
      expect(err.nonRetryable).toBe(false);
    }
    const running = await failureOf(hostile().results('b-running', ['a']));
    expect(running.type).toBe(LLM_FAILURE.unavailable);
    expect(running.message).toContain('in_progress, not ended');
  });

  it('a list that never ends is searched only as far as the bound', async () => {
    listCalls = 0;
    const submitted = await hostile().submit('flush-x', requests('hostile', 1));
    expect(submitted.id).toBe('b-created');
    expect(listCalls).toBe(3);
  });

  it('an unreachable provider is retryable', async () => {
    const err = await failureOf(new BatchApi({ baseURL: 'http://127.0.0.1:9/v1', timeoutMs: 2000 }).state('b-x'));
    expect(err.type).toBe(LLM_FAILURE.unavailable);
  });
});
