// `npm start` as a user runs it: the whole stack in one foreground process (dev server, index
// build, both workers, API), a run through the API and through the `driftline` command, a clean
// stop on Ctrl-C, and runs still there after a restart.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAKE_MODELS, startFakeOpenAI, type FakeOpenAI } from './fakes/openai-server';
import { fakeRepl, type FakeRepl } from './fakes/fake-repl-harness';
import { FIXTURE_CORPUS } from './helpers/stack';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

let llm: FakeOpenAI;
let repl: FakeRepl;
let dataDir: string;
let env: NodeJS.ProcessEnv;
let api: string;
let stack: ChildProcess | undefined;
let output = '';

function startStack(): ChildProcess {
  output = '';
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'infra/start.ts')], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  return child;
}

async function waitReady(timeoutMs = 90_000): Promise<Record<string, unknown>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const response = await fetch(`${api}/readyz`);
      if (response.status === 200) return (await response.json()) as Record<string, unknown>;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`the stack did not get ready:\n${output}`);
    if (stack?.exitCode != null) throw new Error(`the stack exited (${stack.exitCode}):\n${output}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

function runCommand(args: string[], commandEnv: NodeJS.ProcessEnv): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(ROOT, 'bin/driftline.js'), ...args], { cwd: ROOT, env: commandEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.once('exit', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}

async function stopStack(child: ChildProcess): Promise<number | null> {
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.kill('SIGINT');
  return exited;
}

beforeAll(async () => {
  llm = await startFakeOpenAI();
  repl = fakeRepl({});
  dataDir = mkdtempSync(join(tmpdir(), 'driftline-start-'));
  const port = await freePort();
  api = `http://127.0.0.1:${port}`;
  env = {
    ...process.env,
    PORT: String(port),
    TEMPORAL_PORT: String(await freePort()),
    TEMPORAL_UI_PORT: String(await freePort()),
    DRIFTLINE_DATA_DIR: dataDir,
    DRIFTLINE_LIBRARIES: `mini=${FIXTURE_CORPUS}`,
    OPENAI_BASE_URL: llm.url,
    OPENAI_API_KEY: 'test-key',
    DRIFTLINE_MODEL_DECOMPOSER: FAKE_MODELS.decomposer,
    DRIFTLINE_MODEL_FORMALIZER: FAKE_MODELS.formalizer,
    DRIFTLINE_MODEL_JUDGE: FAKE_MODELS.judge,
    LEAN_REPL_CMD: repl.command,
  };
  delete env.TEMPORAL_ADDRESS;
  stack = startStack();
});

