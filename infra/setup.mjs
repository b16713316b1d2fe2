// `npm run setup`: installs everything a fresh machine needs, from package registries only.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

function run(cmd, args) {
  const result = spawnSync(cmd, args, { stdio: 'inherit' });
  if (result.status !== 0) {
    console.error(`setup: \`${cmd} ${args.join(' ')}\` failed (exit ${result.status}).`);
    process.exit(result.status ?? 1);
  }
}

console.log('setup: installing npm packages (pinned by package-lock.json) …');
// npm 11 runs a dependency's install scripts only when package.json's `allowScripts` lists it
// (and says so in `npm warn install-scripts …` lines otherwise). Listed there, reviewed:
// better-sqlite3 (fetches or builds its native binding: without it there is no results
// database), esbuild and @swc/core (check their platform binaries), node-llama-cpp (the local
// GGUF model's binaries), onnxruntime-node and sharp (the local embedding model, optional);
// protobufjs is denied (its script only warns about version schemes). A dependency that gains an
// install script shows up in those lines: the line after them says what to do.
const installArgs = existsSync('package-lock.json') ? ['ci', '--no-audit', '--no-fund'] : ['install', '--no-audit', '--no-fund'];
const nodeMajor = Number(process.versions.node.split('.')[0]);
const result = spawnSync('npm', installArgs, { stdio: ['inherit', 'inherit', 'pipe'], encoding: 'utf8' });
const lines = (result.stderr ?? '').split('\n');
// Node 20 (end of life since April 2026) still runs driftline and is what CI tests on, but a few
// packages declare Node >= 22: npm's EBADENGINE blocks are replaced by one line naming them.
const wanting = new Set(nodeMajor >= 22 ? [] : lines.flatMap((l) => l.match(/EBADENGINE\s+package: '([^']+)'/)?.[1] ?? []));
process.stderr.write(
  lines
    .filter((l) => l && (nodeMajor >= 22 || !l.includes('EBADENGINE')))
    .map((l) => `${l}\n`)
    .join(''),
);
if (lines.some((l) => l.includes('install-scripts')))
  console.log(
    "setup: npm skipped the install scripts listed above: they are not in package.json's allowScripts (npm 11 runs only reviewed ones). " +
      'driftline needs none beyond those listed there; to allow one after reviewing it: npm install-scripts approve <package>.',
  );
if (result.status !== 0) {
  console.error(`setup: \`npm ${installArgs.join(' ')}\` failed (exit ${result.status}).`);
  process.exit(result.status ?? 1);
}
if (nodeMajor < 22) {
  console.log(
    `setup: Node.js ${process.version} is past its end of life; driftline runs on it (Node 20.19 or later), but Node 22 or 24 is recommended` +
      (wanting.size ? ` (${[...wanting].join(', ')} declare Node >= 22; npm's EBADENGINE warnings about them are left out).` : '.'),
  );
}
console.log('setup: building the web page (vite) …');
run('npm', ['run', '-s', 'build:web']);
console.log('setup: compiling the driftline command to JavaScript …');
run(process.execPath, ['infra/build-cli.mjs']);
// The public data (the default library's corpus, the benchmarks): from its sources at pinned
// commits, or DRIFTLINE_DATA_MIRROR. A failure is reported and setup goes on: the stack then
// starts without the library and /readyz says how to get it.
console.log(
  process.env.DRIFTLINE_DATA_MIRROR
    ? `setup: pulling the public data from the mirror ${process.env.DRIFTLINE_DATA_MIRROR} …`
    : 'setup: pulling the public data from its sources (github.com, pinned commits) …',
);
const pull = spawnSync(process.execPath, ['bin/driftline.js', 'data', 'pull'], { stdio: 'inherit' });
const dataFailed = pull.status !== 0;
if (dataFailed)
  console.error('setup: some public data could not be pulled (see above); setup goes on, and `npx driftline data pull` tries again.');
console.log('setup: checking the Temporal CLI …');
run(process.execPath, [
  '--import',
  'tsx',
  '-e',
  "const m = await import('./infra/temporal-cli.ts'); console.log('setup: Temporal CLI at ' + m.ensureTemporalCli());",
]);
if (process.env.DRIFTLINE_INSTALL_TEMPORAL_SERVER === '1') {
  // The Temporal server for `npm run cluster` and the cluster tests: built from its Go module
  // (about 5 minutes on two cores the first time; skipped when this version is built).
  console.log('setup: building the Temporal server, schema tool and UI server (DRIFTLINE_INSTALL_TEMPORAL_SERVER=1) …');
  run(process.execPath, ['--import', 'tsx', 'infra/cluster.ts', 'build']);
}
if (process.env.DRIFTLINE_INSTALL_LOCAL_MODEL === '1') {
  console.log('setup: installing the local embedding model (DRIFTLINE_INSTALL_LOCAL_MODEL=1) …');
  run(process.execPath, ['infra/setup-model.mjs']);
}
if (process.env.DRIFTLINE_INSTALL_LOCAL_LLM === '1') {
  console.log('setup: installing the local chat model (DRIFTLINE_INSTALL_LOCAL_LLM=1) …');
  run(process.execPath, ['infra/setup-llm.mjs']);
}
if (process.env.DRIFTLINE_INSTALL_SCHEMATHESIS === '1') {
  console.log('setup: installing Schemathesis for the API tests (DRIFTLINE_INSTALL_SCHEMATHESIS=1) …');
  run(process.execPath, ['infra/setup-schemathesis.mjs']);
}
console.log(
  dataFailed
    ? 'setup: done, without some public data (see above). Start the service with `npm start`; /readyz says what is missing.'
    : 'setup: done. Start the service with `npm start`.',
);
