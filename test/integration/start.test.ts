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
import { FAKE_MODELS, startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';
import { fakeRepl, type FakeRepl } from '../fakes/fake-repl-harness';
import { FIXTURE_CORPUS } from '../helpers/stack';
import { freePort } from '../helpers/ports';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

let llm: FakeOpenAI;
let repl: FakeRepl;
let dataDir: string;
let env: NodeJS.ProcessEnv;
let api: string;
let stack: ChildProcess | undefined;
let output = '';

function startStack(): ChildProcess {
  output = '';
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'infra/start.ts')], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
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
    const child = spawn(process.execPath, [join(ROOT, 'bin/driftline.js'), ...args], {
      cwd: ROOT,
      env: commandEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
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

/** The environment of a `driftline` command talking to the running stack. */
function cliEnv(): NodeJS.ProcessEnv {
  return { ...env, TEMPORAL_ADDRESS: `127.0.0.1:${env.TEMPORAL_PORT}` };
}

async function stopStack(child: ChildProcess): Promise<number | null> {
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.kill('SIGINT');
  return exited;
}

beforeAll(async () => {
  llm = await startFakeOpenAI();
  // Knows one misspelling, so a run can be made to fail to compile.
  repl = fakeRepl({ unknownIdentifiers: ['Nat.Primee'] });
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
    ...repl.sandboxEnv,
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
    // The banner comes only once the stack is ready: /readyz is 200 the moment it shows.
    const bannerBy = Date.now() + 120_000;
    while (!output.includes('driftline is running.') && Date.now() < bannerBy) {
      if (stack?.exitCode != null) throw new Error(`the stack exited (${stack.exitCode}):\n${output}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(output).toContain('driftline is running.');
    expect((await fetch(`${api}/readyz`)).status).toBe(200);
    const report = await waitReady();
    expect(report).toMatchObject({ ready: true, missing: [] });
    expect(output).toMatch(/API keys +none configured: listening on loopback only/);
    expect(existsSync(join(dataDir, 'stack.pids'))).toBe(true);
    expect(output).toMatch(/built the index \(none existed yet\)/);
    expect(output).toContain(`API          ${api}`);
    expect(output).toMatch(/Temporal UI {2}http:\/\/127\.0\.0\.1:\d+/);
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
    // The stack's terminal says so: one line when it started, one when it ended.
    const seen = Date.now() + 30_000;
    while (!(output.includes('run ended') && output.includes(runId)) && Date.now() < seen) await new Promise((r) => setTimeout(r, 200));
    const lines = output.split('\n').filter((l) => l.includes(runId));
    expect(lines.filter((l) => l.includes('run started'))).toHaveLength(1);
    expect(lines.filter((l) => l.includes('run ended'))).toHaveLength(1);
    expect(lines.find((l) => l.includes('run ended'))).toMatch(/faithful/);
  }, 90_000);

  it('formalizes a statement from the driftline command, showing each stage', async () => {
    // Asynchronously: the fake LLM lives in this process and must keep answering.
    const run = await runCommand(
      [
        'formalize',
        'Every prime number p is at least 2.',
        '--gold-statement',
        'theorem gold (p : ℕ) (hp : Nat.Prime p) : 2 ≤ p := by sorry',
      ],
      cliEnv(),
    );
    expect(run.status, run.stderr).toBe(0);
    for (const stage of ['decompose', 'retrieve', 'illustrate', 'formalize', 'compile', 'judge']) {
      expect(run.stderr).toContain(`• ${stage}`);
    }
    expect(run.stdout).toMatch(/theorem .*:= by sorry/);
    expect(run.stdout).toMatch(/judge: +10\/10, faithful/);
    expect(run.stdout).toMatch(/gold: +equivalent/);
    expect(run.stderr).toMatch(
      new RegExp(`Temporal UI: http://127\\.0\\.0\\.1:${env.TEMPORAL_UI_PORT}/namespaces/default/workflows/formalize-`),
    );
  }, 90_000);

  it('prints the compiler messages and exits 2 when the statement does not compile', async () => {
    llm.script(FAKE_MODELS.formalizer, { content: '```lean\ntheorem t (p : ℕ) (hp : Nat.Primee p) : 2 ≤ p := by sorry\n```' });
    // --no-cache: an earlier run of this statement left its replies in the cache; this one must ask.
    const run = await runCommand(
      ['formalize', '--no-cache', '--repair-rounds', '0', '--no-judge', 'Every prime number p is at least 2.'],
      cliEnv(),
    );
    expect(run.status, run.stderr).toBe(2);
    expect(run.stdout).toMatch(/compiled: +no/);
    expect(run.stdout).toMatch(/lean: +\d+:\d+: error: unknown identifier 'Nat\.Primee'/);
    expect(run.stderr).toMatch(/compile: checking with Lean\n +Lean rejected it \(1 error\)/);
  }, 90_000);

  it('exits 3 when the statement screen refused the last attempt before Lean, saying why', async () => {
    llm.script(FAKE_MODELS.formalizer, {
      content: '```lean\nopen Nat #eval IO.getEnv "OPENAI_API_KEY"\ntheorem t : True := by sorry\n```',
    });
    const run = await runCommand(
      ['formalize', '--no-cache', '--repair-rounds', '0', '--no-judge', 'Every natural number is at least zero.'],
      cliEnv(),
    );
    expect(run.status, run.stderr).toBe(3);
    expect(`${run.stdout}${run.stderr}`).toMatch(/refused/i);
  }, 90_000);

  it('lists, shows and cancels runs from the driftline command, as text and as JSON', async () => {
    const list = await runCommand(['runs', 'list', '--json', '--limit', '50'], cliEnv());
    expect(list.status, list.stderr).toBe(0);
    const items = (JSON.parse(list.stdout) as { items: { id: string; status: string; links: { temporalUi: string } }[] }).items;
    const mine = items.find((i) => i.id === runId);
    expect(mine).toMatchObject({ status: 'completed', links: { temporalUi: expect.stringContaining(encodeURIComponent(runId)) } });
    const table = await runCommand(['runs', 'list', '--status', 'completed'], cliEnv());
    expect(table.stdout).toMatch(/^ID +STATUS +OUTCOME\/STAGE/m);
    expect(table.stdout).toContain(runId);

    const show = await runCommand(['runs', 'show', runId], cliEnv());
    expect(show.status, show.stderr).toBe(0);
    expect(show.stdout).toMatch(/status: +completed/);
    expect(show.stdout).toMatch(/ui: +http:\/\/127\.0\.0\.1:\d+\/namespaces\/default\/workflows\//);
    expect(JSON.parse((await runCommand(['runs', 'show', runId, '--json'], cliEnv())).stdout)).toMatchObject({
      id: runId,
      status: 'completed',
    });

    const cancel = await runCommand(['runs', 'cancel', runId], cliEnv());
    expect(cancel.status).toBe(1);
    expect(cancel.stderr).toMatch(/has already ended \(completed\); there is nothing to cancel/);
    const missing = await runCommand(['runs', 'show', 'no-such-run'], cliEnv());
    expect(missing.status).toBe(1);
    expect(missing.stderr).toMatch(/no run with id "no-such-run"/);
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
    const run = await runCommand(['formalize', 'Every prime number p is at least 2.', '--json'], {
      ...env,
      TEMPORAL_ADDRESS: `127.0.0.1:${env.TEMPORAL_PORT}`,
    });
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

describe('npm start killed with SIGKILL', () => {
  it('leaves no process it started running after 10 s', async () => {
    const killEnv: NodeJS.ProcessEnv = {
      ...env,
      PORT: String(await freePort()),
      TEMPORAL_PORT: String(await freePort()),
      TEMPORAL_UI_PORT: String(await freePort()),
      DRIFTLINE_DATA_DIR: mkdtempSync(join(tmpdir(), 'driftline-kill-')),
    };
    const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'infra/start.ts')], {
      cwd: ROOT,
      env: killEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    const deadline = Date.now() + 120_000;
    while (!out.includes('driftline is running.') && Date.now() < deadline && child.exitCode === null)
      await new Promise((r) => setTimeout(r, 200));
    expect(out).toContain('driftline is running.');
    const started = execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(child.pid)], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean)
      .map((line) => ({ pid: Number(line.trim().split(/\s+/)[0]), args: line }));
    expect(started.some((p) => p.args.includes('server start-dev'))).toBe(true);
    expect(started.filter((p) => p.args.includes('worker --queue'))).toHaveLength(2);

    child.kill('SIGKILL');
    const alive = (pid: number) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    const gone = Date.now() + 10_000;
    while (started.some((p) => alive(p.pid)) && Date.now() < gone) await new Promise((r) => setTimeout(r, 200));
    expect(started.filter((p) => alive(p.pid)).map((p) => p.args)).toEqual([]);
    rmSync(killEnv.DRIFTLINE_DATA_DIR!, { recursive: true, force: true });
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
      DRIFTLINE_LIBRARIES: `bad=${fileURLToPath(new URL('../fixtures/corpus/bad.jsonl', import.meta.url))}`,
    };
    const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'infra/start.ts')], {
      cwd: ROOT,
      env: badEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
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

/** Every process descending from `root` now (ps over the whole table, followed by parent pid). */
function descendants(root: number): { pid: number; args: string }[] {
  const rows = execFileSync('ps', ['-e', '-o', 'pid=,ppid=,args='], { encoding: 'utf8' })
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [pid, ppid, ...args] = line.trim().split(/\s+/);
      return { pid: Number(pid), ppid: Number(ppid), args: args.join(' ') };
    });
  const found: { pid: number; args: string }[] = [];
  const queue = [root];
  while (queue.length) {
    const parent = queue.shift()!;
    for (const row of rows.filter((r) => r.ppid === parent)) {
      found.push({ pid: row.pid, args: row.args });
      queue.push(row.pid);
    }
  }
  return found;
}

describe('npm start with no library pulled, stopped by a SIGTERM to npm', () => {
  it('starts, says in /readyz how to get the library, refuses runs, and stops entirely on SIGTERM', async () => {
    const bareEnv: NodeJS.ProcessEnv = {
      ...env,
      PORT: String(await freePort()),
      TEMPORAL_PORT: String(await freePort()),
      TEMPORAL_UI_PORT: String(await freePort()),
      DRIFTLINE_DATA_DIR: mkdtempSync(join(tmpdir(), 'driftline-bare-')),
    };
    delete bareEnv.DRIFTLINE_LIBRARIES;
    delete bareEnv.DRIFTLINE_SHARED_DATA;
    // `npm start` itself, as the README's `npm start &` then `kill %1` does it.
    const npm = spawn('npm', ['start'], { cwd: ROOT, env: bareEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    npm.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    npm.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    const deadline = Date.now() + 120_000;
    while (!out.includes('driftline is started') && Date.now() < deadline && npm.exitCode === null)
      await new Promise((r) => setTimeout(r, 200));
    expect(out).toContain('driftline is started, but not ready yet');
    expect(out).toMatch(
      /not ready: +library: .*"connf" needs .*driftline-bare-.*\/data\/connf\/library\.jsonl.*npx driftline data pull connf/,
    );

    const apiUrl = `http://127.0.0.1:${bareEnv.PORT}`;
    const ready = await fetch(`${apiUrl}/readyz`);
    expect(ready.status).toBe(503);
    const report = (await ready.json()) as { checks: Record<string, { ok: boolean; detail?: string }>; missing: string[] };
    expect(report.checks.library).toMatchObject({ ok: false, detail: expect.stringContaining('DRIFTLINE_DATA_MIRROR') });
    expect(report.checks.mainWorker).toEqual({ ok: true });
    expect(report.missing.some((m) => m.startsWith('Library: none is served'))).toBe(true);
    const run = await fetch(`${apiUrl}/v1/formalizations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ statement: 'Every prime greater than 2 is odd.' }),
    });
    expect(run.status).toBe(503);
    expect(((await run.json()) as { detail: string }).detail).toMatch(/no library is served yet.*driftline data pull/);

    const started = descendants(npm.pid!);
    expect(started.some((p) => p.args.includes('server start-dev'))).toBe(true);
    expect(started.filter((p) => p.args.includes('worker --queue'))).toHaveLength(2);
    const exited = new Promise<number | null>((resolve) => npm.once('exit', (code) => resolve(code)));
    npm.kill('SIGTERM');
    await exited;
    const alive = (pid: number) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    // npm waits for the stack; tsx's esbuild helpers leave a moment later, when their pipe closes.
    const goneBy = Date.now() + 10_000;
    while (started.some((p) => alive(p.pid)) && Date.now() < goneBy) await new Promise((r) => setTimeout(r, 200));
    expect(started.filter((p) => alive(p.pid)).map((p) => p.args)).toEqual([]);
    expect(out.trimEnd().split('\n').at(-1)).toMatch(/^driftline: stopped \(SIGTERM\)/);
    expect(out).not.toContain('worker exited; restarting');
    rmSync(bareEnv.DRIFTLINE_DATA_DIR!, { recursive: true, force: true });
  }, 180_000);
});
