// A user's first day with data from the real source, not a mirror: `npm run setup`'s pull
// (infra/public-data.ts) from a local HTTP server laid out like raw.githubusercontent.com, which
// writes the full ConNF benchmark (connf/benchmark.jsonl) and no dev file; then the README's
// sweep example (`driftline sweep start sweeps/connf-drift-ablation.yaml`, the real CLI process,
// against the Temporal dev server) and the tests' own access to the data, with no mirror
// variable set. The same command from a data directory a mirror filled with the dev file alone
// prepares the same items.
//
// The one liberty: the full benchmark served is the dev items among others (the real 961-item
// file is not kept here), so its pinned digest is replaced by this file's, and only that one.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadBenchmarks } from '../../engines/benchmarks/load';
import { readSweepFile } from '../../engines/sweeps/sweep-file';
import { DATA_SETS, type DataSet } from '../../infra/public-data';
import { benchmarkRecords, publicData } from '../helpers/public-data';
import { pullPublicData } from '../helpers/public-data-setup';
import { startTemporal } from '../helpers/stack';
import { recordServedLibraries } from '../../client/stack-libraries';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CLI = join(ROOT, 'bin/driftline.js');
const ABLATION = join(ROOT, 'sweeps/connf-drift-ablation.yaml');
const sha = (body: Buffer | string) => createHash('sha256').update(body).digest('hex');

let env: TestWorkflowEnvironment;
let server: Server;
let rawBase: string;
let sets: DataSet[];
const requests: string[] = [];
const dirs: string[] = [];

/** The full ConNF benchmark as the source has it: the dev items among others, in another order. */
function fullConnf(): string {
  const dev = benchmarkRecords('connf', 'dev');
  const out: Record<string, unknown>[] = [];
  [...dev].reverse().forEach((r, i) => {
    out.push(r);
    if (i % 3 === 0) out.push({ ...r, full_name: `ConNF.not_in_dev_${i}` });
  });
  return out.map((r) => JSON.stringify(r)).join('\n') + '\n';
}

