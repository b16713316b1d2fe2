// `npm run setup:schemathesis` (or `DRIFTLINE_INSTALL_SCHEMATHESIS=1 npm run setup`, as CI does):
// installs Schemathesis, the OpenAPI fuzzer that test/integration/api-schemathesis.test.ts runs against our
// /openapi.json, from PyPI into a virtual environment in the git-ignored `.tools/schemathesis/`
// (versions pinned in infra/schemathesis-requirements.txt). Nothing is installed into the
// system's Python. A new user's `npm run setup` skips it: it is a test tool, and takes ~15 s.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(fileURLToPath(new URL('..', import.meta.url)));
const venv = join(root, '.tools', 'schemathesis');
const st = join(venv, 'bin', 'st');
const requirements = join(root, 'infra', 'schemathesis-requirements.txt');
const version = /^schemathesis==(\S+)$/m.exec(readFileSync(requirements, 'utf8'))?.[1];

function run(cmd, args) {
  const r = spawnSync(cmd, args, { stdio: 'inherit' });
  if (r.error || r.status !== 0) {
    console.error(`setup:schemathesis: \`${cmd} ${args.join(' ')}\` failed (${r.error?.message ?? `exit ${r.status}`}).`);
    process.exit(1);
  }
}

if (existsSync(st) && !process.argv.includes('--force')) {
  const installed = spawnSync(st, ['--version'], { encoding: 'utf8' }).stdout ?? '';
  if (installed.includes(`version ${version}`)) {
    console.log(`setup:schemathesis: Schemathesis ${version} already at ${venv} (--force to reinstall)`);
    process.exit(0);
  }
}
const python = ['python3', 'python'].find((p) => spawnSync(p, ['--version']).status === 0);
if (!python) {
  console.error('setup:schemathesis: needs python3 with the venv module (Debian: apt-get install python3-venv).');
  process.exit(1);
}
console.log(`setup:schemathesis: installing Schemathesis ${version} from PyPI into ${venv} …`);
rmSync(venv, { recursive: true, force: true });
run(python, ['-m', 'venv', venv]);
run(join(venv, 'bin', 'python'), ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--no-input', '-r', requirements]);
run(st, ['--version']);
