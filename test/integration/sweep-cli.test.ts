// The `driftline sweep` commands as a user runs them (the real CLI process), against the real
// Temporal dev server, with workers and fakes in this process: the contract outside checks use.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Worker } from '@temporalio/worker';
import { createStack, FIXTURE_CORPUS, FIXTURE_LIBRARY, startTemporal, type TestStack } from '../helpers/stack';
import { MINI_BENCHMARK, progressOf, waitFor } from '../helpers/sweep';
import { defaultBrain, FAKE_MODELS, type FakeHandler } from '../fakes/openai-server';

const run = promisify(execFile);
const CLI = fileURLToPath(new URL('../../bin/cli.ts', import.meta.url));

let env: TestWorkflowEnvironment;
let stack: TestStack;
let dir: string;

async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', CLI, ...args], {
      env: {
        ...process.env,
        TEMPORAL_ADDRESS: env.address,
        DRIFTLINE_DATA_DIR: stack.dataDir,
        DRIFTLINE_LIBRARIES: `${FIXTURE_LIBRARY}=${FIXTURE_CORPUS}`,
      },
      maxBuffer: 16 * 1024 * 1024,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

function sweepFile(name: string, content: unknown): string {
  const file = join(dir, name);
  writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
  return file;
}

// Formalizer calls take a little while, so a sweep is still running when it is paused.
const slowBrain: FakeHandler = async (req) => {
  if (req.model === FAKE_MODELS.formalizer) await new Promise((r) => setTimeout(r, 200));
  return defaultBrain(req);
};

beforeAll(async () => {
  env = await startTemporal();
  // The CLI starts sweeps on the production task queues.
  stack = await createStack(env, { queue: 'default', llm: { handler: slowBrain } });
  dir = mkdtempSync(join(tmpdir(), 'driftline-sweep-cli-'));
});

afterAll(async () => {
  await stack?.close();
  await env?.teardown();
});