beforeAll(async () => {
  // The source, laid out as GitHub's raw files: /<repo>/<commit>/<path in the repository>.
  const data = publicData();
  const routes = new Map<string, Buffer>();
  const connfFull = join(data, 'connf/benchmark.jsonl');
  const full = existsSync(connfFull) ? readFileSync(connfFull) : Buffer.from(fullConnf());
  sets = DATA_SETS.map((set) => ({
    ...set,
    files: set.files.map((f) => (f.path === 'connf/benchmark.jsonl' ? { ...f, sha256: sha(full) } : f)),
  }));
  for (const set of sets) {
    for (const f of [set.licence, ...set.files]) {
      const body = f.path === 'connf/benchmark.jsonl' ? full : readFileSync(join(data, f.path));
      routes.set(`/${set.source.repo}/${set.source.commit}/${f.sourcePath}`, body);
    }
  }
  server = createServer((req, res) => {
    requests.push(req.url ?? '');
    const body = routes.get(req.url ?? '');
    if (!body) res.writeHead(404).end('404: Not Found');
    else res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end(body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  rawBase = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  env = await startTemporal();
}, 120_000);

afterAll(async () => {
  await new Promise<void>((r) => server?.close(() => r()));
  await env?.teardown();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A user's environment: their data directory, and no mirror, no data override, no libraries. */
function userEnv(dataDir: string): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = { ...process.env, DRIFTLINE_DATA_DIR: dataDir, TEMPORAL_ADDRESS: env.address };
  for (const name of ['DRIFTLINE_DATA_MIRROR', 'DRIFTLINE_SHARED_DATA', 'DRIFTLINE_LIBRARIES', 'DRIFTLINE_CONFIG', 'DRIFTLINE_RESULTS_URL'])
    delete out[name];
  return out;
}

async function sweepStart(dataDir: string, id: string) {
  // The user's stack is running (`npm start`): its main worker has recorded the libraries it
  // serves in the data directory, where the CLI reads them (client/stack-libraries.ts).
  recordServedLibraries(dataDir, ['connf']);
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, 'sweep', 'start', ABLATION, '--id', id], {
      env: userEnv(dataDir),
      cwd: ROOT,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('data pulled from the source', () => {
  it("runs the README's sweep example and the tests' data access, with no mirror variable set", async () => {
    const root = mkdtempSync(join(tmpdir(), 'driftline-first-day-'));
    dirs.push(root);
    // `npm run setup`: no mirror, the sources.
    const pulled = await pullPublicData({ env: userEnv(root), rawBase, sets });
    expect(pulled).toEqual({ dir: join(root, 'data') });
    expect(existsSync(join(root, 'data/connf/benchmark.jsonl'))).toBe(true);
    expect(existsSync(join(root, 'data/connf/benchmark.dev.jsonl'))).toBe(false);
    expect(requests.some((r) => r.endsWith('/data/connf/benchmark.jsonl'))).toBe(true);

    // The tests' data access (test/global-setup.ts) on that machine: what setup pulled, nothing fetched again.
    requests.length = 0;
    expect(await pullPublicData({ env: userEnv(root), rawBase, sets })).toEqual({ dir: join(root, 'data') });
    expect(requests).toEqual([]);

    // The README's example, as a user runs it.
    const started = await sweepStart(root, 'first-day-source');
    expect(started.stderr).toBe('');
    expect(started.code).toBe(0);
    expect(started.stdout).toMatch(/^sweep first-day-source started: 100 items × 7 configurations × 1 samples = 700 runs$/m);
    await env.client.workflow.getHandle('first-day-source').terminate('test: started is what it shows');

    // The same file from a data directory a mirror filled with the dev split alone: the same items.
    const mirrored = mkdtempSync(join(tmpdir(), 'driftline-first-day-mirror-'));
    dirs.push(mirrored);
    const devOnly = mkdtempSync(join(tmpdir(), 'driftline-dev-mirror-'));
    dirs.push(devOnly);
    // The mirror: every file of the data directory, the dev split in place of the full benchmark.
    const data = publicData();
    const devFile = join(data, 'connf/benchmark.dev.jsonl');
    const dev = existsSync(devFile)
      ? readFileSync(devFile)
      : Buffer.from(
          benchmarkRecords('connf', 'dev')
            .map((r) => JSON.stringify(r))
            .join('\n') + '\n',
        );
    const mirrorSets = sets.map((set) => ({
      ...set,
      files: set.files.map((f) => (f.mirrorAlternative ? { ...f, mirrorAlternative: { ...f.mirrorAlternative, sha256: sha(dev) } } : f)),
    }));
    for (const set of mirrorSets)
      for (const f of [set.licence, ...set.files]) {
        const path = f.mirrorAlternative?.path ?? f.path;
        mkdirSync(join(devOnly, path, '..'), { recursive: true });
        if (f.mirrorAlternative) writeFileSync(join(devOnly, path), dev);
        else copyFileSync(join(data, f.path), join(devOnly, path));
      }
    const fromMirror = await pullPublicData({ env: { ...userEnv(mirrored), DRIFTLINE_DATA_MIRROR: devOnly }, sets: mirrorSets });
    if ('error' in fromMirror) throw new Error(fromMirror.error);
    expect(existsSync(join(mirrored, 'data/connf/benchmark.jsonl'))).toBe(false);
    // Later, the tests without the mirror variable: what setup left is read as it is, nothing fetched.
    requests.length = 0;
    expect(await pullPublicData({ env: userEnv(mirrored), rawBase, sets: mirrorSets })).toEqual({ dir: join(mirrored, 'data') });
    expect(requests).toEqual([]);
    const again = await sweepStart(mirrored, 'first-day-mirror');
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/^sweep first-day-mirror started: 100 items × 7 configurations × 1 samples = 700 runs$/m);
    await env.client.workflow.getHandle('first-day-mirror').terminate('test: started is what it shows');
    const items = async (dataDir: string) => loadBenchmarks((await readSweepFile(ABLATION, { dataDir })).benchmarks);
    expect(await items(join(root, 'data'))).toEqual(await items(join(mirrored, 'data')));
  }, 180_000);
});
