// The CLI asks the stack which libraries it serves, not its own shell: a real main worker process
// (`driftline worker --queue main`) records its libraries in the data directory as it starts,
// and `driftline formalize` / `sweep start` from a second terminal with only TEMPORAL_ADDRESS
// and the data directory set run on them, and refuse any other with the stack's list and the
// operator's hint (client/start-request.ts).
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Worker } from '@temporalio/worker';
import { loadConfig } from '../../infra/config';
import { servedLibrariesFile } from '../../client/stack-libraries';
import { createStack, FIXTURE_CORPUS, FIXTURE_LIBRARY, startTemporal, workflowBundleFile, type TestStack } from '../helpers/stack';
import { MINI_BENCHMARK } from '../helpers/sweep';
import { FAKE_MODELS } from '../fakes/openai-server';

const run = promisify(execFile);
const CLI = fileURLToPath(new URL('../../bin/cli.ts', import.meta.url));
const STATEMENT = 'If p is a prime number then p is at least 2.';

let env: TestWorkflowEnvironment;
let stack: TestStack;
let work: string;
/** The data directory the stack's main worker process and the second terminal share. */
let dataDir: string;
let mainWorker: ChildProcess | undefined;
let leanWorkers: Worker[] = [];
let leanRuns: Promise<void>[] = [];

/** A second terminal: PATH and HOME, Temporal's address and the data directory, nothing else
 * (no configuration file of the checkout either). */
function bareEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const keep = Object.fromEntries(['PATH', 'HOME', 'TMPDIR'].flatMap((k) => (process.env[k] ? [[k, process.env[k]!]] : [])));
  return { ...keep, TEMPORAL_ADDRESS: env.address, DRIFTLINE_DATA_DIR: dataDir, DRIFTLINE_CONFIG: join(work, 'none.json'), ...extra };
}

async function cli(environment: NodeJS.ProcessEnv, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', CLI, ...args], { env: environment });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

beforeAll(async () => {
  env = await startTemporal();
  work = mkdtempSync(join(tmpdir(), 'driftline-cli-libraries-'));
  writeFileSync(join(work, 'none.json'), '{}');
  dataDir = join(work, 'data');
  mkdirSync(dataDir);
  // The fakes and the Lean worker of the test stack; the main worker is the real process.
  stack = await createStack(env, { queue: 'default' });
  leanWorkers = await stack.createWorkers('lean');
  leanRuns = leanWorkers.map((w) => w.run());
  mainWorker = spawn(process.execPath, ['--import', 'tsx', CLI, 'worker', '--queue', 'main'], {
    env: {
      ...process.env,
      TEMPORAL_ADDRESS: env.address,
      DRIFTLINE_LIBRARIES: `${FIXTURE_LIBRARY}=${FIXTURE_CORPUS}`,
      DRIFTLINE_DATA_DIR: dataDir,
      DRIFTLINE_CONFIG: join(work, 'none.json'),
      DRIFTLINE_WORKFLOW_BUNDLE: await workflowBundleFile(work),
      OPENAI_BASE_URL: stack.llm.url,
      OPENAI_API_KEY: 'test-key',
      DRIFTLINE_MODEL_DECOMPOSER: FAKE_MODELS.decomposer,
      DRIFTLINE_MODEL_FORMALIZER: FAKE_MODELS.formalizer,
      DRIFTLINE_MODEL_JUDGE: FAKE_MODELS.judge,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const deadline = Date.now() + 120_000;
  while (!existsSync(servedLibrariesFile(dataDir))) {
    if (mainWorker.exitCode !== null) throw new Error(`the main worker exited (${mainWorker.exitCode})`);
    if (Date.now() > deadline) throw new Error('the main worker did not record its libraries');
    await new Promise((r) => setTimeout(r, 200));
  }
}, 180_000);

afterAll(async () => {
  if (mainWorker && mainWorker.exitCode === null && mainWorker.signalCode === null) {
    const exited = new Promise((resolve) => mainWorker!.once('exit', resolve));
    mainWorker.kill('SIGTERM');
    await exited;
  }
  for (const w of leanWorkers) w.shutdown();
  await Promise.all(leanRuns);
  await stack?.close();
  await env?.teardown();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('the CLI on the stack’s libraries', () => {
  it('the main worker records what it serves in the data directory', () => {
    expect(JSON.parse(readFileSync(servedLibrariesFile(dataDir), 'utf8'))).toEqual({ libraries: [FIXTURE_LIBRARY] });
    // The second terminal has no such library of its own.
    expect(loadConfig({ env: bareEnv(), skipFileChecks: true }).libraries.map((l) => l.name)).not.toContain(FIXTURE_LIBRARY);
  });

  it('formalize from a shell without DRIFTLINE_LIBRARIES runs on the stack’s library (its default)', async () => {
    const r = await cli(bareEnv(), 'formalize', STATEMENT, '--json');
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ compiled: true });
    const named = await cli(bareEnv(), 'formalize', STATEMENT, '--library', FIXTURE_LIBRARY, '--json');
    expect(named.code, named.stderr).toBe(0);
  }, 180_000);

  it('an unknown library is refused with the stack’s libraries and how to add one, whatever the shell has', async () => {
    const unknown = await cli(bareEnv(), 'formalize', STATEMENT, '--library', 'nope');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('driftline: unknown library "nope"; known: mini. To add one:');
    expect(unknown.stderr).toContain('DRIFTLINE_LIBRARIES=nope=path/to/corpus.jsonl');
    expect(unknown.stderr).toContain('npx driftline index build --library nope');
    // The shell's own DRIFTLINE_LIBRARIES does not count: the workers read the corpus, not the CLI.
    const own = await cli(bareEnv({ DRIFTLINE_LIBRARIES: `nope=${FIXTURE_CORPUS}` }), 'formalize', STATEMENT, '--library', 'nope');
    expect(own.code).toBe(1);
    expect(own.stderr).toContain('unknown library "nope"; known: mini.');
    // A sweep file on a library the stack lacks is refused the same way, before anything starts.
    const file = join(work, 'nope.yaml');
    writeFileSync(
      file,
      [`benchmark: {path: ${MINI_BENCHMARK}, format: rautoformalizer}`, 'library: nope', 'configurations:', '  drift: {}', ''].join('\n'),
    );
    const sweep = await cli(bareEnv(), 'sweep', 'start', file, '--id', 'never');
    expect(sweep.code).toBe(1);
    expect(sweep.stderr).toContain(`${file}: library: "nope" is not configured; known: mini. To add one:`);
    expect(await stack.results.getSweep('never')).toBeNull();
  }, 120_000);

  it('a data directory no main worker recorded into is named, not guessed at', async () => {
    const elsewhere = join(work, 'elsewhere');
    mkdirSync(elsewhere);
    const r = await cli(bareEnv({ DRIFTLINE_DATA_DIR: elsewhere }), 'formalize', STATEMENT);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`the stack has not said which libraries it serves: ${servedLibrariesFile(elsewhere)} is missing`);
  }, 60_000);
});