afterAll(async () => {
  if (stack && stack.exitCode === null) await stopStack(stack);
  await llm?.close();
  repl?.cleanup();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('npm start', () => {
  let runId = '';

  it('starts everything, builds the missing index, says where things are, and gets ready', async () => {
    const report = await waitReady();
    expect(report).toMatchObject({ ready: true, missing: [] });
    expect(output).toMatch(/built the index \(none existed yet\)/);
    expect(output).toContain(`API          ${api}`);
    expect(output).toMatch(/Temporal UI  http:\/\/127\.0\.0\.1:\d+/);
    expect(existsSync(join(dataDir, 'temporal.db'))).toBe(true);

    // The main worker probes the LLM at start; /readyz shows what it found.
    let llmReport: Record<string, unknown> | undefined;
    const deadline = Date.now() + 30_000;
    while (!llmReport && Date.now() < deadline) {
      llmReport = ((await (await fetch(`${api}/readyz`)).json()) as { llm?: Record<string, unknown> }).llm;
      if (!llmReport) await new Promise((r) => setTimeout(r, 300));
    }
    expect(llmReport).toMatchObject({ baseURL: llm.url, structuredOutput: 'json_schema', source: 'probe' });
  }, 120_000);

  it('formalizes a statement posted to the API', async () => {
    const response = await fetch(`${api}/v1/formalizations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ statement: 'If p is a prime number then p is at least 2.' }),
    });
    expect(response.status).toBe(202);
    runId = ((await response.json()) as { id: string }).id;
    let view: { status: string; result?: { compiled: boolean; judge: { faithful: boolean } } };
    const deadline = Date.now() + 60_000;
    do {
      await new Promise((r) => setTimeout(r, 300));
      view = (await (await fetch(`${api}/v1/formalizations/${runId}`)).json()) as typeof view;
    } while (view.status === 'running' && Date.now() < deadline);
    expect(view.status).toBe('completed');
    expect(view.result).toMatchObject({ compiled: true, judge: { faithful: true } });
  }, 90_000);

  it('formalizes a statement from the driftline command, showing each stage', async () => {
    // Asynchronously: the fake LLM lives in this process and must keep answering.
    const run = await runCommand(['formalize', 'Every prime number p is at least 2.', '--gold-statement', 'theorem gold (p : ℕ) (hp : Nat.Prime p) : 2 ≤ p := by sorry'], { ...env, TEMPORAL_ADDRESS: `127.0.0.1:${env.TEMPORAL_PORT}` });
    expect(run.status, run.stderr).toBe(0);
    for (const stage of ['decompose', 'retrieve', 'illustrate', 'formalize', 'compile', 'judge']) {
      expect(run.stderr).toContain(`• ${stage}`);
    }
    expect(run.stdout).toMatch(/theorem .*:= by sorry/);
    expect(run.stdout).toMatch(/judge: +10\/10, faithful/);
    expect(run.stdout).toMatch(/gold: +equivalent/);
  }, 90_000);

  it('restarts a worker that dies, and runs go on', async () => {
    const mainWorker = () =>
      execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(stack!.pid)], { encoding: 'utf8' })
        .split('\n')
        .filter((line) => line.includes('worker --queue main'))
        .map((line) => Number(line.trim().split(/\s+/)[0]));
    const [before] = mainWorker();
    expect(before).toBeGreaterThan(0);
    process.kill(before!, 'SIGKILL');
    const deadline = Date.now() + 30_000;
    let after: number | undefined;
    while (!after && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 250));
      after = mainWorker().find((pid) => pid !== before);
    }
    expect(after).toBeDefined();
    expect(output).toMatch(/worker exited; restarting/);
    // Not ready until the new process polls (it bundles the workflows first, slowly on a busy
    // machine); a dead worker's pollers stay listed in Temporal for minutes and do not count.
    const report = await waitReady();
    expect(report).toMatchObject({ ready: true });
    const run = await runCommand(['formalize', 'Every prime number p is at least 2.', '--json'], { ...env, TEMPORAL_ADDRESS: `127.0.0.1:${env.TEMPORAL_PORT}` });
    expect(run.status, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ compiled: true });
  }, 90_000);

  it('stops everything on Ctrl-C and keeps the runs for the next start', async () => {
    expect(await stopStack(stack!)).toBe(0);
    // Nothing of the stack keeps running: the API port is free again.
    await expect(fetch(`${api}/healthz`)).rejects.toThrow();

    stack = startStack();
    await waitReady();
    expect(output).not.toMatch(/built the index/);
    const view = (await (await fetch(`${api}/v1/formalizations/${runId}`)).json()) as { status: string };
    expect(view.status).toBe('completed');
  }, 150_000);
});

describe('npm start with a corpus that does not parse', () => {
  it('stops with a message naming the file and line, and leaves nothing running', async () => {
    const temporalPort = await freePort();
    const badEnv: NodeJS.ProcessEnv = {
      ...env,
      PORT: String(await freePort()),
      TEMPORAL_PORT: String(temporalPort),
      TEMPORAL_UI_PORT: String(await freePort()),
      DRIFTLINE_DATA_DIR: mkdtempSync(join(tmpdir(), 'driftline-bad-')),
      DRIFTLINE_LIBRARIES: `bad=${fileURLToPath(new URL('./fixtures/corpus/bad.jsonl', import.meta.url))}`,
    };
    const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'infra/start.ts')], { cwd: ROOT, env: badEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(1);
    expect(stderr).toMatch(/driftline: cannot build the index of library "bad": .*bad\.jsonl:3: not JSON/);
    expect(stderr).not.toMatch(/at loadCorpus/); // a message, not a stack trace
    // The dev server it had started is gone: its port is free again.
    await new Promise<void>((resolve, reject) => {
      const server = createServer();
      server.once('error', reject);
      server.listen(temporalPort, '127.0.0.1', () => server.close(() => resolve()));
    });
    rmSync(badEnv.DRIFTLINE_DATA_DIR!, { recursive: true, force: true });
  }, 60_000);
});