describe('driftline sweep', () => {
  it('start → status → pause/resume → export, as the contract says', async () => {
    const file = sweepFile('contract.json', {
      benchmark: { path: MINI_BENCHMARK, format: 'rautoformalizer', limit: 6 },
      library: FIXTURE_LIBRARY,
      samples: 2,
      window: 2,
      configurations: { drift: {}, zero: { retrieval: 'none', illustrate: false, repairRounds: 0 } },
    });
    // `start` returns once the sweep is started: no worker runs yet.
    const started = await cli('sweep', 'start', file, '--id', 'cli-sweep');
    expect(started.code, started.stderr).toBe(0);
    expect(started.stdout).toMatch(/sweep cli-sweep started: 6 items × 2 configurations × 2 samples = 24 runs/);
    const early = JSON.parse((await cli('sweep', 'status', 'cli-sweep', '--json')).stdout);
    expect(early).toMatchObject({ status: 'running', total: 24, done: 0, failed: 0 });

    const workers: Worker[] = await stack.createWorkers();
    const running = workers.map((w) => w.run());
    try {
      // Waiting is done in process (a CLI process per poll is slow on a loaded machine).
      await waitFor('some runs', async () => (await progressOf(stack, 'cli-sweep')).done >= 2, 90_000);
      expect((await cli('sweep', 'pause', 'cli-sweep')).stdout).toMatch(/pause sent/);
      await waitFor('paused', async () => (await progressOf(stack, 'cli-sweep')).status === 'paused');
      expect(JSON.parse((await cli('sweep', 'status', 'cli-sweep', '--json')).stdout).status).toBe('paused');
      // `status` prints once and returns, also while the sweep is not over.
      const once = await cli('sweep', 'status', 'cli-sweep');
      expect(once.code, once.stderr).toBe(0);
      expect(once.stdout).toMatch(/^sweep cli-sweep: paused, \d+\/24 runs done/);
      // The rate (common/sweep-rate.ts) per second from one a second up, per minute below.
      expect(once.stdout).toMatch(/ {2}drift: \d+\/12 done, 0 failed, \d+ running, \d+\.\d\d? runs\/(s|min), ETA /);
      // `--watch` follows the sweep to its end; into a pipe it prints a line per change only.
      // It starts while the sweep is paused, so it sees the resume and the runs after it.
      const watching = cli('sweep', 'status', 'cli-sweep', '--watch');
      await new Promise((r) => setTimeout(r, 4000));
      expect((await cli('sweep', 'resume', 'cli-sweep')).code).toBe(0);
      const live = await watching;
      expect(live.code, live.stderr).toBe(0); // completed, every run done (bin/exit-codes.ts)
      expect(live.stdout).toMatch(/sweep cli-sweep: completed, 24\/24 runs done, 0 failed/);
      expect(live.stdout).toMatch(/zero: 12\/12 done, 0 failed, 0 running, \d+\.\d\d? runs\/(s|min), ETA 0:00/);
      const changes = live.stdout
        .split('\n')
        .filter((l) => /^\d{4}-\d\d-\d\dT/.test(l))
        .map((l) => l.replace(/^\S+ /, '').replace(/, [\d.]+ runs\/(s|min), ETA .*$/, ''));
      expect(changes[0]).toMatch(/: paused, /);
      expect(changes.length).toBeGreaterThan(1);
      // No line repeats the one before it (a redraw into a file would).
      changes.forEach((line, i) => expect(line, `line ${i}`).not.toBe(changes[i - 1]));
      expect(changes.length).toBeLessThanOrEqual(24 * 3 + 2);
    } finally {
      for (const w of workers) w.shutdown();
      await Promise.all(running);
    }

    const status = JSON.parse((await cli('sweep', 'status', 'cli-sweep', '--json')).stdout);
    expect(status).toMatchObject({ status: 'completed', total: 24, done: 24, failed: 0 });

    const exported = await cli('sweep', 'export', 'cli-sweep', '--format', 'jsonl');
    const rows = exported.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(rows).toHaveLength(24);
    for (const row of rows) {
      expect(Object.keys(row)).toEqual(expect.arrayContaining(['config', 'item', 'sample', 'outcome', 'compiled']));
    }
    expect(new Set(rows.map((r) => `${r.config}/${r.item}/${r.sample}`)).size).toBe(24);
    expect(rows.find((r) => r.config === 'drift' && r.item === 'Demo.prime_ge_two')).toMatchObject({ outcome: 'faithful', compiled: true });

    const csv = (await cli('sweep', 'export', 'cli-sweep', '--format', 'csv')).stdout.trimEnd().split('\r\n');
    expect(csv[0]).toMatch(/^sweepId,config,configHash,item,sample,workflowId,outcome,compiled/);
    expect(csv).toHaveLength(25);

    const out = join(dir, 'report');
    const report = await cli('sweep', 'report', 'cli-sweep', '--out', out);
    expect(report.code, report.stderr).toBe(0);
    expect(readFileSync(join(out, 'index.html'), 'utf8')).toContain('cli-sweep');

    // Starting the same ID again answers with the existing sweep.
    const again = await cli('sweep', 'start', file, '--id', 'cli-sweep');
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/sweep cli-sweep exists already \(24 runs\)/);

    const list = await cli('sweep', 'list');
    expect(list.stdout).toMatch(/cli-sweep\s+completed\s+24\/24 done, 0 failed/);
  }, 600_000);

  it('refuses a bad record before anything starts, naming the file and line', async () => {
    const bad = fileURLToPath(new URL('../fixtures/benchmarks/bad-line.jsonl', import.meta.url));
    const file = sweepFile(
      'bad.yaml',
      `benchmark:\n  path: ${bad}\n  format: rautoformalizer\nlibrary: ${FIXTURE_LIBRARY}\nconfigurations:\n  drift: {}\n`,
    );
    const r = await cli('sweep', 'start', file, '--id', 'never-started');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${bad}:3: informal_stmt:`);
    expect((await cli('sweep', 'status', 'never-started', '--json')).stderr).toMatch(/no sweep "never-started"/);
  }, 120_000);

  it('refuses a bad sweep file naming the field, and an unknown library', async () => {
    const file = sweepFile(
      'field.yaml',
      `benchmark: {path: ${MINI_BENCHMARK}, format: rautoformalizer}\nlibrary: ${FIXTURE_LIBRARY}\nconfigurations:\n  drift: {repairRounds: -1}\n`,
    );
    const r = await cli('sweep', 'start', file);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/configurations\.drift\.repairRounds: /);
    const lib = sweepFile(
      'lib.yaml',
      `benchmark: {path: ${MINI_BENCHMARK}, format: rautoformalizer}\nlibrary: nowhere\nconfigurations:\n  drift: {}\n`,
    );
    expect((await cli('sweep', 'start', lib)).stderr).toMatch(/library: "nowhere" is not configured/);
  }, 120_000);
});
