// The public data driftline uses (the ConNF corpus and benchmarks), fetched from its sources at
// pinned commits and checked against digests kept here, into the data directory; never committed.
// `npm run setup` and `driftline data pull` both call pullData. A mirror (DRIFTLINE_DATA_MIRROR: a
// directory or an HTTP(S) base URL laid out like the data directory) serves offline installs.
import { createHash } from 'node:crypto';
import { createReadStream, existsSync } from 'node:fs';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';

export interface DataFile {
  /** Where it goes in the data directory (and where a mirror has it). */
  path: string;
  /** Its path in the source repository at the pinned commit. */
  sourcePath: string;
  sha256: string;
  /** What a mirror may hold instead (ConNF's development split in place of the full benchmark). */
  mirrorAlternative?: { path: string; sha256: string; what: string };
}

export interface DataSource {
  repo: string;
  commit: string;
  licence: string;
}

export interface DataSet {
  name: string;
  what: string;
  source: DataSource;
  files: DataFile[];
  /** The source's licence file, written beside the data. */
  licence: DataFile;
}

const RAUTOFORMALIZER: DataSource = {
  repo: 'Purewhite2019/rethinking_autoformalization',
  commit: '5ce3b814a5d0213429cc92244e5467425b22297a',
  licence: 'Apache-2.0',
};
const DEEPSEEK_PROVER: DataSource = {
  repo: 'deepseek-ai/DeepSeek-Prover-V1.5',
  commit: '2c4ba9119eef74d0d611f494261b2c5bae98c69a',
  licence: 'MIT',
};

const RAUTOFORMALIZER_LICENCE: DataFile = {
  path: 'LICENSE.rautoformalizer',
  sourcePath: 'LICENSE',
  sha256: 'c71d239df91726fc519c6eb72d318ec65820627232b2f796219e87dcf35d0ab4',
};

/** Every data set, with the digests of the files at the pinned commits. */
export const DATA_SETS: readonly DataSet[] = [
  {
    name: 'connf',
    what: 'the Con(NF) premise corpus (the default library) and its autoformalization benchmark',
    source: RAUTOFORMALIZER,
    files: [
      {
        path: 'connf/library.jsonl',
        sourcePath: 'data/connf/library.jsonl',
        sha256: '03d63981038fe2e0552022ec37295c72fcc6be5ae5bfb4a4ea4cfd32cb35c647',
      },
      {
        path: 'connf/benchmark.jsonl',
        sourcePath: 'data/connf/benchmark.jsonl',
        sha256: '87fa2c8d7cf7b11505cecb0afb3a2f9e53355c5f6c208208620ea18374302617',
        mirrorAlternative: {
          path: 'connf/benchmark.dev.jsonl',
          sha256: '7f40e0a3b327adc41178ba2087d665f339e8d73c8943bc83545277648393822a',
          what: 'the 577-item development split',
        },
      },
    ],
    licence: RAUTOFORMALIZER_LICENCE,
  },
  {
    name: 'proofnet',
    what: 'the ProofNet benchmark in Lean 4',
    source: RAUTOFORMALIZER,
    files: [
      {
        path: 'proofnet/benchmark.jsonl',
        sourcePath: 'data/proofnet/benchmark.jsonl',
        sha256: '7a42b8748eae633b110bdbe46a538d988917bc658a96048d66d4af865b2920a7',
      },
    ],
    licence: RAUTOFORMALIZER_LICENCE,
  },
  {
    // The judge calibration of `driftline eval judge`. The issue pinning the other files gave no
    // digests for these: they are those of the copies where driftline is developed, and the
    // source paths are assumed to follow the same layout under data/.
    name: 'human-equivalence',
    what: 'model-generated ProofNet statements with human labels of equivalence (for `driftline eval judge`)',
    source: RAUTOFORMALIZER,
    files: [
      {
        path: 'human_equivalence/o1-generated/autoformalization.json',
        sourcePath: 'data/human_equivalence/o1-generated/autoformalization.json',
        sha256: '63da6aa7d84ef5b27f56f7c75401992bfcd58166df443e8bf2c45c862a7afb0a',
      },
      {
        path: 'human_equivalence/o1-generated/labels.json',
        sourcePath: 'data/human_equivalence/o1-generated/labels.json',
        sha256: '5a67a1b5b91b88a7c2937642b6c7a51894ac1ecbb6141083cd75c9510a7537cf',
      },
      {
        path: 'human_equivalence/rautoformalizer-generated/autoformalization.json',
        sourcePath: 'data/human_equivalence/rautoformalizer-generated/autoformalization.json',
        sha256: 'c7ad6d7b82479a4bd32e68dd5ef2019bc4380e4a47ec33714598e20966db9a56',
      },
      {
        path: 'human_equivalence/rautoformalizer-generated/labels.json',
        sourcePath: 'data/human_equivalence/rautoformalizer-generated/labels.json',
        sha256: '90ae23528fc1bafdcf30eb7470724ece235d442c4eadc2fe144c24a7f71f829c',
      },
    ],
    licence: RAUTOFORMALIZER_LICENCE,
  },
  {
    name: 'minif2f',
    what: 'the miniF2F benchmark',
    source: DEEPSEEK_PROVER,
    files: [
      {
        path: 'minif2f/minif2f.jsonl',
        sourcePath: 'datasets/minif2f.jsonl',
        sha256: 'd6654c88476ff14db19d57dea25bd955a240525fb52171e460f89d98f83d7dd5',
      },
    ],
    licence: {
      path: 'LICENSE.deepseek-prover',
      sourcePath: 'LICENSE-CODE',
      sha256: '6e4c38e1172f42fdbff13edf9a7a017679fb82b0fde415a3e8b3c31c6ed4a4e4',
    },
  },
];

