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
run('npm', existsSync('package-lock.json') ? ['ci', '--no-audit', '--no-fund'] : ['install', '--no-audit', '--no-fund']);
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
if (dataFailed) console.error('setup: some public data could not be pulled (see above); setup goes on, and `npx driftline data pull` tries again.');
console.log('setup: checking the Temporal CLI …');
run(process.execPath, ['--import', 'tsx', '-e', "const m = await import('./infra/temporal-cli.ts'); console.log('setup: Temporal CLI at ' + m.ensureTemporalCli());"]);
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
