// The sandbox around the REPL (engines/lean/sandbox.ts), with the real bubblewrap: what the fake
// REPL sees and can do inside it (environment, network, file system, limits), that it dies with
// its process, and that a Lean worker without it refuses to start unless LEAN_SANDBOX=off,
// which /readyz then lists. Each case has its control: the same probe outside the sandbox.
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildServer, type ReadinessReport } from '../../api/server';
import { createLeanRunner, DEFAULT_SANDBOX } from '../../engines/lean/create-runner';
import { ReplProcess } from '../../engines/lean/repl-process';
import type { LeanRunner } from '../../engines/lean/runner-contract';
import { replEnvironment, sandboxCommand, SandboxUnavailableError, type SandboxSettings } from '../../engines/lean/sandbox';
import { readinessFor } from '../../infra/api-options';
import { ConfigError, loadConfig } from '../../infra/config';
import { fakeRepl, type FakeRepl } from '../fakes/fake-repl-harness';
import type { FakeReplScript } from '../fakes/fake-repl-rules';
import { FIXTURE_CORPUS, FIXTURE_LIBRARY, startTemporal } from '../helpers/stack';

const CLI = fileURLToPath(new URL('../../bin/cli.ts', import.meta.url));
const ROOT = process.getuid?.() === 0;
// Secrets in the worker's environment that the REPL must never see.
const SECRETS = {
  OPENAI_API_KEY: 'sk-sandbox-test',
  DRIFTLINE_API_KEYS: `ops:${'ab'.repeat(32)}`,
  LAKE_CACHE_KEY: 'lake-secret',
  MY_SERVICE_TOKEN: 't0ken',
};

const fakes: FakeRepl[] = [];
const runners: LeanRunner[] = [];
const dirs: string[] = [];
const saved: Record<string, string | undefined> = {};

beforeAll(() => {
  for (const [k, v] of Object.entries(SECRETS)) {
    saved[k] = process.env[k];
    process.env[k] = v;
  }
});
afterAll(() => {
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});
afterEach(async () => {
  await Promise.all(runners.splice(0).map((r) => r.close()));
  for (const f of fakes.splice(0)) f.cleanup();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'lean-sandbox-'));
  chmodSync(dir, 0o777); // so that only the sandbox, not the uid, can stop a write
  dirs.push(dir);
  return dir;
}

/** Starts one REPL under `sandbox` (the fake's binds added) and returns its start-up probes. */
async function probesUnder(script: FakeReplScript, sandbox: SandboxSettings) {
  const fake = fakeRepl(script);
  fakes.push(fake);
  const runner = createLeanRunner({
    replCmd: fake.command,
    header: 'import Mathlib',
    timeoutMs: 10_000,
    // The fake's binds, not its address-space allowance: these tests check the defaults.
    sandbox: {
      ...sandbox,
      readOnly: [...(fake.sandbox.readOnly ?? []), ...(sandbox.readOnly ?? [])],
      writable: [...(fake.sandbox.writable ?? []), ...(sandbox.writable ?? [])],
    },
  });
  runners.push(runner);
  await runner.warm!(); // the header import: the fake has logged its probes before answering it
  const detail = (event: string) =>
    fake
      .probes()
      .filter((e) => e.event === event)
      .map((e) => e.detail);
  return { fake, runner, detail, envNames: (detail('env')[0] ?? '').replace('names=', '').split(',') };
}

const SANDBOXED: SandboxSettings = { ...DEFAULT_SANDBOX };
// Node (tsx) needs about 32 GB of address space: the controls leave it more.
const UNSANDBOXED: SandboxSettings = { mode: 'off', noNetwork: false, maxAddressSpaceMb: 65_536 };