/** GitHub's raw-file host; tests point it at a local server laid out the same way. */
export const RAW_GITHUB = 'https://raw.githubusercontent.com';

export const MIRROR_HINT =
  'To install from a copy of the data, set DRIFTLINE_DATA_MIRROR to a directory or an HTTP(S) URL laid out like the data directory ' +
  '(connf/library.jsonl, connf/benchmark.jsonl or connf/benchmark.dev.jsonl, proofnet/benchmark.jsonl, minif2f/minif2f.jsonl, LICENSE.*) ' +
  'and run `npx driftline data pull` (or `npm run setup`) again.';

export interface PullOptions {
  /** The data directory to fill. */
  dir: string;
  /** Data set names; default all. */
  names?: string[];
  /** DRIFTLINE_DATA_MIRROR: a directory or an http(s)/file URL; unset: the sources. */
  mirror?: string;
  /** Base of the raw-file URLs of the sources (`<base>/<repo>/<commit>/<path>`). */
  rawBase?: string;
  /** Per file: how long a download may take. */
  timeoutMs?: number;
  log?: (line: string) => void;
  /** The data sets to choose from (tests); default DATA_SETS. */
  sets?: readonly DataSet[];
}

export interface PulledFile {
  path: string;
  status: 'downloaded' | 'present';
  from: string;
}

export interface PullResult {
  name: string;
  ok: boolean;
  files: PulledFile[];
  /** What failed, in words, with the hint on mirrors. */
  error?: string;
}

export class DataPullError extends Error {
  override name = 'DataPullError';
}

