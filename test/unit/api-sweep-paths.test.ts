// POST /v1/sweeps reads benchmark files from the data directory only: a path that leaves it,
// as written or through a symbolic link (to a file or a directory), is refused with a 400 that
// echoes neither the file's contents nor any absolute path of the server. The refusals come
// before anything reaches Temporal: the client's connection is lazy and points at a closed
// port, so a request that got that far would fail with a 5xx, not the 400 asserted here.
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { Client, Connection } from '@temporalio/client';
import { buildServer } from '../../api/server';
import { ResultsDb, resultsLocation } from '../../engines/results/results-db';
import { FIXTURE_LIBRARY } from '../helpers/stack';

const SECRET = 'OPENAI_API_KEY=sk-do-not-echo-7f3a9c';

let root: string;
let dataDir: string;
let outsideDir: string;
let results: ResultsDb;
let app: FastifyInstance;

beforeAll(async () => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'driftline-sweep-paths-')));
  dataDir = join(root, 'data');
  outsideDir = join(root, 'elsewhere');
  mkdirSync(dataDir);
  mkdirSync(outsideDir);
  // Outside the data directory: a file holding a secret line, in a directory of its own.
  writeFileSync(join(outsideDir, 'secret.jsonl'), `${SECRET}\n`);
  symlinkSync(join(outsideDir, 'secret.jsonl'), join(dataDir, 'link.jsonl'));
  symlinkSync(outsideDir, join(dataDir, 'linked-dir'));
  // Inside: a file whose first line is the secret (not JSON), and a record with a wrong field.
  writeFileSync(join(dataDir, 'not-json.jsonl'), `${SECRET}\n`);
  writeFileSync(join(dataDir, 'bad-record.jsonl'), `${JSON.stringify({ full_name: SECRET, informal_stmt: 7 })}\n`);
  writeFileSync(
    join(dataDir, 'twice.jsonl'),
    `${JSON.stringify({ full_name: SECRET, informal_stmt: 'a' })}\n${JSON.stringify({ full_name: SECRET, informal_stmt: 'b' })}\n`,
  );
  mkdirSync(join(dataDir, 'a-directory.jsonl'));
  results = await ResultsDb.open(resultsLocation(join(root, 'results')));
  app = await buildServer({
    temporal: new Client({ connection: Connection.lazy({ address: '127.0.0.1:1' }) }),
    libraries: [FIXTURE_LIBRARY],
    defaultLibrary: FIXTURE_LIBRARY,
    maxStatementChars: 20_000,
    readiness: async () => ({ ready: true, checks: {}, missing: [] }),
    pressure: { maxEventLoopDelayMs: 0 },
    temporalUiUrl: 'http://127.0.0.1:8233',
    sweeps: { results, dataDir },
  });
});

afterAll(async () => {
  await app?.close();
  await results?.close();
  if (root) rmSync(root, { recursive: true, force: true });
});

const sweepFile = (path: string) => ({
  benchmark: { path, format: 'rautoformalizer' },
  library: FIXTURE_LIBRARY,
  configurations: { zero: { retrieval: 'none', illustrate: false, repairRounds: 0, judge: false } },
});

async function refusal(path: string): Promise<string> {
  const response = await app.inject({
    method: 'POST',
    url: '/v1/sweeps',
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify(sweepFile(path)),
  });
  expect(response.statusCode, response.body).toBe(400);
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  const body = response.body;
  // Nothing of the file, and no absolute path of the server (the temp root holds them all).
  expect(body).not.toContain('sk-do-not-echo');
  expect(body).not.toContain(root);
  expect(body).not.toContain(tmpdir());
  return (response.json() as { detail: string }).detail;
}

describe('POST /v1/sweeps benchmark paths', () => {
  it('refuses a symbolic link inside the data directory to a file outside it', async () => {
    expect(await refusal('link.jsonl')).toBe(
      'benchmark.path: "link.jsonl" leads outside the data directory (through a symbolic link); over HTTP a benchmark is read from the data directory only',
    );
    expect(await refusal('$DATA/link.jsonl')).toMatch(/^benchmark\.path: "\$DATA\/link\.jsonl" leads outside the data directory/);
  });

  it('refuses a path through a symbolic link to a directory outside', async () => {
    expect(await refusal('linked-dir/secret.jsonl')).toMatch(
      /^benchmark\.path: "linked-dir\/secret\.jsonl" leads outside the data directory/,
    );
  });

  it('refuses ../ escapes and absolute paths outside, as written', async () => {
    expect(await refusal('../elsewhere/secret.jsonl')).toMatch(
      /^benchmark\.path: over HTTP a benchmark is read from the data directory only/,
    );
    expect(await refusal('data/../../elsewhere/secret.jsonl')).toMatch(/data directory only/);
    expect(await refusal(join(outsideDir, 'secret.jsonl'))).toMatch(/data directory only/);
  });

  it('names a missing file and a directory as the client gave them', async () => {
    expect(await refusal('nowhere.jsonl')).toBe('benchmark.path: no such file in the data directory: "nowhere.jsonl"');
    expect(await refusal('a-directory.jsonl')).toBe('benchmark.path: "a-directory.jsonl" is not a regular file');
  });

  it('says which line is wrong without quoting it', async () => {
    expect(await refusal('not-json.jsonl')).toBe('"not-json.jsonl":1: not a JSON record');
    expect(await refusal('bad-record.jsonl')).toBe('"bad-record.jsonl":1: not a record of the benchmark\'s format (look at informal_stmt)');
    expect(await refusal('twice.jsonl')).toBe('"twice.jsonl":2: repeats the item id of line 1');
  });

  it('refuses the second of several benchmarks by its index', async () => {
    const body = {
      ...sweepFile('x'),
      benchmark: [
        { path: 'bad-record.jsonl', format: 'rautoformalizer', tags: { part: 'a' } },
        { path: 'link.jsonl', format: 'rautoformalizer' },
      ],
    };
    const response = await app.inject({
      method: 'POST',
      url: '/v1/sweeps',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify(body),
    });
    expect(response.statusCode, response.body).toBe(400);
    expect(response.json()).toMatchObject({ detail: expect.stringMatching(/^benchmark\[1\]\.path: "link\.jsonl" leads outside/) });
    expect(response.body).not.toContain(root);
  });
});
