// The public-data download (infra/public-data.ts) against a local HTTP server laid out like the
// sources (raw.githubusercontent.com/<repo>/<commit>/<path>) and like a mirror: a good file, a
// digest that does not match, a 404, a refused connection, a server error, the mirror's
// development split in place of the full benchmark, and a directory mirror.
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DATA_SETS, pullData, type DataSet } from '../../infra/public-data';

const sha = (text: string) => createHash('sha256').update(text).digest('hex');

const LICENCE = 'Licence text of the test source.\n';
const CORPUS = '{"full_name": "A.b"}\n{"full_name": "A.c"}\n';
const FULL = '{"full_name": "A.c", "split": "full"}\n';
const DEV = '{"full_name": "A.c", "split": "dev"}\n';
const SOURCE = { repo: 'someone/some-data', commit: 'a'.repeat(40), licence: 'MIT' };

function testSet(overrides: Partial<DataSet> = {}): DataSet {
  return {
    name: 'lib',
    what: 'a test library',
    source: SOURCE,
    licence: { path: 'LICENSE.test', sourcePath: 'LICENSE', sha256: sha(LICENCE) },
    files: [
      { path: 'lib/library.jsonl', sourcePath: 'data/lib/library.jsonl', sha256: sha(CORPUS) },
      {
        path: 'lib/benchmark.jsonl',
        sourcePath: 'data/lib/benchmark.jsonl',
        sha256: sha(FULL),
        mirrorAlternative: { path: 'lib/benchmark.dev.jsonl', sha256: sha(DEV), what: 'the dev split' },
      },
    ],
    ...overrides,
  };
}

/** URL path → body (anything else: 404); `/boom` answers 500. */
let routes: Record<string, string> = {};
const requests: string[] = [];
let server: Server;
let base: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    requests.push(req.url ?? '');
    if (req.url?.endsWith('/boom')) {
      res.writeHead(500, { 'content-type': 'text/plain' }).end('internal error');
      return;
    }
    const body = routes[req.url ?? ''];
    if (body === undefined) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('404: Not Found');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end(body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const dirs: string[] = [];
function freshDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'driftline-data-'));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  routes = {};
  requests.length = 0;
});

/** The source laid out as GitHub's raw files: `/<repo>/<commit>/<path in the repository>`. */
function serveSource(files: Record<string, string>): void {
  for (const [path, body] of Object.entries(files)) routes[`/${SOURCE.repo}/${SOURCE.commit}/${path}`] = body;
}

/** Every file under `dir`, relative. */
function filesIn(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(dir.length + 1))
    .sort();
}

