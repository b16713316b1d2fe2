// Schemathesis (PyPI; `npm run setup:schemathesis`, CI installs it) against the real API server
// on loopback, over the real Temporal dev server with real workers and the fake LLM and Lean:
// every operation in /openapi.json fuzzed from its schemas (positive and negative cases, then
// stateful sequences following the links it infers, e.g. start → read → cancel → events). All of
// Schemathesis's checks are on (test/schemathesis.toml, which names the two exceptions and
// why); the test fails with Schemathesis's own report on any 5xx, any response that does not
// match its declared status, media type or schema, or any other check. Runs it starts are real
// but cheap (fakes), and they run to completion, so finished runs are read back too.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { buildServer } from '../api/server';
import { hashKey } from '../api/api-keys';
import { registryCatalog } from '../api/library-catalog';
import { IndexRegistry } from '../engines/retrieval/index-registry';
import { createStack, FIXTURE_CORPUS, FIXTURE_LIBRARY, startTemporal, workflowBundle, type TestStack } from './helpers/stack';
import { findSchemathesis } from './helpers/schemathesis';

const ST = findSchemathesis();
const CONFIG = fileURLToPath(new URL('./schemathesis.toml', import.meta.url));
const KEY = 'schemathesis-test-key';
// Test cases per operation and phase: about 1,000 requests in all, 1–2 minutes on 2 busy cores.
const MAX_EXAMPLES = Number(process.env.DRIFTLINE_SCHEMATHESIS_EXAMPLES ?? 50);

// In CI a missing Schemathesis fails the test below; elsewhere the suite is skipped, saying how to install it.
const suite = ST || process.env.CI ? describe : describe.skip;
const title = ST || process.env.CI ? 'Schemathesis against /openapi.json' : 'Schemathesis against /openapi.json (skipped: not installed; run `npm run setup:schemathesis`)';

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
        new IndexRegistry({ libraries: [{ name: FIXTURE_LIBRARY, corpusPath: FIXTURE_CORPUS }, { name: 'other', corpusPath: '/nonexistent.jsonl' }], dir: join(stack.dataDir, 'indexes') }),
      ),
      // A key, so Schemathesis also checks that /v1 refuses requests without it (ignored_auth).
      apiKeys: [{ name: 'schemathesis', sha256: hashKey(KEY) }],
      // Schemathesis sends ~1,000 requests a minute: a limit that low would answer most of them
      // 429 and test nothing else (the limit itself has its test in api.test.ts).
      rateLimit: { max: 100_000, timeWindowMs: 60_000 },
      sseKeepAliveMs: 1000,
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
    const workers = await stack.createWorkers();
    const stop = new Promise<void>((resolve) => (stopWorkers = resolve));
    workersDone = Promise.all(workers.map((w) => w.runUntil(stop)));
    workDir = mkdtempSync(join(tmpdir(), 'driftline-schemathesis-'));
  }, 180_000);

  afterAll(async () => {
    await app?.close();
    stopWorkers();
    await workersDone;
    await stack?.close();
    await env?.teardown();
    if (workDir) rmSync(workDir, { recursive: true, force: true });
  }, 120_000);

  it('finds no server error and no response that differs from the document, on every operation', async () => {
    if (!ST) throw new Error('Schemathesis is not installed, and CI must run it: `DRIFTLINE_INSTALL_SCHEMATHESIS=1 npm run setup` (or `npm run setup:schemathesis`)');
    const operations = Object.values((await (await fetch(`${base}/openapi.json`)).json()).paths as Record<string, object>).reduce((n, ops) => n + Object.keys(ops).length, 0);
    const { status, output } = await runSchemathesis(ST, [
      '--config-file', CONFIG,
      'run', `${base}/openapi.json`,
      '--header', `Authorization: Bearer ${KEY}`,
      '--max-examples', String(MAX_EXAMPLES),
      '--request-timeout', '60',
      '--no-color',
      '--output-truncate', 'false',
      ...(process.env.DRIFTLINE_SCHEMATHESIS_SEED ? ['--seed', process.env.DRIFTLINE_SCHEMATHESIS_SEED] : []),
    ]);
    // Its summary (phases, test cases, seed) in the test log either way.
    console.log(`Schemathesis: ${output.slice(Math.max(0, output.lastIndexOf('Test Phases:'))).trim()}`);
    expect(status, output).toBe(0);
    expect(output).toMatch(/No issues found/);
    // Every documented operation was tested (none skipped for lack of a usable schema).
    expect(output).toMatch(new RegExp(`Selected: ${operations}/${operations}\\s+Tested: ${operations}\\b`));
  }, 600_000);
});

function runSchemathesis(st: string, args: string[]): Promise<{ status: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    // Its working directory is a temp dir: Schemathesis keeps a .hypothesis cache there.
    const child = spawn(st, args, { cwd: workDir, env: { ...process.env, NO_COLOR: '1', COLUMNS: '120' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    child.once('error', reject);
    child.once('exit', (status) => resolve({ status, output }));
  });
}
