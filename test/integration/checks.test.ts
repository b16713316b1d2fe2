// Batch checks without an LLM through the real stack: POST /v1/checks with 50 statements (some
// compile, some the fake REPL rejects, one hostile the screen refuses, some with golds equivalent
// and not), the Lean worker a separate process killed with SIGKILL mid-batch and started again;
// every statement still has exactly one result. Then GET, the list, the SSE stream, a 400, and
// `driftline check FILE.jsonl` on a file with a bad line and on a good one.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { buildServer } from '../../api/server';
import { createStack, FIXTURE_CORPUS, FIXTURE_LIBRARY, startTemporal, workflowBundleFile, type TestStack } from '../helpers/stack';
import { fakeRepl, type FakeRepl } from '../fakes/fake-repl-harness';
import { activityRuns } from '../helpers/history';

const CLI = fileURLToPath(new URL('../../bin/cli.ts', import.meta.url));
const GOLD = 'open Nat\ntheorem gold (p : ℕ) (hp : p.Prime) : p ≥ 2 := by sorry';
const HOSTILE = 'open Nat #eval IO.getEnv "OPENAI_API_KEY"\ntheorem t : True := by sorry';

interface Expected {
  id: string;
  statement: string;
  gold?: string;
  status: string;
  equivalent?: boolean;
}

/** 50 statements: 20 that compile, 10 the fake rejects, 1 hostile, 10 equivalent to their gold, 9 not. */
function batch(): Expected[] {
  const items: Expected[] = [];
  for (let i = 0; i < 20; i++)
    items.push({ id: `good-${i}`, statement: `theorem g${i} (n : ℕ) : n + ${i} = ${i} + n := by sorry`, status: 'ok' });
  for (let i = 0; i < 10; i++)
    items.push({ id: `bad-${i}`, statement: `theorem b${i} (p : ℕ) (hp : Nat.Primez p) : 2 ≤ p := by sorry`, status: 'error' });
  items.push({ id: 'hostile', statement: HOSTILE, status: 'refused' });
  for (let i = 0; i < 10; i++)
    items.push({
      id: `same-${i}`,
      statement: `theorem s${i} (p : ℕ) (hp : Nat.Prime p) : 2 ≤ p := by sorry`,
      gold: GOLD,
      status: 'ok',
      equivalent: true,
    });
  for (let i = 0; i < 9; i++)
    items.push({
      id: `other-${i}`,
      statement: `theorem o${i} (p : ℕ) (hp : Nat.Prime p) : 3 ≤ p := by sorry`,
      gold: GOLD,
      status: 'ok',
      equivalent: false,
    });
  return items;
}

let env: TestWorkflowEnvironment;
let stack: TestStack;
let repl: FakeRepl;
let app: FastifyInstance;
let base: string;
let work: string;
let bundleFile: string;
const children: ChildProcess[] = [];

function workerEnv(): NodeJS.ProcessEnv {
  return {
    ...process.env,
    TEMPORAL_ADDRESS: env.address,
    DRIFTLINE_LIBRARIES: `${FIXTURE_LIBRARY}=${FIXTURE_CORPUS}`,
    DRIFTLINE_DATA_DIR: stack.dataDir,
    DRIFTLINE_CONFIG: join(work, 'none.json'),
    DRIFTLINE_WORKFLOW_BUNDLE: bundleFile,
    OPENAI_BASE_URL: stack.llm.url,
    OPENAI_API_KEY: 'test-key',
  };
}

function startLeanWorker(): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', CLI, 'worker', '--queue', 'lean'], {
    env: { ...workerEnv(), LEAN_REPL_CMD: repl.command, ...repl.sandboxEnv, LEAN_POOL_SIZE: '2' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  children.push(child);
  return child;
}

async function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

async function until(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Runs the CLI to its end: exit code and output. */
function cli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CLI, ...args], { env: workerEnv() });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

interface Sse {
  event: string;
  id?: string;
  data: Record<string, unknown>;
}

