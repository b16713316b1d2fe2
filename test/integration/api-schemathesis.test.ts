// Schemathesis (PyPI; `npm run setup:schemathesis`, CI installs it) against the real API server
// on loopback, over the real Temporal dev server with real workers and the fake LLM and Lean:
// every operation in /openapi.json fuzzed from its schemas (positive and negative cases, then
// stateful sequences following the links it infers, e.g. start → read → cancel → events). All of
// Schemathesis's checks are on (test/schemathesis.toml, which names the two exceptions and
// why); the test fails with Schemathesis's own report on any 5xx, any response that does not
// match its declared status, media type or schema, or any other check. Runs it starts are real
// but cheap (fakes), and they run to completion, so finished runs are read back too.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { buildServer } from '../../api/server';
import { hashKey } from '../../client/api-keys';
import { registryCatalog } from '../../client/library-catalog';
import { IndexRegistry } from '../../engines/retrieval/index-registry';
import { createStack, FIXTURE_CORPUS, FIXTURE_LIBRARY, startTemporal, workflowBundle, type TestStack } from '../helpers/stack';
import { findSchemathesis } from '../helpers/schemathesis';
import { MINI_BENCHMARK, waitFor } from '../helpers/sweep';

const ST = findSchemathesis();
const CONFIG = fileURLToPath(new URL('../schemathesis.toml', import.meta.url));
const KEY = 'schemathesis-test-key';
// Test cases per operation in the fuzzing phase (the coverage phase adds its own, a fixed set
// from the schemas): about 2,000 requests over 15 operations, 2–3.5 minutes at a load average of 20.
const MAX_EXAMPLES = Number(process.env.DRIFTLINE_SCHEMATHESIS_EXAMPLES ?? 20);

// In CI a missing Schemathesis fails the test below; elsewhere the suite is skipped, saying how to install it.
const suite = ST || process.env.CI ? describe : describe.skip;
const title =
  ST || process.env.CI
    ? 'Schemathesis against /openapi.json'
    : 'Schemathesis against /openapi.json (skipped: not installed; run `npm run setup:schemathesis`)';

let env: TestWorkflowEnvironment;
let stack: TestStack;
let app: FastifyInstance;
let base: string;
let stopWorkers: () => void = () => {};
let workersDone: Promise<unknown> = Promise.resolve();
let workDir: string;