describe('pulling data from its source', () => {
  it('writes good files with the licence beside them, and takes them as present the next time', async () => {
    serveSource({ LICENSE: LICENCE, 'data/lib/library.jsonl': CORPUS, 'data/lib/benchmark.jsonl': FULL });
    const dir = freshDir();
    const [result] = await pullData({ dir, sets: [testSet()], rawBase: base });
    expect(result).toMatchObject({ name: 'lib', ok: true });
    expect(result!.files.map((f) => [f.path, f.status])).toEqual([
      ['LICENSE.test', 'downloaded'],
      ['lib/library.jsonl', 'downloaded'],
      ['lib/benchmark.jsonl', 'downloaded'],
    ]);
    expect(result!.files[1]!.from).toBe(`${base}/${SOURCE.repo}/${SOURCE.commit}/data/lib/library.jsonl`);
    expect(readFileSync(join(dir, 'lib/library.jsonl'), 'utf8')).toBe(CORPUS);
    expect(readFileSync(join(dir, 'LICENSE.test'), 'utf8')).toBe(LICENCE);
    expect(filesIn(dir)).toEqual(['LICENSE.test', 'lib/benchmark.jsonl', 'lib/library.jsonl']);

    requests.length = 0;
    const [again] = await pullData({ dir, sets: [testSet()], rawBase: base });
    expect(again!.ok).toBe(true);
    expect(again!.files.every((f) => f.status === 'present')).toBe(true);
    expect(requests).toEqual([]);
  });

  it('refuses a file whose digest does not match and writes nothing of it', async () => {
    serveSource({ LICENSE: LICENCE, 'data/lib/library.jsonl': CORPUS.replace('A.c', 'A.evil'), 'data/lib/benchmark.jsonl': FULL });
    const dir = freshDir();
    const [result] = await pullData({ dir, sets: [testSet()], rawBase: base });
    expect(result!.ok).toBe(false);
    expect(result!.error).toMatch(
      /lib \(a test library\) from github\.com\/someone\/some-data at aaaaaaaaaaaa: .*data\/lib\/library\.jsonl does not have the expected content \(sha256 [0-9a-f]{64}, expected [0-9a-f]{64}\): refused, nothing written/,
    );
    expect(result!.error).toContain('DRIFTLINE_DATA_MIRROR');
    // The licence came first and is kept; of the refused file there is no trace, not even a temp file.
    expect(filesIn(dir)).toEqual(['LICENSE.test']);
  });

  it('replaces a file on disk whose content is not the pinned one', async () => {
    serveSource({ LICENSE: LICENCE, 'data/lib/library.jsonl': CORPUS, 'data/lib/benchmark.jsonl': FULL });
    const dir = freshDir();
    mkdirSync(join(dir, 'lib'));
    writeFileSync(join(dir, 'lib/library.jsonl'), 'stale\n');
    const [result] = await pullData({ dir, sets: [testSet()], rawBase: base });
    expect(result!.files.find((f) => f.path === 'lib/library.jsonl')?.status).toBe('downloaded');
    expect(readFileSync(join(dir, 'lib/library.jsonl'), 'utf8')).toBe(CORPUS);
  });

  it('says which URL answered 404, and how to use a mirror', async () => {
    serveSource({ LICENSE: LICENCE, 'data/lib/benchmark.jsonl': FULL });
    const dir = freshDir();
    const [result] = await pullData({ dir, sets: [testSet()], rawBase: base });
    expect(result!.ok).toBe(false);
    expect(result!.error).toContain(`${base}/${SOURCE.repo}/${SOURCE.commit}/data/lib/library.jsonl answered 404 Not Found`);
    expect(result!.error).toMatch(
      /set DRIFTLINE_DATA_MIRROR to a directory or an HTTP\(S\) URL laid out like the data directory .* and run `npx driftline data pull` \(or `npm run setup`\) again/,
    );
    expect(existsSync(join(dir, 'lib/library.jsonl'))).toBe(false);
  });

  it('says the connection was refused', async () => {
    // A port that was just free: nothing listens there.
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const dir = freshDir();
    const [result] = await pullData({ dir, sets: [testSet()], rawBase: `http://127.0.0.1:${port}` });
    expect(result!.ok).toBe(false);
    expect(result!.error).toContain(
      `cannot download http://127.0.0.1:${port}/${SOURCE.repo}/${SOURCE.commit}/LICENSE: the connection was refused (ECONNREFUSED)`,
    );
    expect(result!.error).toContain('DRIFTLINE_DATA_MIRROR');
    expect(filesIn(dir)).toEqual([]);
  });

  it('names the status of a server error', async () => {
    const set = testSet({ files: [{ path: 'lib/x.jsonl', sourcePath: 'boom', sha256: sha('x') }] });
    serveSource({ LICENSE: LICENCE });
    const [result] = await pullData({ dir: freshDir(), sets: [set], rawBase: base });
    expect(result!.error).toContain(`cannot download ${base}/${SOURCE.repo}/${SOURCE.commit}/boom: HTTP 500 Internal Server Error`);
  });

  it('goes on with the other data sets after one failed, and refuses unknown names', async () => {
    serveSource({ LICENSE: LICENCE, 'data/lib/library.jsonl': CORPUS, 'data/lib/benchmark.jsonl': FULL });
    const broken = testSet({ name: 'broken', files: [{ path: 'broken/x.jsonl', sourcePath: 'data/nowhere.jsonl', sha256: sha('x') }] });
    const results = await pullData({ dir: freshDir(), sets: [broken, testSet()], rawBase: base });
    expect(results.map((r) => [r.name, r.ok])).toEqual([
      ['broken', false],
      ['lib', true],
    ]);
    await expect(pullData({ dir: freshDir(), sets: [testSet()], names: ['nope'], rawBase: base })).rejects.toThrow(
      /unknown data set "nope"; known: lib/,
    );
  });
});