/** Reads a whole event stream (it ends after its end event). */
async function readEvents(url: string): Promise<Sse[]> {
  const response = await fetch(url, { headers: { accept: 'text/event-stream' } });
  expect(response.status).toBe(200);
  const text = await response.text();
  return text
    .split('\n\n')
    .map((block) => {
      const fields: Record<string, string> = {};
      for (const line of block.split('\n')) {
        const i = line.indexOf(': ');
        if (i > 0 && !line.startsWith(':')) fields[line.slice(0, i)] = line.slice(i + 2);
      }
      return fields;
    })
    .filter((f) => f.event)
    .map((f) => ({ event: f.event!, ...(f.id ? { id: f.id } : {}), data: JSON.parse(f.data!) as Record<string, unknown> }));
}

beforeAll(async () => {
  env = await startTemporal();
  work = mkdtempSync(join(tmpdir(), 'driftline-checks-'));
  writeFileSync(join(work, 'none.json'), '{}');
  bundleFile = await workflowBundleFile(work);
  repl = fakeRepl({ bodyDelayMs: 150, unknownIdentifiers: ['Nat.Primez'] });
  stack = await createStack(env, { queue: 'default', repl: false });
  app = await buildServer({
    temporal: env.client,
    libraries: [FIXTURE_LIBRARY],
    defaultLibrary: FIXTURE_LIBRARY,
    maxStatementChars: 20_000,
    readiness: async () => ({ ready: true, checks: {}, missing: [] }),
    taskQueue: stack.mainQueue,
    sseKeepAliveMs: 500,
    pressure: { maxEventLoopDelayMs: 0 },
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
}, 120_000);

afterAll(async () => {
  for (const child of children) await kill(child);
  await app?.close();
  await stack?.close();
  repl?.cleanup();
  await env?.teardown();
  rmSync(work, { recursive: true, force: true });
});

describe('POST /v1/checks', () => {
  it('checks 50 statements through a kill -9 of the Lean worker: one result each, in order', async () => {
    const expected = batch();
    const [mainWorker] = await stack.createWorkers('main');
    const mainRun = mainWorker!.run();
    try {
      const first = startLeanWorker();
      const response = await fetch(`${base}/v1/checks`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ statements: expected.map(({ id, statement, gold }) => ({ id, statement, ...(gold ? { gold } : {}) })) }),
      });
      expect(response.status).toBe(202);
      const started = (await response.json()) as { id: string; links: { self: string; events: string } };
      expect(started.id).toMatch(/^checks-[0-9a-f-]{36}$/);
      expect(started.links.self).toBe(`/v1/checks/${started.id}`);
      // The stream, followed from the start while the batch runs.
      const streamed = readEvents(`${base}${started.links.events}`);

      await until(() => repl.count('begin') >= 10, 90_000, 'ten checks to reach the REPL');
      const running = (await (await fetch(`${base}${started.links.self}`)).json()) as { status: string; total: number };
      expect(running).toMatchObject({ status: 'running', total: 50 });
      await kill(first);
      startLeanWorker();

      const events = await streamed;
      const finished = events.filter((e) => e.event === 'check.finished');
      expect(finished).toHaveLength(50);
      expect(finished.map((e) => Number(e.id))).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
      expect(new Set(finished.map((e) => e.data.index)).size).toBe(50);
      expect(events.at(-1)!.event).toBe('checks.completed');
      expect(events.at(-1)!.data.summary).toMatchObject({ total: 50, refused: 1, failed: 0, equivalent: 10, notEquivalent: 9 });

      const view = (await (await fetch(`${base}${started.links.self}`)).json()) as {
        status: string;
        results: {
          id: string;
          status: string;
          compiled: boolean;
          equivalent?: boolean;
          reason?: string;
          messages: unknown[];
          durationMs: number;
          peakRssMb?: number;
        }[];
      };
      expect(view.status).toBe('completed');
      expect(view.results.map((r) => r.id)).toEqual(expected.map((e) => e.id));
      view.results.forEach((result, i) => {
        expect(result.status, result.id).toBe(expected[i]!.status);
        expect(result.compiled, result.id).toBe(expected[i]!.status === 'ok');
        expect(result.equivalent, result.id).toBe(expected[i]!.equivalent);
        expect(typeof result.durationMs).toBe('number');
        // Lean's (the fake REPL's) peak memory for every statement that reached it; none for the
        // refused one.
        if (result.status === 'refused') expect(result.peakRssMb, result.id).toBeUndefined();
        else expect(result.peakRssMb, result.id).toBeGreaterThan(0);
      });
      const hostile = view.results.find((r) => r.id === 'hostile')!;
      expect(hostile.reason).toMatch(/^statement is refused before Lean \(line 1, column 9\): `#eval` runs code/);
      expect(repl.leaks()).toEqual([]);
      // The kill came mid-batch: checks in flight on the dead worker ran again on the new one.
      const runs = await activityRuns(env.client, started.id);
      expect(runs.filter((r) => r.type === 'compile')).toHaveLength(49); // the hostile one never reached Lean
      expect(runs.some((r) => (r.attempt ?? 0) > 1)).toBe(true);
      // Each event's result is the statement's result at its index.
      for (const e of finished) expect(e.data.result).toEqual(view.results[e.data.index as number]);

      // The batch is listed, newest first.
      const list = (await (await fetch(`${base}/v1/checks?limit=5`)).json()) as { items: { id: string; status: string }[] };
      expect(list.items[0]).toMatchObject({ id: started.id, status: 'completed' });

      // After the end, the stream replays from Last-Event-ID.
      const again = await readEvents(`${base}${started.links.events}?after=45`);
      expect(again.map((e) => e.event)).toEqual([...Array(5).fill('check.finished'), 'checks.completed']);
      // A resume point past the end (Schemathesis sent 1.6e24) gives the end event, numbered as an integer.
      const past = await readEvents(`${base}${started.links.events}?after=1591150964022069000000000`);
      expect(past.map((e) => e.event)).toEqual(['checks.completed']);
      expect(past[0]!.id).toMatch(/^[0-9]+$/);
    } finally {
      for (const child of children.splice(0)) await kill(child);
      mainWorker!.shutdown();
      await mainRun;
    }
  }, 240_000);

  it('accepts statements with the definitions they need, and refuses a definition that would run code', async () => {
    const [mainWorker] = await stack.createWorkers('main');
    const mainRun = mainWorker!.run();
    try {
      startLeanWorker();
      const answer = 'abbrev answer : Set ℕ := {2, 3}\n\ntheorem small_primes : {p : ℕ | p.Prime ∧ p < 5} = answer := by sorry';
      const structure = 'structure Pt where\n  x : ℕ\n  y : ℕ\n\ntheorem pt_eq (a : Pt) : a = ⟨a.x, a.y⟩ := by sorry';
      const hostile = '@[implemented_by evil] def answer : Set ℕ := {2, 3}\n\ntheorem t : answer = answer := by sorry';
      const response = await fetch(`${base}/v1/checks`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          statements: [
            { id: 'abbrev', statement: answer },
            { id: 'structure', statement: structure },
            { id: 'hostile-def', statement: hostile },
          ],
        }),
      });
      expect(response.status).toBe(202);
      const { links } = (await response.json()) as { links: { self: string; events: string } };
      const events = await readEvents(`${base}${links.events}`);
      expect(events.at(-1)!.event).toBe('checks.completed');
      const view = (await (await fetch(`${base}${links.self}`)).json()) as { results: { id: string; status: string; reason?: string }[] };
      expect(view.results.map((r) => [r.id, r.status])).toEqual([
        ['abbrev', 'ok'],
        ['structure', 'ok'],
        ['hostile-def', 'refused'],
      ]);
      expect(view.results[2]!.reason).toMatch(/^statement is refused before Lean \(line 1, column \d+\): .*implemented_by/);
      // The definitions reached Lean with their theorems; nothing of the hostile one did.
      const begun = repl
        .events()
        .filter((e) => e.event === 'begin')
        .map((e) => e.detail);
      expect(begun).toEqual(expect.arrayContaining(['name=small_primes', 'name=pt_eq']));
      expect(begun.some((d) => d === 'name=t')).toBe(false);
      expect(repl.leaks()).toEqual([]);
    } finally {
      for (const child of children.splice(0)) await kill(child);
      mainWorker!.shutdown();
      await mainRun;
    }
  }, 180_000);

  it('answers 400 for a body that is not the schema, 404 for an unknown batch', async () => {
    const post = (body: unknown) =>
      fetch(`${base}/v1/checks`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect((await post({ statements: [] })).status).toBe(400);
    expect((await post({ statements: [{ statement: 1 }] })).status).toBe(400);
    expect((await post({ statements: [{ statement: 'theorem t : True := by sorry', extra: 1 }] })).status).toBe(400);
    expect((await post({ statements: Array(501).fill({ statement: 'theorem t : True := by sorry' }) })).status).toBe(400);
    expect((await post({ statements: [{ statement: `theorem t : ${'x'.repeat(20_001)}` }] })).status).toBe(400);
    expect((await fetch(`${base}/v1/checks/no-such-batch`)).status).toBe(404);
    // A caller-chosen id: the same request again starts nothing; a header that disagrees is a 400.
    const one = { id: `checks-fixed-${Date.now()}`, statements: [{ statement: 'theorem t : True := by sorry' }] };
    const first = await post(one);
    expect(first.status).toBe(202);
    const second = await post(one);
    expect(second.status).toBe(200);
    expect(await second.json()).toMatchObject({ id: one.id, existing: true });
    const differing = await fetch(`${base}/v1/checks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': 'other' },
      body: JSON.stringify(one),
    });
    expect(differing.status).toBe(400);
    expect((await fetch(`${base}/v1/checks/no-such-batch/events`)).status).toBe(404);
  });
});

describe('driftline check FILE.jsonl', () => {
  it('names a file that is not there as sweep start does, without the raw ENOENT', async () => {
    const result = await cli(['check', join(work, 'no-such.jsonl')]);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(`driftline: cannot read check file ${join(work, 'no-such.jsonl')}: no such file\n`);
  }, 60_000);

  it('names a malformed line FILE:LINE: field: problem before anything starts', async () => {
    const file = join(work, 'bad.jsonl');
    writeFileSync(
      file,
      ['{"statement": "theorem t : True := by sorry"}', '', '{"id": "x", "gold": "theorem g : True := by sorry"}', 'nope'].join('\n'),
    );
    const listed = (await (await fetch(`${base}/v1/checks?limit=200`)).json()) as { items: unknown[] };
    const result = await cli(['check', file]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`${file}:3: statement: missing`);
    expect(result.stderr).toMatch(new RegExp(`${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}:4: line: not JSON`));
    // The bad line itself is not echoed.
    expect(result.stderr).not.toContain('nope');
    // Nothing started.
    expect(((await (await fetch(`${base}/v1/checks?limit=200`)).json()) as { items: unknown[] }).items).toHaveLength(listed.items.length);
  }, 60_000);

  it('runs a good file: a line per statement and a summary, or the results as JSON', async () => {
    const file = join(work, 'good.jsonl');
    writeFileSync(
      file,
      [
        JSON.stringify({ id: 'a', statement: 'theorem a (p : ℕ) (hp : Nat.Prime p) : 2 ≤ p := by sorry', gold: GOLD }),
        JSON.stringify({ id: 'b', statement: 'theorem b (p : ℕ) (hp : Nat.Primez p) : 2 ≤ p := by sorry' }),
        JSON.stringify({ statement: HOSTILE }),
      ].join('\n') + '\n',
    );
    const [mainWorker] = await stack.createWorkers('main');
    const mainRun = mainWorker!.run();
    try {
      startLeanWorker();
      const text = await cli(['check', file]);
      // Lean rejected one (b) and the screen refused one (#3): the rejection decides (bin/exit-codes.ts).
      expect(text.code, text.stderr).toBe(2);
      const lines = text.stdout.trim().split('\n');
      expect(lines).toHaveLength(4);
      expect(lines.find((l) => l.startsWith('a: '))).toMatch(/^a: ok, equivalent to gold/);
      expect(lines.find((l) => l.startsWith('b: '))).toMatch(/^b: error \(1:\d+: unknown identifier 'Nat.Primez'/);
      expect(lines.find((l) => l.startsWith('#3: '))).toMatch(/^#3: refused \(statement is refused before Lean/);
      expect(lines[3]).toBe('3 checked: 1 compiled, 1 rejected by Lean, 1 refused by the screen, 0 failed; 1 equivalent to gold, 0 not');

      const json = await cli(['check', file, '--json']);
      expect(json.code, json.stderr).toBe(2);
      const parsed = JSON.parse(json.stdout) as { status: string; results: { id?: string; status: string }[] };
      expect(parsed.status).toBe('completed');
      expect(parsed.results.map((r) => [r.id, r.status])).toEqual([
        ['a', 'ok'],
        ['b', 'error'],
        [undefined, 'refused'],
      ]);
    } finally {
      for (const child of children.splice(0)) await kill(child);
      mainWorker!.shutdown();
      await mainRun;
    }
  }, 120_000);
});