suite(title, () => {
  beforeAll(async () => {
    env = await startTemporal();
    stack = await createStack(env, { queue: 'default', repl: { unknownIdentifiers: ['Nat.Primee'] } });
    await stack.indexes.open(FIXTURE_LIBRARY);
    // Bundled before the server listens: bundling stalls the event loop, which load shedding would see.
    await workflowBundle();
    app = await buildServer({
      temporal: env.client,
      // 'other' is configured but has no index: the search answers 409 for it.
      libraries: [FIXTURE_LIBRARY, 'other'],
      defaultLibrary: FIXTURE_LIBRARY,
      maxStatementChars: 20_000,
      readiness: async () => ({ ready: true, checks: {}, missing: [] }),
      taskQueue: stack.mainQueue,
      catalog: registryCatalog(
        new IndexRegistry({
          libraries: [
            { name: FIXTURE_LIBRARY, corpusPath: FIXTURE_CORPUS },
            { name: 'other', corpusPath: '/nonexistent.jsonl' },
          ],
          dir: join(stack.dataDir, 'indexes'),
        }),
      ),
      // A key, so Schemathesis also checks that /v1 refuses requests without it (ignored_auth).
      apiKeys: [{ name: 'schemathesis', sha256: hashKey(KEY) }],
      // Schemathesis sends ~1,000 requests a minute: a limit that low would answer most of them
      // 429 and test nothing else (the limit itself has its test in api.test.ts).
      rateLimit: { max: 100_000, timeWindowMs: 60_000 },
      sseKeepAliveMs: 1000,
      // Sweeps too: benchmark paths resolve in the fixtures' data directory.
      sweeps: { results: stack.results, dataDir: dirname(MINI_BENCHMARK) },
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
    const workers = await stack.createWorkers();
    const stop = new Promise<void>((resolve) => (stopWorkers = resolve));
    workersDone = Promise.all(workers.map((w) => w.runUntil(stop)));
    workDir = mkdtempSync(join(tmpdir(), 'driftline-schemathesis-'));
    await seedResources();
  }, 300_000);

  afterAll(async () => {
    await app?.close();
    stopWorkers();
    await workersDone;
    await stack?.close();
    await env?.teardown();
    if (workDir) rmSync(workDir, { recursive: true, force: true });
  }, 120_000);

  it('finds no server error and no response that differs from the document, on every operation', async () => {
    if (!ST)
      throw new Error(
        'Schemathesis is not installed, and CI must run it: `DRIFTLINE_INSTALL_SCHEMATHESIS=1 npm run setup` (or `npm run setup:schemathesis`)',
      );
    const operations = Object.values((await (await fetch(`${base}/openapi.json`)).json()).paths as Record<string, object>).reduce(
      (n, ops) => n + Object.keys(ops).length,
      0,
    );
    const { status, output } = await runSchemathesis(ST, [
      '--config-file',
      configWithSeeds(),
      'run',
      `${base}/openapi.json`,
      '--header',
      `Authorization: Bearer ${KEY}`,
      '--max-examples',
      String(MAX_EXAMPLES),
      '--request-timeout',
      '60',
      '--no-color',
      '--output-truncate',
      'false',
      ...(process.env.DRIFTLINE_SCHEMATHESIS_SEED ? ['--seed', process.env.DRIFTLINE_SCHEMATHESIS_SEED] : []),
    ]);
    // Its summary (phases, test cases, seed) in the test log either way, without its closing
    // "=== 2 warnings in 34s ===" rule: CI reads such a line as pytest's, and one with no
    // "passed" in it as a run that executed no test.
    const summary = output.slice(Math.max(0, output.lastIndexOf('Test Phases:'))).trim();
    console.log(
      `Schemathesis: ${summary
        .split('\n')
        .filter((line) => !/^\s*=+ .* =+\s*$/.test(line))
        .join('\n')}`,
    );
    expect(status, output).toBe(0);
    // Every generated case passed (its warnings, e.g. that random ids mostly meet 404s, are not failures).
    expect(output).toMatch(/\b(\d+) generated, \1 passed\b/);
    // Every documented operation was tested (none skipped for lack of a usable schema).
    expect(output).toMatch(new RegExp(`Selected: ${operations}/${operations}\\s+Tested: ${operations}\\b`));
  }, 600_000);
});

const SWEEP_DONE = 'st-sweep-done';
const SWEEP_PAUSED = 'st-sweep-paused';
let knownIds: string[] = [];

/** Things for the fuzzer to find: random ids only ever meet 404s, and a random sweep file names
 * no benchmark that exists. A finished run, a finished sweep (so its report has rows) and a
 * paused one (so pause/resume/cancel can answer 202) are offered as values of `{id}`. */
async function seedResources(): Promise<void> {
  const call = async (method: string, path: string, body?: unknown) => {
    for (let attempt = 1; ; attempt++) {
      const response = await fetch(`${base}${path}`, {
        method,
        headers: { authorization: `Bearer ${KEY}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      // Load shedding stays on (its 503 is part of what is checked); the workers in this process
      // can stall the event loop on a busy machine, so a seed request asks again.
      if (response.status === 503 && attempt < 30) {
        await response.body?.cancel();
        await new Promise((r) => setTimeout(r, 1000));
        continue;
      }
      return { status: response.status, json: (await response.json()) as Record<string, unknown> };
    }
  };
  const sweepFile = (id: string) => ({
    id,
    benchmark: { path: 'mini.dev.jsonl', format: 'rautoformalizer', limit: 2 },
    library: FIXTURE_LIBRARY,
    window: 2,
    configurations: { drift: {}, zero: { retrieval: 'none', illustrate: false, repairRounds: 0, judge: false } },
  });
  const run = await call('POST', '/v1/formalizations', { statement: 'Every prime number p is at least 2.', id: 'st-run' });
  expect(run.status, JSON.stringify(run.json)).toBe(202);
  expect((await call('POST', '/v1/sweeps', sweepFile(SWEEP_DONE))).status).toBe(202);
  expect((await call('POST', '/v1/sweeps', sweepFile(SWEEP_PAUSED))).status).toBe(202);
  expect((await call('POST', `/v1/sweeps/${SWEEP_PAUSED}/pause`)).status).toBe(202);
  await waitFor(
    'the seeded run and sweep to finish',
    async () =>
      (await call('GET', '/v1/formalizations/st-run')).json.status === 'completed' &&
      (await call('GET', `/v1/sweeps/${SWEEP_DONE}`)).json.status === 'completed',
    240_000,
  );
  knownIds = ['st-run', SWEEP_DONE, SWEEP_PAUSED];
}

/** test/schemathesis.toml, plus the seeded ids as a dictionary offered for every `{id}` half the time. */
function configWithSeeds(): string {
  const file = join(workDir, 'schemathesis.toml');
  const seeds = `\n[dictionaries.ids]\nvalues = ${JSON.stringify(knownIds)}\n\n[parameters]\n"path.id" = { dictionary = "ids", probability = 0.5 }\n`;
  writeFileSync(file, readFileSync(CONFIG, 'utf8') + seeds);
  return file;
}

function runSchemathesis(st: string, args: string[]): Promise<{ status: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    // Its working directory is a temp dir: Schemathesis keeps a .hypothesis cache there.
    const child = spawn(st, args, {
      cwd: workDir,
      env: { ...process.env, NO_COLOR: '1', COLUMNS: '120' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    child.once('error', reject);
    child.once('exit', (status) => resolve({ status, output }));
  });
}
