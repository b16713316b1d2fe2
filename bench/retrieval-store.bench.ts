// Index store benchmark: search latency (p50/p95, top-1 and top-10) of the embedded store
// against an exact brute-force scan over the same points in the same run, and build throughput,
// on synthetic corpora of 10k, 100k and 300k declarations. Hybrid search (dense + BM25F sparse,
// RRF) with a deterministic 64-dimension hashing embedder, so the figures measure the store,
// not a model. `--json` prints one JSON object; `--sizes 10000,100000` picks sizes.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Declaration } from '../engines/retrieval/corpus';
import { ANN_MIN_POINTS, EmbeddedStore } from '../engines/retrieval/stores/embedded';
import { idf } from '../engines/retrieval/bm25';
import { corpusStats, sparseDocument, sparseQuery, type SparseVector } from '../engines/retrieval/stores/sparse';
import { denseDocumentText } from '../engines/retrieval/embedder';
import { prefetchLimit, reciprocalRankFusion } from '../engines/retrieval/fusion';
import { roleOf, STORE_SCHEMA_VERSION, type StorePoint, type VersionInfo } from '../engines/retrieval/stores/store';
import { HashEmbedder } from '../test/helpers/hash-embedder';

const args = process.argv.slice(2);
const json = args.includes('--json');
const sizesArg = args.find((a) => a.startsWith('--sizes='))?.slice('--sizes='.length);
const SIZES = sizesArg ? sizesArg.split(',').map(Number) : [10_000, 100_000, 300_000];
const queriesArg = args.find((a) => a.startsWith('--queries='))?.slice('--queries='.length);
// Fewer queries on the largest corpus keep the whole run near three minutes on two cores.
const queriesFor = (n: number) => (queriesArg ? Number(queriesArg) : n > 100_000 ? 30 : 60);
const BATCH = 2000;
const log = (s: string) => process.stderr.write(`${s}\n`);

// A deterministic pseudo-random generator, so every run measures the same corpus.
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s ^ (s >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0;
    s ^= s + Math.imul(s ^ (s >>> 7), 61 | s);
    return ((s ^ (s >>> 14)) >>> 0) / 4294967296;
  };
}
const WORDS = (
  'prime order group ring field module ideal subgroup normal quotient kernel image hom iso ' +
  'finite infinite card sum prod limit continuous measure integral derivative series sequence ' +
  'topology open closed compact connected metric norm inner vector basis dimension linear map ' +
  'matrix det trace eigen polynomial root degree monic irreducible galois extension algebra ' +
  'lattice order bot top sup inf filter ultrafilter cardinal ordinal set litter tangle cloud ' +
  'near support action permutation orbit stabilizer coset index sylow nilpotent solvable'
).split(' ');
const NS = ['Nat', 'Int', 'Real', 'Finset', 'Set', 'Group', 'Ring', 'Field', 'Module', 'ConNF', 'MeasureTheory', 'Topology'];
const cap = (w: string) => w[0]!.toUpperCase() + w.slice(1);

function synthetic(n: number): Declaration[] {
  const r = rng(42);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)]!;
  const out: Declaration[] = [];
  for (let i = 0; i < n; i++) {
    const theorem = r() < 0.6;
    const words = [pick(WORDS), pick(WORDS), pick(WORDS)];
    const name = theorem ? `${pick(NS)}.${words.join('_')}_${i}` : `${pick(NS)}.${words.map(cap).join('')}${i}`;
    const sig = theorem
      ? `theorem ${name} (x : ${pick(NS)}) : ${words[0]} x = ${words[1]} (${words[2]} x)`
      : `def ${name} (α : Type) : ${pick(NS)} α`;
    const d: Declaration = { name, kind: theorem ? 'theorem' : 'def', signature: sig, uses: [] };
    if (r() < 0.5) d.docstring = `The ${words[0]} of a ${words[1]} ${pick(WORDS)}, with ${words[2]}.`;
    d.module = `Synthetic.${pick(NS)}.${cap(pick(WORDS))}`;
    out.push(d);
  }
  return out;
}

function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}

/** The exact reference: every point scored (cosine and BM25F), no index, then the same RRF. */
class BruteForce {
  private readonly vectors: Float32Array;
  constructor(
    private readonly decls: Declaration[],
    private readonly sparse: SparseVector[],
    dense: Float32Array[],
    private readonly dims: number,
  ) {
    this.vectors = new Float32Array(decls.length * dims);
    dense.forEach((v, i) => this.vectors.set(v, i * dims));
  }