describe('the REPL environment', () => {
  it('in the sandbox holds no secret of the worker, only what Lean needs', async () => {
    const { envNames, detail } = await probesUnder({}, SANDBOXED);
    expect(detail('limits')[0]).toMatch(/sandboxed=true/);
    for (const name of Object.keys(SECRETS)) expect(envNames).not.toContain(name);
    expect(envNames).toEqual(expect.arrayContaining(['PATH', 'HOME']));
    // PWD (and SHLVL): set by the shell that starts the REPL, not handed on.
    expect(
      envNames.filter((n) => !/^(PWD|OLDPWD|SHLVL|PATH|HOME|TMPDIR|LANG|LANGUAGE|TZ|LC_\w+|LEAN_\w+|ELAN_\w+|LAKE\w*)$/.test(n)),
    ).toEqual([]);
  });

  it('outside the sandbox is the same cleaned one: ReplProcess never hands on process.env', async () => {
    const { envNames, detail } = await probesUnder({}, UNSANDBOXED);
    expect(detail('limits')[0]).toMatch(/sandboxed=false/);
    for (const name of Object.keys(SECRETS)) expect(envNames).not.toContain(name);
    expect(envNames).toContain('PATH');
  });

  it('passes a variable the operator names, and refuses to name a secret-looking one', async () => {
    process.env.LEAN_SANDBOX_TEST_EXTRA = 'yes';
    try {
      const { envNames } = await probesUnder({}, { ...SANDBOXED, passEnv: ['LEAN_SANDBOX_TEST_EXTRA', 'OPENAI_API_KEY'] });
      expect(envNames).toContain('LEAN_SANDBOX_TEST_EXTRA');
      expect(envNames).not.toContain('OPENAI_API_KEY'); // refused even when named in code
    } finally {
      delete process.env.LEAN_SANDBOX_TEST_EXTRA;
    }
    const base = { DRIFTLINE_LIBRARIES: `${FIXTURE_LIBRARY}=${FIXTURE_CORPUS}` };
    expect(() => loadConfig({ env: { ...base, LEAN_SANDBOX_ENV: 'MY_TOKEN' }, root: tempDir() })).toThrow(ConfigError);
    expect(() => loadConfig({ env: { ...base, LEAN_SANDBOX_ENV: 'OPENAI_BASE_URL' }, root: tempDir() })).toThrow(/LEAN_SANDBOX_ENV/);
    expect(loadConfig({ env: { ...base, LEAN_SANDBOX_ENV: 'LEAN_NUM_THREADS,MY_FLAG' }, root: tempDir() }).lean.sandboxEnv).toEqual([
      'LEAN_NUM_THREADS',
      'MY_FLAG',
    ]);
    expect(
      Object.keys(replEnvironment({ PATH: '/usr/bin', OPENAI_API_KEY: 'x', LAKE_CACHE_KEY: 'y', LAKE_HOME: '/l', HOME: '/nonexistent' })),
    ).toEqual(['PATH', 'LAKE_HOME']);
  });
});