/** A mirror's kind: a local directory (a path or file: URL) or an HTTP(S) base URL. */
function mirrorBase(mirror: string): { kind: 'dir'; dir: string } | { kind: 'http'; url: string } {
  if (/^https?:\/\//i.test(mirror)) return { kind: 'http', url: mirror.endsWith('/') ? mirror : `${mirror}/` };
  if (/^file:/i.test(mirror)) return { kind: 'dir', dir: fileURLToPath(mirror) };
  return { kind: 'dir', dir: resolve(mirror) };
}

/** Where one file is fetched from: the source's raw URL, or the mirror's copy. */
function locations(set: DataSet, file: DataFile, opts: PullOptions): { from: string; sha256: string; note?: string }[] {
  if (!opts.mirror) {
    const base = (opts.rawBase ?? RAW_GITHUB).replace(/\/+$/, '');
    return [{ from: `${base}/${set.source.repo}/${set.source.commit}/${file.sourcePath}`, sha256: file.sha256 }];
  }
  const m = mirrorBase(opts.mirror);
  const at = (path: string) => (m.kind === 'http' ? new URL(path, m.url).href : join(m.dir, path));
  const out: { from: string; sha256: string; note?: string }[] = [{ from: at(file.path), sha256: file.sha256 }];
  if (file.mirrorAlternative)
    out.push({ from: at(file.mirrorAlternative.path), sha256: file.mirrorAlternative.sha256, note: file.mirrorAlternative.what });
  return out;
}

/** A fetch or read that found nothing there (tried the next location, if any). */
class NotThereError extends DataPullError {}

async function sha256Of(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

const CONNECT_ERRORS: Record<string, string> = {
  ECONNREFUSED: 'the connection was refused',
  ENOTFOUND: 'the host name does not resolve (no network?)',
  EAI_AGAIN: 'the host name does not resolve (no network?)',
  ECONNRESET: 'the connection was reset',
  ETIMEDOUT: 'the connection timed out',
  ENETUNREACH: 'the network is unreachable',
  EHOSTUNREACH: 'the host is unreachable',
};

/** The body of `from` as a stream: an HTTP(S) GET or a local file. */
async function openSource(from: string, timeoutMs: number): Promise<AsyncIterable<Uint8Array>> {
  if (!/^https?:\/\//i.test(from)) {
    if (!existsSync(from)) throw new NotThereError(`${from} does not exist`);
    return createReadStream(from);
  }
  let response: Response;
  try {
    response = await fetch(from, { signal: AbortSignal.timeout(timeoutMs), redirect: 'follow' });
  } catch (err) {
    const e = err as Error & { cause?: { code?: string; message?: string } };
    const code = e.cause?.code;
    const why =
      e.name === 'TimeoutError'
        ? `no answer within ${Math.round(timeoutMs / 1000)} s`
        : code && CONNECT_ERRORS[code]
          ? `${CONNECT_ERRORS[code]} (${code})`
          : (code ?? e.cause?.message ?? e.message);
    throw new DataPullError(`cannot download ${from}: ${why}`);
  }
  if (response.status === 404) {
    await response.body?.cancel();
    throw new NotThereError(`${from} answered 404 Not Found`);
  }
  if (!response.ok || !response.body) {
    await response.body?.cancel();
    throw new DataPullError(`cannot download ${from}: HTTP ${response.status} ${response.statusText}`);
  }
  return Readable.fromWeb(response.body as import('node:stream/web').ReadableStream<Uint8Array>);
}

/** Copies `from` to `target` through a temporary file, renamed into place only when its digest
 * is `sha256`; otherwise nothing is written. */
async function fetchChecked(from: string, target: string, sha256: string, timeoutMs: number): Promise<void> {
  await mkdir(dirname(target), { recursive: true });
  const tmp = `${target}.tmp-${process.pid}`;
  const body = await openSource(from, timeoutMs);
  const hash = createHash('sha256');
  const out = await open(tmp, 'w');
  try {
    try {
      for await (const chunk of body) {
        hash.update(chunk);
        await out.write(chunk);
      }
    } catch (err) {
      throw new DataPullError(`cannot download ${from}: ${(err as Error).message}`);
    } finally {
      await out.close();
    }
    const got = hash.digest('hex');
    if (got !== sha256)
      throw new DataPullError(`${from} does not have the expected content (sha256 ${got}, expected ${sha256}): refused, nothing written`);
    await rename(tmp, target);
  } finally {
    await rm(tmp, { force: true });
  }
}

/** Brings one file into the data directory: kept when already there with the right digest. */
async function pullFile(set: DataSet, file: DataFile, opts: PullOptions): Promise<PulledFile> {
  const tried: string[] = [];
  for (const loc of locations(set, file, opts)) {
    const path = loc.sha256 === file.sha256 ? file.path : file.mirrorAlternative!.path;
    const target = join(opts.dir, path);
    if (existsSync(target) && (await sha256Of(target)) === loc.sha256) return { path, status: 'present', from: target };
    try {
      await fetchChecked(loc.from, target, loc.sha256, opts.timeoutMs ?? 120_000);
      opts.log?.(`data: ${set.name}: ${path} from ${loc.from}${loc.note ? ` (${loc.note})` : ''}`);
      return { path, status: 'downloaded', from: loc.from };
    } catch (err) {
      if (!(err instanceof NotThereError)) throw err;
      tried.push(err.message);
    }
  }
  throw new DataPullError(tried.join('; '));
}

/** Whether `dir` holds every file of `sets` as a pull left it: each with its pinned digest, or
 * the copy a mirror may give in its place (ConNF's dev split). What reads the data directory as
 * it is (the tests) needs no network then, whichever way it was filled. */
export async function dataDirComplete(dir: string, sets: readonly DataSet[] = DATA_SETS): Promise<boolean> {
  for (const set of sets) {
    for (const file of [set.licence, ...set.files]) {
      const accepted = [{ path: file.path, sha256: file.sha256 }, ...(file.mirrorAlternative ? [file.mirrorAlternative] : [])];
      let found = false;
      for (const a of accepted) {
        const target = join(dir, a.path);
        if (existsSync(target) && (await sha256Of(target)) === a.sha256) {
          found = true;
          break;
        }
      }
      if (!found) return false;
    }
  }
  return true;
}

/** Pulls the named data sets (default all) into `opts.dir`. Never throws for a failed download:
 * each data set's result says what failed. */
export async function pullData(opts: PullOptions): Promise<PullResult[]> {
  const sets = opts.sets ?? DATA_SETS;
  const known = sets.map((d) => d.name);
  const names = opts.names?.length ? opts.names : known;
  const unknown = names.filter((n) => !known.includes(n));
  if (unknown.length) throw new DataPullError(`unknown data set ${unknown.map((n) => `"${n}"`).join(', ')}; known: ${known.join(', ')}`);
  const results: PullResult[] = [];
  for (const set of sets.filter((d) => names.includes(d.name))) {
    const files: PulledFile[] = [];
    try {
      for (const file of [set.licence, ...set.files]) files.push(await pullFile(set, file, opts));
      results.push({ name: set.name, ok: true, files });
    } catch (err) {
      const where = opts.mirror ? `the mirror ${opts.mirror}` : `github.com/${set.source.repo} at ${set.source.commit.slice(0, 12)}`;
      const hint = opts.mirror
        ? 'Check DRIFTLINE_DATA_MIRROR (a directory or an HTTP(S) URL laid out like the data directory), then run `npx driftline data pull` again.'
        : MIRROR_HINT;
      results.push({
        name: set.name,
        ok: false,
        files,
        error: `${set.name} (${set.what}) from ${where}: ${(err as Error).message}. ${hint}`,
      });
    }
  }
  return results;
}