  search(role: 'premise' | 'theorem', q: SparseVector, qd: Float32Array, k: number): string[] {
    const n = this.decls.length;
    const limit = prefetchLimit(k);
    // df over the whole version, as the store computes idf
    const qIdx = new Map(q.indices.map((t, j) => [t, j]));
    const df = new Float64Array(q.indices.length);
    for (const s of this.sparse)
      for (const t of s.indices) {
        const j = qIdx.get(t);
        if (j !== undefined) df[j]!++;
      }
    const bm: { i: number; s: number }[] = [];
    const cos: { i: number; s: number }[] = [];
    for (let i = 0; i < n; i++) {
      if (roleOf(this.decls[i]!) !== role) continue;
      const sv = this.sparse[i]!;
      let s = 0;
      for (let m = 0; m < sv.indices.length; m++) {
        const j = qIdx.get(sv.indices[m]!);
        if (j !== undefined) s += idf(n, df[j]!) * q.values[j]! * sv.values[m]!;
      }
      if (s > 0) bm.push({ i, s });
      let dot = 0;
      const off = i * this.dims;
      for (let d = 0; d < this.dims; d++) dot += this.vectors[off + d]! * qd[d]!;
      cos.push({ i, s: dot });
    }
    bm.sort((a, b) => b.s - a.s || a.i - b.i);
    cos.sort((a, b) => b.s - a.s || a.i - b.i);
    const names = (xs: { i: number }[]) => xs.slice(0, limit).map((x) => this.decls[x.i]!.name);
    return reciprocalRankFusion([{ ids: names(cos) }, { ids: names(bm) }], { limit: k }).map((h) => h.id);
  }
}

interface SizeResult {
  declarations: number;
  buildSeconds: number;
  buildDeclPerSecond: number;
  firstSearchMs: number;
  store: Record<'top1' | 'top10', { p50: number; p95: number }>;
  bruteForce: Record<'top1' | 'top10', { p50: number; p95: number }>;
  speedupP50: Record<'top1' | 'top10', number>;
  top10Agreement: number;
}

const embedder = new HashEmbedder(64);
const results: SizeResult[] = [];
for (const n of SIZES) {
  const root = mkdtempSync(join(tmpdir(), 'driftline-bench-store-'));
  const store = new EmbeddedStore(root);
  try {
    const decls = synthetic(n);
    const stats = corpusStats(decls);
    const info: VersionInfo = {
      version: `bench-${n}`,
      library: 'bench',
      revision: '000000000000',
      embedder: embedder.id,
      dimensions: embedder.dimensions,
      schema: STORE_SCHEMA_VERSION,
      expected: n,
      stats,
      createdAt: new Date().toISOString(),
    };
    await store.createVersion(info);
    const sparse: SparseVector[] = [];
    const dense: Float32Array[] = [];
    const t0 = performance.now();
    for (let from = 0; from < n; from += BATCH) {
      const batch = decls.slice(from, from + BATCH);
      const vecs = await embedder.embed(batch.map(denseDocumentText), { kind: 'document' });
      const points: StorePoint[] = batch.map((decl, i) => ({ decl, ord: from + i, sparse: sparseDocument(decl, stats), dense: vecs[i]! }));
      await store.upsert(info.version, points);
      for (const p of points) {
        sparse.push(p.sparse);
        dense.push(p.dense!);
      }
    }
    await store.markComplete(info.version);
    const buildSeconds = (performance.now() - t0) / 1000;
    if ((await store.count(info.version)) !== n) throw new Error('count mismatch after build');
    log(`${n}: built in ${buildSeconds.toFixed(1)} s`);

    const brute = new BruteForce(decls, sparse, dense, embedder.dimensions);
    const r = rng(7);
    const queries = Array.from({ length: queriesFor(n) }, () => {
      const d = decls[Math.floor(r() * n)]!;
      return `${d.docstring ?? d.signature.split(':')[0]} ${d.name
        .split('.')
        .pop()!
        .replace(/_\d+$|\d+$/, '')}`;
    });
    const tFirst = performance.now();
    await store.search(info.version, { role: 'premise', k: 1, sparse: sparseQuery(queries[0]!), dense: embedder.vector(queries[0]!) });
    const firstSearchMs = performance.now() - tFirst;

    const lat = { store: { top1: [] as number[], top10: [] as number[] }, bruteForce: { top1: [] as number[], top10: [] as number[] } };
    let agree = 0;
    let total = 0;
    for (const [label, k] of [
      ['top1', 1],
      ['top10', 10],
    ] as const) {
      for (const [qi, q] of queries.entries()) {
        const role = qi % 2 === 0 ? 'premise' : 'theorem';
        const t1 = performance.now();
        const sv = sparseQuery(q);
        const [qd] = await embedder.embed([q], { kind: 'query' });
        const hits = await store.search(info.version, { role, k, sparse: sv, dense: qd });
        lat.store[label].push(performance.now() - t1);
        const t2 = performance.now();
        const ref = brute.search(role, sparseQuery(q), embedder.vector(q), k);
        lat.bruteForce[label].push(performance.now() - t2);
        if (k === 10) {
          const got = new Set(hits.map((h) => h.decl.name));
          agree += ref.filter((x) => got.has(x)).length;
          total += ref.length;
        }
      }
    }
    const summary = (xs: number[]) => ({ p50: +percentile(xs, 50).toFixed(2), p95: +percentile(xs, 95).toFixed(2) });
    const res: SizeResult = {
      declarations: n,
      buildSeconds: +buildSeconds.toFixed(2),
      buildDeclPerSecond: Math.round(n / buildSeconds),
      firstSearchMs: +firstSearchMs.toFixed(1),
      store: { top1: summary(lat.store.top1), top10: summary(lat.store.top10) },
      bruteForce: { top1: summary(lat.bruteForce.top1), top10: summary(lat.bruteForce.top10) },
      speedupP50: { top1: 0, top10: 0 },
      top10Agreement: total > 0 ? +(agree / total).toFixed(3) : 1,
    };
    res.speedupP50.top1 = +(res.bruteForce.top1.p50 / res.store.top1.p50).toFixed(2);
    res.speedupP50.top10 = +(res.bruteForce.top10.p50 / res.store.top10.p50).toFixed(2);
    results.push(res);
    log(`${n}: store p50 ${res.store.top10.p50} ms, brute force p50 ${res.bruteForce.top10.p50} ms`);
  } finally {
    await store.close();
    rmSync(root, { recursive: true, force: true });
  }
}

