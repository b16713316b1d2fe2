// POST /v1/sweeps with a predictions configuration: its file is read from the data directory
// only (the benchmark paths' rule: as written and through symbolic links), and a malformed line
// is refused with a 400 naming the file as the client gave it, the line and the field, quoting
// nothing of the file. The refusals come before anything reaches Temporal: the client's
// connection is lazy and points at a closed port, so a request that got that far would fail
// with a 5xx, not the 400 asserted here.
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { Client, Connection } from '@temporalio/client';
import { buildServer } from '../../api/server';
import { ResultsDb, resultsLocation } from '../../engines/results/results-db';
import { FIXTURE_LIBRARY } from '../helpers/stack';

const SECRET = 'sk-do-not-echo-91b2';

let root: string;
let dataDir: string;
let outsideDir: string;
let results: ResultsDb;
let app: FastifyInstance;

const line = (o: unknown) => `${JSON.stringify(o)}\n`;

beforeAll(async () => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'driftline-sweep-predictions-')));
  dataDir = join(root, 'data');
  outsideDir = join(root, 'elsewhere');
  mkdirSync(dataDir);
  mkdirSync(outsideDir);
  writeFileSync(join(dataDir, 'bench.jsonl'), line({ full_name: 'Demo.one', informal_stmt: 'Every prime is at least two.' }));
  writeFileSync(join(outsideDir, 'secret.jsonl'), line({ name: 'Demo.one', lean4: SECRET }));
  symlinkSync(join(outsideDir, 'secret.jsonl'), join(dataDir, 'link.jsonl'));
  writeFileSync(join(dataDir, 'not-json.jsonl'), `${line({ name: 'Demo.one', lean4: 't' })}${SECRET}\n`);
  writeFileSync(join(dataDir, 'number.jsonl'), line({ name: 'Demo.one', lean4: 7, note: SECRET }));
  writeFileSync(join(dataDir, 'twice.jsonl'), `${line({ name: 'Demo.one', lean4: 't' })}${line({ name: 'Demo.one', lean4: SECRET })}`);
  writeFileSync(join(dataDir, 'elsewhere.jsonl'), line({ name: SECRET, lean4: 't' }));
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

async function refusal(path: string, fields: Record<string, string> = { id: 'name', statement: 'lean4' }): Promise<string> {
  const response = await app.inject({
    method: 'POST',
    url: '/v1/sweeps',
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({
      benchmark: { path: 'bench.jsonl', format: 'rautoformalizer' },
      library: FIXTURE_LIBRARY,
      configurations: { herald: { predictions: { path, format: 'jsonl', fields }, judge: false } },
    }),
  });
  expect(response.statusCode, response.body).toBe(400);
  const body = response.body;
  expect(body).not.toContain(SECRET);
  expect(body).not.toContain(root);
  expect(body).not.toContain(tmpdir());
  return (response.json() as { detail: string }).detail;
}

describe('POST /v1/sweeps predictions files', () => {
  it('reads them from the data directory only', async () => {
    expect(await refusal('../elsewhere/secret.jsonl')).toBe(
      'configurations.herald.predictions.path: over HTTP a predictions file is read from the data directory only: give a path relative to it (or "$DATA/…")',
    );
    expect(await refusal(join(outsideDir, 'secret.jsonl'))).toMatch(/data directory only/);
    expect(await refusal('link.jsonl')).toBe(
      'configurations.herald.predictions.path: "link.jsonl" leads outside the data directory (through a symbolic link); over HTTP a predictions file is read from the data directory only',
    );
    expect(await refusal('nowhere.jsonl')).toBe(
      'configurations.herald.predictions.path: no such file in the data directory: "nowhere.jsonl"',
    );
  });

  it('names the malformed line and field without quoting the file', async () => {
    expect(await refusal('not-json.jsonl')).toBe('"not-json.jsonl":2: (line): not JSON');
    expect(await refusal('number.jsonl')).toBe('"number.jsonl":1: lean4: the statement is a number, not a string');
    expect(await refusal('twice.jsonl')).toBe('"twice.jsonl":2: name: the item and sample 0 repeat line 1');
    expect(await refusal('$DATA/elsewhere.jsonl')).toBe(
      '"$DATA/elsewhere.jsonl": no line names an item of the sweep\'s benchmark selection (item ids are read from the field "name")',
    );
    expect(await refusal('twice.jsonl', { id: 'name', statement: 'lean4', sample: 'k' })).toBe(
      '"twice.jsonl":1: k: missing (the sample index)',
    );
  });
});