describe('the REPL network', () => {
  let server: Server;
  let port: number;
  let accepted = 0;
  beforeAll(async () => {
    server = createServer((socket) => {
      accepted++;
      socket.end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('in the sandbox cannot reach a loopback server of the host; outside it can (the control)', async () => {
    const outside = await probesUnder({ probeConnectPort: port }, UNSANDBOXED);
    expect(outside.detail('connect')).toEqual([`port=${port} result=connected`]);
    const acceptedOutside = accepted;
    expect(acceptedOutside).toBeGreaterThan(0);

    const inside = await probesUnder({ probeConnectPort: port }, SANDBOXED);
    const [result] = inside.detail('connect');
    expect(result).toMatch(new RegExp(`^port=${port} result=`));
    expect(result).not.toMatch(/connected$/);
    expect(accepted).toBe(acceptedOutside);
  });

  it('shares the network only when LEAN_NO_NETWORK=false says so', async () => {
    const shared = await probesUnder({ probeConnectPort: port }, { ...SANDBOXED, noNetwork: false });
    expect(shared.detail('connect')).toEqual([`port=${port} result=connected`]);
  });
});

describe('the REPL file system', () => {
  it('in the sandbox writes only its scratch and the binds it is given; outside it writes anywhere (the control)', async () => {
    const readOnlyDir = tempDir(); // bound read-only
    const unboundDir = tempDir(); // not bound at all
    const writableDir = tempDir(); // bound writable
    const probeWrite = [join(readOnlyDir, 'a'), join(unboundDir, 'b'), join(writableDir, 'c'), '/tmp/scratch-file', '/usr/sandbox-probe'];
    const inside = await probesUnder({ probeWrite }, { ...SANDBOXED, readOnly: [readOnlyDir], writable: [writableDir] });
    expect(inside.detail('write')).toEqual([
      `path=${probeWrite[0]} result=EROFS`,
      `path=${probeWrite[1]} result=ENOENT`,
      `path=${probeWrite[2]} result=ok`,
      `path=/tmp/scratch-file result=ok`,
      `path=/usr/sandbox-probe result=${ROOT ? 'EROFS' : 'EACCES'}`,
    ]);
    expect(existsSync(probeWrite[0]!)).toBe(false);
    expect(existsSync(probeWrite[1]!)).toBe(false);
    expect(existsSync(probeWrite[2]!)).toBe(true);
    expect(existsSync('/tmp/scratch-file')).toBe(false); // /tmp inside is its own tmpfs

    const outside = await probesUnder({ probeWrite: probeWrite.slice(0, 2) }, UNSANDBOXED);
    expect(outside.detail('write')).toEqual([`path=${probeWrite[0]} result=ok`, `path=${probeWrite[1]} result=ok`]);
    expect(existsSync(probeWrite[0]!)).toBe(true);
  });

  it('does not show the data directory, even inside a bound directory', async () => {
    const project = tempDir();
    mkdirSync(join(project, 'data'));
    writeFileSync(join(project, 'data', 'results.sqlite'), 'secret rows');
    writeFileSync(join(project, 'lakefile.toml'), 'name = "p"');
    const probeRead = [join(project, 'lakefile.toml'), join(project, 'data', 'results.sqlite'), '/root/.bash_history', '/work'];
    const hidden = await probesUnder({ probeRead }, { ...SANDBOXED, cwd: project, hidden: [join(project, 'data')] });
    expect(hidden.detail('read').slice(0, 2)).toEqual([`path=${probeRead[0]} result=ok`, `path=${probeRead[1]} result=ENOENT`]);
    expect(hidden.detail('read')[2]).toMatch(/result=(ENOENT|EACCES)$/); // not bound
    // The control: the same bind without `hidden` shows the file.
    const shown = await probesUnder({ probeRead: probeRead.slice(0, 2) }, { ...SANDBOXED, cwd: project });
    expect(shown.detail('read')).toEqual([`path=${probeRead[0]} result=ok`, `path=${probeRead[1]} result=ok`]);
  });
});

describe('the REPL limits', () => {
  it('runs with RLIMIT_AS and RLIMIT_NPROC set, no capabilities, and (under a root worker) as uid 65534', async () => {
    const { detail } = await probesUnder({}, SANDBOXED);
    const limits = detail('limits')[0]!;
    expect(limits).toContain(`as=${32_768 * 1024 * 1024}`);
    expect(limits).toContain('nproc=2048');
    expect(limits).toContain('capeff=0000000000000000');
    expect(limits).toContain(`uid=${ROOT ? 65534 : process.getuid!()}`);
    const other = await probesUnder({}, { ...SANDBOXED, maxAddressSpaceMb: 40_000, maxProcesses: 300, uid: 65533, gid: 65533 });
    expect(other.detail('limits')[0]).toMatch(new RegExp(`as=${40_000 * 1024 * 1024} nproc=300 uid=${ROOT ? 65533 : process.getuid!()} `));
  });

  // The limits hold, not only show: a shell in the sandbox that forks or allocates too much.
  const inSandbox = (command: string, settings: SandboxSettings) => {
    const plan = sandboxCommand(command, { ...SANDBOXED, ...settings });
    return spawnSync('sh', ['-c', plan.command], { encoding: 'utf8', env: plan.env, timeout: 30_000 });
  };

  it('stops a fork bomb at the process limit (the control: without the limit the same forks succeed)', () => {
    const forks = 'for i in $(seq 1 40); do sleep 1 & done; wait; echo forked';
    // RLIMIT_NPROC counts the uid's processes machine-wide: a uid no other sandbox here uses.
    const own = 60_000 + (process.pid % 5000);
    const limited = inSandbox(forks, { maxProcesses: 20, uid: own, gid: own });
    expect(limited.stdout).not.toContain('forked');
    expect(limited.stderr).toMatch(/fork/i);
    expect(inSandbox(forks, { maxProcesses: 0 }).stdout).toContain('forked');
  });

  it('stops an allocation past the address-space limit (the control: without the limit it succeeds)', () => {
    const allocate = 'x=$(head -c 200000000 /dev/zero | tr "\\0" a); echo ${#x}';
    const limited = inSandbox(allocate, { maxAddressSpaceMb: 100 });
    expect(limited.stdout.trim()).not.toBe('200000000');
    expect(limited.status).not.toBe(0);
    expect(inSandbox(allocate, { maxAddressSpaceMb: 0 }).stdout.trim()).toBe('200000000');
  });
});

/** Host pids of every process whose command line mentions `marker` (the fake's own directory). */
function processesWith(marker: string): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(marker)) out.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

async function until(what: () => boolean, ms: number): Promise<boolean> {
  const by = Date.now() + ms;
  while (!what()) {
    if (Date.now() > by) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
  return true;
}

describe('the sandboxed REPL process', () => {
  async function hungRepl() {
    const fake = fakeRepl({});
    fakes.push(fake);
    const plan = sandboxCommand(fake.command, { ...SANDBOXED, ...fake.sandbox });
    const proc = new ReplProcess({ command: plan.command, env: plan.env });
    const pending = proc.request({ cmd: 'HANG_REPL' }, { timeoutMs: 60_000 }).catch((e: Error) => e);
    expect(await until(() => fake.count('hang') === 1, 20_000)).toBe(true);
    const dir = fake.logFile.slice(0, fake.logFile.lastIndexOf('/'));
    const inside = processesWith(dir);
    // bwrap (outer and the namespace's init) and node: more than the one process spawned.
    expect(inside.length).toBeGreaterThan(1);
    expect(readlinkSync(`/proc/${inside.at(-1)}/exe`)).toMatch(/node$/);
    return { proc, pending, dir };
  }

  it('dies with its process group when ReplProcess kills it', async () => {
    const { proc, pending, dir } = await hungRepl();
    proc.kill();
    await proc.exitedPromise();
    expect(await pending).toBeInstanceOf(Error);
    expect(await until(() => processesWith(dir).length === 0, 5000)).toBe(true);
  });

  it('dies when only its outer process is killed (bwrap --die-with-parent, pid namespace)', async () => {
    const { proc, dir } = await hungRepl();
    process.kill(proc.pid!, 'SIGKILL'); // the outer process alone, not the group
    await proc.exitedPromise();
    expect(await until(() => processesWith(dir).length === 0, 5000)).toBe(true);
  });
});

describe('a Lean worker without the sandbox', () => {
  let env: TestWorkflowEnvironment;
  beforeAll(async () => {
    env = await startTemporal();
  }, 120_000);
  afterAll(async () => {
    await env?.teardown();
  });

  it('refuses to create the runner when bwrap is missing, and creates it with mode off', async () => {
    const fake = fakeRepl({});
    fakes.push(fake);
    expect(() =>
      createLeanRunner({
        replCmd: fake.command,
        header: 'import Mathlib',
        timeoutMs: 1000,
        sandbox: { ...fake.sandbox, bwrap: '/nonexistent/bwrap' },
      }),
    ).toThrow(SandboxUnavailableError);
    // A bind bwrap cannot make fails the probe too, before any check.
    expect(() =>
      createLeanRunner({
        replCmd: fake.command,
        header: 'import Mathlib',
        timeoutMs: 1000,
        sandbox: { ...fake.sandbox, readOnly: ['/nonexistent-dir'] },
      }),
    ).toThrow(/sandbox cannot be set up/);
    const off = createLeanRunner({
      replCmd: fake.command,
      header: 'import Mathlib',
      timeoutMs: 10_000,
      sandbox: { ...fake.sandbox, mode: 'off', bwrap: '/nonexistent/bwrap' },
    });
    runners.push(off);
    await off.warm!();
    expect(fake.count('header')).toBe(1);
  });

  function workerEnv(fake: FakeRepl, extra: Record<string, string>): NodeJS.ProcessEnv {
    const configFile = join(tempDir(), 'none.json'); // no config file of the checkout
    writeFileSync(configFile, '{}');
    return {
      ...process.env,
      TEMPORAL_ADDRESS: env.address,
      DRIFTLINE_LIBRARIES: `${FIXTURE_LIBRARY}=${FIXTURE_CORPUS}`,
      DRIFTLINE_DATA_DIR: tempDir(),
      DRIFTLINE_CONFIG: configFile,
      LEAN_REPL_CMD: fake.command,
      LEAN_POOL_SIZE: '1',
      ...fake.sandboxEnv,
      ...extra,
    };
  }

  it('refuses to start, saying why; starts with LEAN_SANDBOX=off, and /readyz warns of it', async () => {
    const fake = fakeRepl({});
    fakes.push(fake);
    const refused = spawnSync(process.execPath, ['--import', 'tsx', CLI, 'worker', '--queue', 'lean'], {
      env: workerEnv(fake, { LEAN_SANDBOX_BWRAP: '/nonexistent/bwrap' }),
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(/sandbox cannot be set up/);
    expect(refused.stderr).toMatch(/LEAN_SANDBOX=off/);
    expect(fake.count('start')).toBe(0);

    const workerEnvironment = workerEnv(fake, { LEAN_SANDBOX_BWRAP: '/nonexistent/bwrap', LEAN_SANDBOX: 'off' });
    const child = spawn(process.execPath, ['--import', 'tsx', CLI, 'worker', '--queue', 'lean'], {
      env: workerEnvironment,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    try {
      const config = loadConfig({ env: workerEnvironment });
      const api = await buildServer({
        temporal: env.client,
        libraries: [FIXTURE_LIBRARY],
        defaultLibrary: FIXTURE_LIBRARY,
        maxStatementChars: 20_000,
        pressure: { maxEventLoopDelayMs: 0 },
        readiness: readinessFor(config, env.client, { unbuiltIndexes: () => [] }),
      });
      try {
        const readyz = async () => (await api.inject({ url: '/readyz' })).json() as ReadinessReport;
        // The worker polls the Lean queue (the REPL warms up, unsandboxed).
        const started = await until(() => fake.count('header') === 1, 60_000);
        expect(started, stderr).toBe(true);
        let report = await readyz();
        for (let i = 0; i < 100 && !report.checks.leanWorker?.ok; i++) {
          await new Promise((r) => setTimeout(r, 200));
          report = await readyz();
        }
        expect(report.checks.leanWorker).toEqual({ ok: true });
        expect(report.warnings).toEqual([expect.stringMatching(/^LEAN_SANDBOX=off: the Lean REPL runs without the bubblewrap sandbox/)]);
        expect(fake.probes().find((e) => e.event === 'limits')?.detail).toMatch(/sandboxed=false/);
      } finally {
        await api.close();
      }
      // With the sandbox on (the default), the same configuration has nothing to warn of.
      const on = loadConfig({ env: { ...workerEnvironment, LEAN_SANDBOX: '' } });
      expect(await readinessFor(on, env.client, { unbuiltIndexes: () => [] })()).not.toHaveProperty('warnings');
    } finally {
      child.kill('SIGKILL');
    }
  }, 120_000);
});

describe('the fake REPL as a tripwire', () => {
  it('leaves a marker for every command carrying a word driftline never sends, and none for what it sends', async () => {
    const fake = fakeRepl({});
    fakes.push(fake);
    const proc = new ReplProcess({ command: fake.command });
    try {
      const send = (cmd: string) => proc.request({ cmd }, { timeoutMs: 10_000 });
      const header = await send('import Mathlib');
      const env = (header as { env?: number }).env;
      // What driftline sends: a header, a theorem, name look-ups.
      for (const cmd of [
        'theorem t (n : ℕ) : n + 0 = n := by sorry',
        '#check Nat.Prime',
        '#print axioms t',
        'example : #[1].size = 1 := by sorry',
        // Definitions, and command words inside a string or comment, which Lean does not run.
        'def f := 1\ntheorem t (s : String := "#eval run_cmd") : True := by sorry -- #exit',
      ]) {
        await proc.request({ cmd, env }, { timeoutMs: 10_000 });
      }
      expect(fake.leaks()).toEqual([]);
      const hostile = [
        '#eval IO.getEnv "OPENAI_API_KEY"',
        'open Nat #eval! 1',
        'theorem t : True#exit := by sorry',
        '#check_failure x',
        'run_cmd pure ()',
        'unsafe def f := 1',
        // A broken char literal: Lean resumes after it, inside what looks like a string.
        'theorem t : \'"X#eval IO.println 1 --" = 1 := by sorry',
        // A number Lean cannot finish: it resumes after `2e`, at `initialize`.
        'theorem t : 2einitialize = 1 := by sorry',
        'example : True := by native_decide',
        'theorem t : (eval% 1) = 1 := by sorry',
        '#leansearch "x"',
      ];
      for (const cmd of hostile) await proc.request({ cmd, env }, { timeoutMs: 10_000 });
      const leaks = fake.leaks();
      expect(leaks).toHaveLength(hostile.length);
      expect(leaks.map((l) => l.split('\n')[0])).toEqual([
        '#eval',
        '#eval!',
        '#exit',
        '#check_failure',
        'run_cmd',
        'unsafe',
        '#eval',
        'initialize',
        'native_decide',
        'eval%',
        '#leansearch',
      ]);
      expect(fake.count('leak')).toBe(hostile.length);
    } finally {
      await proc.close();
    }
  });
});