const notes = [
  `hybrid search (dense 64-d hashing embedder + BM25F sparse, RRF k=60, ${prefetchLimit(10)} candidates per side at k=10); queries per size and k: ${SIZES.map((n) => `${n}: ${queriesFor(n)}`).join(', ')} (scaled down on the largest corpus to keep the run short), half premise and half theorem searches`,
  `store = embedded LanceDB store (dense: exact LanceDB scan below ${ANN_MIN_POINTS} points, above it an IVF_FLAT index over √n partitions with 1/8 probed, so approximate; sparse: in-memory inverted index, exact); brute force = every point scored in JS, no index, exact`,
  'top-10 agreement = share of the brute-force top 10 that the store also returns (below 1 where the IVF index misses a dense candidate, or RRF ties order differently)',
  `build = embed + sparse-encode + idempotent upsert (merge on point id) in batches of ${BATCH}, plus the IVF index at completion`,
];
if (sizesArg) notes.push(`sizes chosen on the command line: ${SIZES.join(', ')}`);
if (json) {
  process.stdout.write(`${JSON.stringify({ sizes: results, notes })}\n`);
} else {
  const pad = (s: string | number, w: number) => String(s).padStart(w);
  process.stdout.write(
    '| declarations | build decl/s | store top-1 p50/p95 ms | brute top-1 p50/p95 ms | store top-10 p50/p95 ms | brute top-10 p50/p95 ms | speed-up p50 top-1 / top-10 | top-10 agreement |\n',
  );
  process.stdout.write('|---:|---:|---:|---:|---:|---:|---:|---:|\n');
  for (const r of results) {
    process.stdout.write(
      `| ${pad(r.declarations, 7)} | ${pad(r.buildDeclPerSecond, 6)} | ${r.store.top1.p50} / ${r.store.top1.p95} | ${r.bruteForce.top1.p50} / ${r.bruteForce.top1.p95} | ${r.store.top10.p50} / ${r.store.top10.p95} | ${r.bruteForce.top10.p50} / ${r.bruteForce.top10.p95} | ${r.speedupP50.top1}× / ${r.speedupP50.top10}× | ${r.top10Agreement} |\n`,
    );
  }
  process.stdout.write(`\n${notes.map((n) => `- ${n}`).join('\n')}\n`);
}