describe('pulling data from a mirror', () => {
  it('takes the development split from an HTTP mirror that has no full benchmark', async () => {
    routes = { '/mirror/LICENSE.test': LICENCE, '/mirror/lib/library.jsonl': CORPUS, '/mirror/lib/benchmark.dev.jsonl': DEV };
    const dir = freshDir();
    const [result] = await pullData({ dir, sets: [testSet()], mirror: `${base}/mirror` });
    expect(result!.ok).toBe(true);
    expect(result!.files.map((f) => f.path)).toEqual(['LICENSE.test', 'lib/library.jsonl', 'lib/benchmark.dev.jsonl']);
    expect(filesIn(dir)).toEqual(['LICENSE.test', 'lib/benchmark.dev.jsonl', 'lib/library.jsonl']);
    // Nothing was asked of the sources.
    expect(requests.every((r) => r.startsWith('/mirror/'))).toBe(true);
  });

  it('checks a mirror the same way: a wrong file is refused', async () => {
    routes = { '/mirror/LICENSE.test': 'another licence\n' };
    const dir = freshDir();
    const [result] = await pullData({ dir, sets: [testSet()], mirror: `${base}/mirror/` });
    expect(result!.error).toMatch(
      /from the mirror http:\/\/127\.0\.0\.1:\d+\/mirror\/: .*LICENSE\.test does not have the expected content .*refused, nothing written\. Check DRIFTLINE_DATA_MIRROR/,
    );
    expect(filesIn(dir)).toEqual([]);
  });

  it('copies from a directory mirror, and says which files it lacks', async () => {
    const mirror = freshDir();
    mkdirSync(join(mirror, 'lib'));
    writeFileSync(join(mirror, 'LICENSE.test'), LICENCE);
    writeFileSync(join(mirror, 'lib/library.jsonl'), CORPUS);
    const dir = freshDir();
    const [missing] = await pullData({ dir, sets: [testSet()], mirror });
    expect(missing!.error).toContain(
      `${join(mirror, 'lib/benchmark.jsonl')} does not exist; ${join(mirror, 'lib/benchmark.dev.jsonl')} does not exist`,
    );
    writeFileSync(join(mirror, 'lib/benchmark.jsonl'), FULL);
    const [result] = await pullData({ dir, sets: [testSet()], mirror: `file://${mirror}` });
    expect(result!.ok).toBe(true);
    expect(readFileSync(join(dir, 'lib/benchmark.jsonl'), 'utf8')).toBe(FULL);
  });
});

describe('the pinned data sets', () => {
  it('name their sources at pinned commits, and a licence for each', () => {
    expect(DATA_SETS.map((d) => d.name)).toEqual(['connf', 'proofnet', 'human-equivalence', 'minif2f']);
    for (const set of DATA_SETS) {
      expect(set.source.commit).toMatch(/^[0-9a-f]{40}$/);
      for (const f of [set.licence, ...set.files]) expect(f.sha256).toMatch(/^[0-9a-f]{64}$/);
    }
    const connf = DATA_SETS.find((d) => d.name === 'connf')!;
    expect(connf.files.map((f) => f.path)).toEqual(['connf/library.jsonl', 'connf/benchmark.jsonl']);
    expect(connf.files[1]!.mirrorAlternative?.path).toBe('connf/benchmark.dev.jsonl');
  });
});
