// CI tries driftline as a newcomer: a clone of this repository in a temporary directory with
// nothing beside it (no ../shared), the README's setup command with DRIFTLINE_DATA_MIRROR set,
// `npm start`, one formalization against the fake OpenAI-compatible server, one sweep of two
// ConNF items, then a SIGTERM to npm, after which no process of the stack may be left.
//   DRIFTLINE_DATA_MIRROR=<dir or URL> node .ci/newcomer.mjs
import { execFileSync, fork, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const source = fileURLToPath(new URL('..', import.meta.url));
if (!process.env.DRIFTLINE_DATA_MIRROR) {
  console.error('newcomer: set DRIFTLINE_DATA_MIRROR (a directory or URL laid out like the data directory)');
  process.exit(1);
}
const started = Date.now();
const say = (line) => console.log(`newcomer [${Math.round((Date.now() - started) / 1000)} s]: ${line}`);
const work = mkdtempSync(join(tmpdir(), 'driftline-newcomer-'));
const repo = join(work, 'driftline');
const toClean = [];
let failed = false;

async function freePort() {
  const server = createServer();
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address();
  await new Promise((r) => server.close(r));
  return port;
}

function run(cmd, args, env) {
  say(`$ ${cmd} ${args.join(' ')}`);
  execFileSync(cmd, args, { cwd: repo, env, stdio: 'inherit' });
}

function capture(args, env) {
  return execFileSync(process.execPath, [join(repo, 'bin/driftline.js'), ...args], {
    cwd: repo,
    env,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
}

/** Every process below `root` now. */
function descendants(root) {
  const rows = execFileSync('ps', ['-e', '-o', 'pid=,ppid=,args='], { encoding: 'utf8' })
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const [pid, ppid, ...args] = l.trim().split(/\s+/);
      return { pid: Number(pid), ppid: Number(ppid), args: args.join(' ') };
    });
  const out = [];
  const queue = [root];
  while (queue.length) {
    const parent = queue.shift();
    for (const r of rows.filter((x) => x.ppid === parent)) {
      out.push(r);
      queue.push(r.pid);
    }
  }
  return out;
}

const alive = (pid) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

try {
  say(`cloning ${source} into ${repo} (nothing beside it)`);
  execFileSync('git', ['clone', '-q', source, repo], { stdio: 'inherit' });
  if (existsSync(join(work, 'shared'))) throw new Error('a ../shared folder is beside the clone');
  const env = { ...process.env };
  for (const name of [
    'DRIFTLINE_SHARED_DATA',
    'DRIFTLINE_LIBRARIES',
    'DRIFTLINE_DATA_DIR',
    'TEMPORAL_ADDRESS',
    'OPENAI_BASE_URL',
    'LEAN_REPL_CMD',
    'DRIFTLINE_CONFIG',
  ])
    delete env[name];
  // The README's setup command, as typed.
  run('npm', ['run', 'setup'], env);
  say('setup done');

  // The fake OpenAI-compatible server of the tests (a real HTTP server speaking the protocol).
  const fake = fork(join(repo, 'test/fakes/openai-server-process.ts'), [], { cwd: repo, execArgv: ['--import', 'tsx'], stdio: 'inherit' });
  toClean.push(() => fake.connected && fake.disconnect());
  const llmUrl = await new Promise((resolve, reject) => {
    fake.once('message', (m) => resolve(m.url));
    fake.once('exit', (code) => reject(new Error(`the fake LLM exited (${code})`)));
  });
  const port = await freePort();
  const stackEnv = {
    ...env,
    PORT: String(port),
    TEMPORAL_PORT: String(await freePort()),
    TEMPORAL_UI_PORT: String(await freePort()),
    OPENAI_BASE_URL: llmUrl,
    OPENAI_API_KEY: 'newcomer-key',
    DRIFTLINE_MODEL_DECOMPOSER: 'fake-decomposer',
    DRIFTLINE_MODEL_FORMALIZER: 'fake-formalizer',
    DRIFTLINE_MODEL_JUDGE: 'fake-judge',
  };
  say('$ npm start');
  const npm = spawn('npm', ['start'], { cwd: repo, env: stackEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  npm.stdout.on('data', (d) => (out += d));
  npm.stderr.on('data', (d) => (out += d));
  toClean.push(() => npm.exitCode === null && npm.kill('SIGKILL'));
  const api = `http://127.0.0.1:${port}`;
  const readyBy = Date.now() + 240_000;
  for (;;) {
    const r = await fetch(`${api}/readyz`).catch(() => undefined);
    if (r?.status === 200) break;
    if (npm.exitCode !== null) throw new Error(`npm start exited (${npm.exitCode}):\n${out}`);
    if (Date.now() > readyBy) throw new Error(`the stack did not get ready:\n${out}\n${r ? JSON.stringify(await r.json()) : ''}`);
    await new Promise((r2) => setTimeout(r2, 1000));
  }
  const libraries = await (await fetch(`${api}/v1/libraries`)).json();
  say(`ready; libraries: ${JSON.stringify(libraries.items?.map?.((l) => l.name) ?? libraries)}`);
  const cliEnv = { ...stackEnv, TEMPORAL_ADDRESS: `127.0.0.1:${stackEnv.TEMPORAL_PORT}` };

  const result = JSON.parse(capture(['formalize', '--json', 'Every prime greater than 2 is odd.'], cliEnv));
  if (!result.formalStatement) throw new Error(`the formalization has no statement: ${JSON.stringify(result)}`);
  say(`formalized: ${result.formalStatement.split('\n')[0]} (${result.outcome})`);

  const sweepFile = join(work, 'sweep.json');
  writeFileSync(
    sweepFile,
    JSON.stringify({
      // By name: the dev split from the source's full file or a mirror's dev file alike.
      benchmark: { name: 'connf', split: 'dev', limit: 2 },
      library: 'connf',
      configurations: { drift: {} },
    }),
  );
  const sweep = JSON.parse(capture(['sweep', 'start', '--json', sweepFile], cliEnv));
  const sweepBy = Date.now() + 300_000;
  let status;
  for (;;) {
    status = JSON.parse(capture(['sweep', 'status', '--json', sweep.id], cliEnv));
    if (!['running', 'paused', 'starting'].includes(status.status) || Date.now() > sweepBy) break;
    await new Promise((r) => setTimeout(r, 2000));
  }
  if (status.status !== 'completed' || status.done !== 2 || status.failed !== 0)
    throw new Error(`the sweep did not complete its 2 items: ${JSON.stringify(status)}`);
  say(`sweep ${sweep.id}: ${status.done} of ${status.total} done`);

  // Stop it as `kill %1` would: a SIGTERM to npm's process only.
  const stack = descendants(npm.pid);
  const exited = new Promise((r) => npm.once('exit', r));
  npm.kill('SIGTERM');
  const code = await Promise.race([exited, new Promise((r) => setTimeout(() => r('timeout'), 60_000))]);
  // tsx's esbuild helpers leave when their parent's pipe closes: a moment after it, not before.
  const goneBy = Date.now() + 10_000;
  while (stack.some((p) => alive(p.pid)) && Date.now() < goneBy) await new Promise((r) => setTimeout(r, 200));
  const left = stack.filter((p) => alive(p.pid));
  if (code === 'timeout' || left.length)
    throw new Error(`after SIGTERM to npm (${code}) still running:\n${left.map((p) => `${p.pid} ${p.args}`).join('\n')}`);
  const last = out.trimEnd().split('\n').at(-1);
  if (!/^driftline: stopped \(SIGTERM\)/.test(last)) throw new Error(`the last line is not the stop line: ${last}`);
  say(`stopped: ${last}`);
} catch (err) {
  failed = true;
  console.error(`newcomer: FAILED: ${err.message}`);
} finally {
  for (const clean of toClean) {
    try {
      clean();
    } catch {
      // best effort
    }
  }
  rmSync(work, { recursive: true, force: true });
}
say(failed ? 'failed' : 'passed');
process.exit(failed ? 1 : 0);
