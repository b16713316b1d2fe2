// The exploration behind premise-fusion.ts (issue 28): features of premise ranking on ConNF
// dev, each scaled to [0, 1] per query and summed with weights, tuned on the even-numbered
// items and read on the odd-numbered ones, under `--leave-out item` and `file`. In memory
// (BM25F over premises only, idf over premises), so figures differ from the store path by a
// few tenths; docs/retrieval-evaluation.md has the store-path figures of what shipped. Modes:
//   grid   BM25F, the learned vocabulary (informal words of theorems → premises they use),
//          analogy votes, usage prior: each alone and the best weighting per policy
//   joint  the same, weightings that keep `item` within half a point of the old default
//   query  BM25F field weights and k1, then pseudo-relevance feedback over the premises'
//          informal descriptions (query only)
//   defexp the definitions' votes (the r best premises vote for what they use), query only
//   joint2 / joint3  BM25F + definitions + analogy (+ vocabulary, prior), with the analogy
//          votes scaled by neighbour closeness: VOTE_ABS=1 SIM=abs|cov VPOW=… M=…
// What shipped: VOTE_ABS=1 SIM=cov VPOW=2 M=5 npx tsx bench/retrieval-explore.ts joint3
// (γ = 1 with r = 20 from `defexp`; β = 3 the best on the even half under `file` with `item`
// kept).
import { join, resolve } from 'node:path';
import { Bm25Index, type Bm25Params } from '../engines/retrieval/bm25';
import { declarationDocument, DEFAULT_PREMISE_PARAMS } from '../engines/retrieval/bm25-fields';
import { isTheorem, loadCorpus, type Declaration } from '../engines/retrieval/corpus';
import { loadNamedBenchmark } from '../engines/retrieval/eval/benchmark';
import { retrievalMetricsAt } from '../engines/retrieval/eval/metrics';
import { tokenize, tokenizeName } from '../engines/retrieval/lean-tokenize';
import { loadConfig, publicDataDir } from '../infra/config';

const dataDir = resolve(publicDataDir(loadConfig({ skipFileChecks: true })));
const corpus = await loadCorpus(join(dataDir, 'connf/library.jsonl'));
const items = await loadNamedBenchmark('connf', 'dev', dataDir);
const decls = corpus.declarations;
const premises = decls.filter((d) => !isTheorem(d));
const theorems = decls.filter((d) => isTheorem(d));
const pIdx = new Map(premises.map((p, i) => [p.name, i]));
const byName = new Map(decls.map((d) => [d.name, d]));
const P = premises.length;
const KS = [1, 3, 5, 10];

type Policy = 'item' | 'file';
function hidden(item: string, policy: Policy): Set<string> {
  const own = byName.get(item);
  if (policy === 'item' || !own?.module) return new Set([item]);
  return new Set([item, ...theorems.filter((t) => t.module === own.module).map((t) => t.name)]);
}

// ---- features ----
function bm25Premises(params: Bm25Params) {
  return Bm25Index.build(premises.map(declarationDocument), params);
}
const theoremBm25 = Bm25Index.build(theorems.map(declarationDocument), DEFAULT_PREMISE_PARAMS);

function declarationDocumentTokens(d: Declaration): string[] {
  const doc = declarationDocument(d);
  return Object.values(doc).flat();
}
function norm(v: Float64Array): Float64Array {
  let m = 0;
  for (const x of v) m = Math.max(m, x);
  if (m <= 0) return v;
  return v.map((x) => x / m);
}

// usage counts
const usesOfT = theorems.map((t) => [...new Set(t.uses)].map((u) => pIdx.get(u)).filter((i): i is number => i !== undefined));
const usageAll = new Float64Array(P);
usesOfT.forEach((us) => us.forEach((i) => usageAll[i]!++));
const tPos = new Map(theorems.map((t, i) => [t.name, i]));

function usage(h: Set<string>): Float64Array {
  const u = Float64Array.from(usageAll);
  for (const n of h) {
    const i = tPos.get(n);
    if (i !== undefined) for (const p of usesOfT[i]!) u[p]!--;
  }
  let m = 0;
  for (const x of u) m = Math.max(m, x);
  const d = Math.log1p(Math.max(1, m));
  return u.map((x) => Math.log1p(Math.max(0, x)) / d);
}

// analogy votes: top m theorem neighbours (BM25), weighted by score / best
let VOTE_ABS = 0;
function votes(q: string[], h: Set<string>, m: number, power = 1): Float64Array {
  const s = theoremBm25.scores(q);
  if (VOTE_ABS > 0) {
    // absolute: neighbour score over the best score any document could get for this query
    const qtf = new Map<string, number>();
    for (const w of q) qtf.set(w, (qtf.get(w) ?? 0) + 1);
    let maxS = 0;
    for (const [w, n] of qtf) {
      const df = theoremBm25.docFreq(w);
      if (df > 0) maxS += n * Math.log(1 + (theorems.length - df + 0.5) / (df + 0.5));
    }
    const order = [...s.keys()]
      .filter((i) => s[i]! > 0 && !h.has(theorems[i]!.name))
      .sort((a, b) => s[b]! - s[a]! || a - b)
      .slice(0, m);
    const v = new Float64Array(P);
    const qs = new Set(q);
    for (const i of order) {
      let sim = s[i]! / maxS;
      if (process.env.SIM === 'cov') {
        const t = new Set(declarationDocumentTokens(theorems[i]!));
        let c = 0;
        for (const w of qs) if (t.has(w)) c++;
        sim = c / qs.size;
      }
      for (const p of usesOfT[i]!) v[p]! += Math.pow(sim, power) / order.length;
    }
    return v.map((x) => x * VOTE_ABS);
  }
  const order = [...s.keys()]
    .filter((i) => s[i]! > 0 && !h.has(theorems[i]!.name))
    .sort((a, b) => s[b]! - s[a]! || a - b)
    .slice(0, m);
  const v = new Float64Array(P);
  const top = order.length ? s[order[0]!]! : 0;
  for (const i of order) for (const p of usesOfT[i]!) v[p]! += Math.pow(s[i]! / top, power);
  return norm(v);
}

// vocabulary: word -> theorems containing it (informal text + name), word-premise counts
type VocabFields = 'informal' | 'informal+name' | 'all';
function theoremWords(t: Declaration, f: VocabFields): string[] {
  const out = new Set<string>();
  if (t.informal) for (const w of tokenize(t.informal)) out.add(w);
  if (f !== 'informal') for (const w of tokenizeName(t.name)) out.add(w);
  if (f === 'all') for (const w of tokenize(t.signature)) out.add(w);
  return [...out];
}
function buildVocab(f: VocabFields) {
  const words = theorems.map((t) => theoremWords(t, f));
  const df = new Map<string, number>();
  const co = new Map<string, Map<number, number>>();
  words.forEach((ws, ti) => {
    for (const w of ws) {
      df.set(w, (df.get(w) ?? 0) + 1);
      let m = co.get(w);
      if (!m) co.set(w, (m = new Map()));
      for (const p of usesOfT[ti]!) m.set(p, (m.get(p) ?? 0) + 1);
    }
  });
  return { words, df, co };
}
const vocabs = new Map<VocabFields, ReturnType<typeof buildVocab>>();
function vocabScores(q: string[], h: Set<string>, f: VocabFields, mu: number, idfPow: number): Float64Array {
  let V = vocabs.get(f);
  if (!V) vocabs.set(f, (V = buildVocab(f)));
  const hiddenT = [...h].map((n) => tPos.get(n)).filter((i): i is number => i !== undefined);
  const N = theorems.length - hiddenT.length;
  const v = new Float64Array(P);
  const qset = new Map<string, number>();
  for (const w of q) qset.set(w, (qset.get(w) ?? 0) + 1);
  for (const [w, qtf] of qset) {
    let df = V.df.get(w) ?? 0;
    const co = new Map(V.co.get(w) ?? []);
    for (const ti of hiddenT) {
      if (!V.words[ti]!.includes(w)) continue;
      df--;
      for (const p of usesOfT[ti]!) co.set(p, co.get(p)! - 1);
    }
    if (df <= 0) continue;
    const idfw = Math.pow(Math.log(1 + (N - df + 0.5) / (df + 0.5)), idfPow);
    for (const [p, c] of co) if (c > 0) v[p]! += (Math.sqrt(qtf) * idfw * c) / (df + mu);
  }
  return norm(v);
}

// PRF over premise informal descriptions (+ names): expand the query with the top terms of the
// r best premises.
const premiseDocs = premises.map((p) => [
  ...tokenizeName(p.name),
  ...(p.informal ? tokenize(p.informal) : []),
  ...(p.docstring ? tokenize(p.docstring) : []),
]);
const premiseDf = new Map<string, number>();
for (const d of premiseDocs) for (const w of new Set(d)) premiseDf.set(w, (premiseDf.get(w) ?? 0) + 1);
function prfQuery(q: string[], first: Float64Array, r: number, e: number, lambda: number): string[] {
  const order = [...first.keys()]
    .filter((i) => first[i]! > 0)
    .sort((a, b) => first[b]! - first[a]! || a - b)
    .slice(0, r);
  const w = new Map<string, number>();
  const top = order.length ? first[order[0]!]! : 1;
  for (const i of order) {
    const doc = premiseDocs[i]!;
    const tf = new Map<string, number>();
    for (const t of doc) tf.set(t, (tf.get(t) ?? 0) + 1);
    for (const [t, c] of tf) {
      const idfv = Math.log(1 + (P - premiseDf.get(t)! + 0.5) / (premiseDf.get(t)! + 0.5));
      w.set(t, (w.get(t) ?? 0) + (first[i]! / top) * (c / doc.length) * idfv);
    }
  }
  const qs = new Set(q);
  const exp = [...w]
    .filter(([t]) => !qs.has(t))
    .sort((a, b) => b[1] - a[1])
    .slice(0, e);
  const reps = Math.max(1, Math.round(lambda * 4));
  const out = [...q];
  for (const [t] of exp) for (let i = 0; i < reps; i++) out.push(t);
  return out;
}

// ---- evaluation ----
function rank(score: Float64Array, exclude: Set<string>, k: number): string[] {
  return [...score.keys()]
    .filter((i) => !exclude.has(premises[i]!.name))
    .sort((a, b) => score[b]! - score[a]! || a - b)
    .slice(0, k)
    .map((i) => premises[i]!.name);
}
function f1s(rankings: string[][], golds: string[][]): number[] {
  return KS.map(
    (k) =>
      retrievalMetricsAt(
        rankings.map((r, i) => ({ retrieved: r.slice(0, k), gold: golds[i]! })),
        k,
      ).f1,
  );
}

const halves = { even: items.filter((_, i) => i % 2 === 0), odd: items.filter((_, i) => i % 2 === 1) };

interface Feat {
  bm: Float64Array;
  u: Float64Array;
  votes: Float64Array;
  vocab: Float64Array;
}
type FeatOpts = {
  params: Bm25Params;
  m: number;
  vf: VocabFields;
  mu: number;
  idfPow: number;
  prf?: { r: number; e: number; lambda: number };
  vpow: number;
  bmOnly?: boolean;
};
function features(set: typeof items, policy: Policy, o: FeatOpts): Feat[] {
  const bm = bm25Premises(o.params);
  return set.map((it) => {
    const q = tokenize(it.statement);
    const h = hidden(it.name, policy);
    let s = bm.scores(q);
    if (o.prf) s = bm.scores(prfQuery(q, s, o.prf.r, o.prf.e, o.prf.lambda));
    if (o.bmOnly) return { bm: norm(s), u: s, votes: s, vocab: s };
    return { bm: norm(s), u: usage(h), votes: votes(q, h, o.m, o.vpow), vocab: vocabScores(q, h, o.vf, o.mu, o.idfPow) };
  });
}
function evalW(feats: Feat[], set: typeof items, w: [number, number, number, number]): number[] {
  const rankings = feats.map((f, i) => {
    const s = new Float64Array(P);
    for (let p = 0; p < P; p++) s[p] = w[0] * f.bm[p]! + w[1] * f.u[p]! + w[2] * f.votes[p]! + w[3] * f.vocab[p]!;
    return rank(s, new Set([set[i]!.name]), 10);
  });
  return f1s(
    rankings,
    set.map((it) => it.gold),
  );
}

const fmt = (xs: number[]) => xs.map((x) => x.toFixed(1)).join(' / ');
const base: FeatOpts = { params: DEFAULT_PREMISE_PARAMS, m: 5, vf: 'informal+name', mu: 5, idfPow: 1, vpow: 1 };
const mode = process.argv[2] ?? 'all';
VOTE_ABS = Number(process.env.VOTE_ABS ?? 0);
base.vpow = Number(process.env.VPOW ?? 1);
base.m = Number(process.env.M ?? 5);
base.vf = (process.env.VF ?? 'informal+name') as VocabFields;
base.mu = Number(process.env.MU ?? 5);
base.idfPow = Number(process.env.IDFPOW ?? 1);

if (mode === 'all' || mode === 'grid') {
  for (const policy of ['file', 'item'] as Policy[]) {
    const fe = features(halves.even, policy, base);
    const fo = features(halves.odd, policy, base);
    console.log(`\n== policy ${policy}`);
    console.log('bm25 only      even', fmt(evalW(fe, halves.even, [1, 0, 0, 0])), ' odd', fmt(evalW(fo, halves.odd, [1, 0, 0, 0])));
    console.log('vocab only     even', fmt(evalW(fe, halves.even, [0, 0, 0, 1])), ' odd', fmt(evalW(fo, halves.odd, [0, 0, 0, 1])));
    console.log('votes only     even', fmt(evalW(fe, halves.even, [0, 0, 1, 0])), ' odd', fmt(evalW(fo, halves.odd, [0, 0, 1, 0])));
    // grid
    let best = { f: -1, w: [1, 0, 0, 0] as [number, number, number, number] };
    for (const a of [0, 0.5, 1, 1.5, 2, 3])
      for (const b of [0, 0.5, 1, 2, 3])
        for (const c of [0, 0.5, 1, 2, 3, 4, 6]) {
          const w: [number, number, number, number] = [1, a, b, c];
          const r = evalW(fe, halves.even, w);
          const f = r[1]! + 0.25 * (r[0]! + r[2]! + r[3]!);
          if (f > best.f) best = { f, w };
        }
    console.log(
      'best on even (w bm,u,votes,vocab)',
      best.w,
      'even',
      fmt(evalW(fe, halves.even, best.w)),
      ' odd',
      fmt(evalW(fo, halves.odd, best.w)),
    );
  }
}

if (mode === 'joint') {
  const F = {
    fe: features(halves.even, 'file', base),
    fo: features(halves.odd, 'file', base),
    ie: features(halves.even, 'item', base),
    io: features(halves.odd, 'item', base),
  };
  const oldW: [number, number, number, number] = [1, 1, 2, 0];
  console.log(
    'old-like [1,1,2,0] item even',
    fmt(evalW(F.ie, halves.even, oldW)),
    'odd',
    fmt(evalW(F.io, halves.odd, oldW)),
    '| file even',
    fmt(evalW(F.fe, halves.even, oldW)),
    'odd',
    fmt(evalW(F.fo, halves.odd, oldW)),
  );
  const rows: { w: [number, number, number, number]; fe: number[]; ie: number[] }[] = [];
  for (const a of [0, 0.25, 0.5, 1, 1.5])
    for (const b of (process.env.BS ?? '0,0.5,1,1.5,2,3').split(',').map(Number))
      for (const c of [0, 0.5, 1, 1.5, 2, 3, 4]) {
        const w: [number, number, number, number] = [1, a, b, c];
        rows.push({ w, fe: evalW(F.fe, halves.even, w), ie: evalW(F.ie, halves.even, w) });
      }
  const oldIe = evalW(F.ie, halves.even, oldW);
  const ok = rows.filter((r) => r.ie.every((x, i) => x >= oldIe[i]! - 0.5));
  ok.sort((a, b) => b.fe[1]! + 0.25 * (b.fe[0]! + b.fe[2]! + b.fe[3]!) - (a.fe[1]! + 0.25 * (a.fe[0]! + a.fe[2]! + a.fe[3]!)));
  for (const r of ok.slice(0, 8))
    console.log(
      r.w,
      'file even',
      fmt(r.fe),
      'item even',
      fmt(r.ie),
      '→ odd file',
      fmt(evalW(F.fo, halves.odd, r.w)),
      'item',
      fmt(evalW(F.io, halves.odd, r.w)),
    );
}

if (mode === 'query') {
  const res: { desc: string; e: number[]; o?: number[]; o2: FeatOpts }[] = [];
  for (const k1 of [1.2, 2, 4])
    for (const name of [3, 6, 10])
      for (const sig of [0.25, 0.5, 1, 2])
        for (const inf of [0.25, 0.5, 1, 2])
          for (const b of [0.5, 0.75]) {
            const params: Bm25Params = {
              k1,
              fields: {
                name: { weight: name, b },
                signature: { weight: sig, b },
                docstring: { weight: 0.5, b },
                informal: { weight: inf, b },
              },
            };
            const o2 = { ...base, params, bmOnly: true };
            res.push({
              desc: JSON.stringify({ k1, name, sig, inf, b }),
              e: evalW(features(halves.even, 'item', o2), halves.even, [1, 0, 0, 0]),
              o2,
            });
          }
  const score = (r: number[]) => r[1]! + 0.25 * (r[0]! + r[2]! + r[3]!);
  res.sort((a, b) => score(b.e) - score(a.e));
  for (const r of res.slice(0, 5))
    console.log(r.desc, 'even', fmt(r.e), 'odd', fmt(evalW(features(halves.odd, 'item', r.o2), halves.odd, [1, 0, 0, 0])));
  const bestP = res[0]!.o2.params;
  const prfRes: { desc: string; e: number[]; o2: FeatOpts }[] = [];
  for (const r of [1, 2, 3, 5, 8])
    for (const e of [3, 5, 10, 20])
      for (const lambda of [0.25, 0.5, 1]) {
        const o2 = { ...base, params: bestP, bmOnly: true, prf: { r, e, lambda } };
        prfRes.push({ desc: JSON.stringify({ r, e, lambda }), e: evalW(features(halves.even, 'item', o2), halves.even, [1, 0, 0, 0]), o2 });
      }
  prfRes.sort((a, b) => score(b.e) - score(a.e));
  for (const r of prfRes.slice(0, 5))
    console.log('prf', r.desc, 'even', fmt(r.e), 'odd', fmt(evalW(features(halves.odd, 'item', r.o2), halves.odd, [1, 0, 0, 0])));
}

// definition expansion: the r best premises vote for the premises their own declarations use
const premUses = premises.map((p) =>
  [...new Set(p.uses)].map((u) => pIdx.get(u)).filter((i): i is number => i !== undefined && premises[i]!.name !== p.name),
);
const indeg = new Float64Array(P);
premUses.forEach((us) => us.forEach((i) => indeg[i]!++));
function defExp(s: Float64Array, r: number, pow: number): Float64Array {
  const order = [...s.keys()]
    .filter((i) => s[i]! > 0)
    .sort((a, b) => s[b]! - s[a]! || a - b)
    .slice(0, r);
  const top = order.length ? s[order[0]!]! : 1;
  const v = new Float64Array(P);
  for (const i of order) for (const p of premUses[i]!) v[p]! += Math.pow(s[i]! / top, pow);
  return norm(v);
}
if (mode === 'defexp') {
  const bm = bm25Premises(DEFAULT_PREMISE_PARAMS);
  const maxIn = Math.log1p(Math.max(...indeg));
  const inPrior = indeg.map((x) => Math.log1p(x) / maxIn);
  const pre = (set: typeof items) => set.map((it) => norm(bm.scores(tokenize(it.statement))));
  const E = pre(halves.even),
    O = pre(halves.odd);
  const run = (S: Float64Array[], set: typeof items, r: number, pow: number, g: number, ip: number) =>
    f1s(
      S.map((s, i) => {
        const d = defExp(s, r, pow);
        const t = s.map((x, p) => x + g * d[p]! + ip * inPrior[p]!);
        return rank(t, new Set([set[i]!.name]), 10);
      }),
      set.map((x) => x.gold),
    );
  const score = (r: number[]) => r[1]! + 0.25 * (r[0]! + r[2]! + r[3]!);
  for (const ip of [0, 0.25, 0.5, 1]) {
    let best = { f: -1, d: '', a: [0, 0, 0] };
    for (const r of [1, 2, 3, 5, 8, 12, 20])
      for (const pow of [0, 1, 2])
        for (const g of [0, 0.25, 0.5, 1, 1.5, 2, 3]) {
          const e = run(E, halves.even, r, pow, g, ip);
          if (score(e) > best.f) best = { f: score(e), d: `r=${r} pow=${pow} g=${g} ip=${ip} even ${fmt(e)}`, a: [r, pow, g] };
        }
    console.log(best.d, 'odd', fmt(run(O, halves.odd, best.a[0]!, best.a[1]!, best.a[2]!, ip)));
  }
}

if (mode === 'joint2') {
  const R = Number(process.env.R ?? 20),
    POW = Number(process.env.POW ?? 2);
  const ext = (set: typeof items, policy: Policy) => features(set, policy, base).map((f) => ({ ...f, d: defExp(f.bm, R, POW) }));
  const F = { fe: ext(halves.even, 'file'), fo: ext(halves.odd, 'file'), ie: ext(halves.even, 'item'), io: ext(halves.odd, 'item') };
  const ev = (fs: ReturnType<typeof ext>, set: typeof items, w: number[]) =>
    f1s(
      fs.map((f, i) => {
        const s = new Float64Array(P);
        for (let p = 0; p < P; p++) s[p] = w[0]! * f.bm[p]! + w[1]! * f.u[p]! + w[2]! * f.votes[p]! + w[3]! * f.vocab[p]! + w[4]! * f.d[p]!;
        return rank(s, new Set([set[i]!.name]), 10);
      }),
      set.map((x) => x.gold),
    );
  const score = (r: number[]) => r[1]! + 0.25 * (r[0]! + r[2]! + r[3]!);
  const rows: { w: number[]; fe: number[]; ie: number[] }[] = [];
  for (const a of [0, 0.25, 0.5])
    for (const b of (process.env.BS ?? '0,1,2,4,8').split(',').map(Number))
      for (const c of [0, 0.5, 1, 2])
        for (const g of [0.5, 1, 1.5, 2]) {
          const w = [1, a, b, c, g];
          rows.push({ w, fe: ev(F.fe, halves.even, w), ie: ev(F.ie, halves.even, w) });
        }
  const minItem = (process.env.MIN_ITEM ?? '46.6,66.6,63.7,46.7').split(',').map(Number);
  const ok = rows.filter((r) => r.ie.every((x, i) => x >= minItem[i]!));
  console.log(rows.length, 'weightings,', ok.length, 'keep item within bounds on even');
  ok.sort((a, b) => score(b.fe) - score(a.fe));
  for (const r of ok.slice(0, 6))
    console.log(
      r.w,
      'file even',
      fmt(r.fe),
      'item even',
      fmt(r.ie),
      '→ odd file',
      fmt(ev(F.fo, halves.odd, r.w)),
      'item',
      fmt(ev(F.io, halves.odd, r.w)),
    );
  rows.sort((a, b) => score(b.fe) - score(a.fe));
  console.log(
    'unconstrained best',
    rows[0]!.w,
    'file even',
    fmt(rows[0]!.fe),
    'item even',
    fmt(rows[0]!.ie),
    '→ odd file',
    fmt(ev(F.fo, halves.odd, rows[0]!.w)),
    'item',
    fmt(ev(F.io, halves.odd, rows[0]!.w)),
  );
  const q = [1, 0, 0, 0, 1];
  console.log('query-only', q, 'even', fmt(ev(F.fe, halves.even, q)), 'odd', fmt(ev(F.fo, halves.odd, q)));
}

if (mode === 'joint3') {
  const R = Number(process.env.R ?? 20),
    POW = Number(process.env.POW ?? 2);
  const ext = (set: typeof items, policy: Policy) =>
    features(set, policy, { ...base, bmOnly: false }).map((f) => ({ ...f, d: defExp(f.bm, R, POW) }));
  const F = { fe: ext(halves.even, 'file'), fo: ext(halves.odd, 'file'), ie: ext(halves.even, 'item'), io: ext(halves.odd, 'item') };
  const ev = (fs: ReturnType<typeof ext>, set: typeof items, w: number[]) =>
    f1s(
      fs.map((f, i) => {
        const s = new Float64Array(P);
        for (let p = 0; p < P; p++) s[p] = w[0]! * f.bm[p]! + w[2]! * f.votes[p]! + w[4]! * f.d[p]!;
        return rank(s, new Set([set[i]!.name]), 10);
      }),
      set.map((x) => x.gold),
    );
  const score = (r: number[]) => r[1]! + 0.25 * (r[0]! + r[2]! + r[3]!);
  const rows: { w: number[]; fe: number[]; ie: number[] }[] = [];
  for (const b of (process.env.BS ?? '0,1,2,3,4,6,8,12').split(',').map(Number))
    for (const g of [0.5, 0.75, 1, 1.25, 1.5, 2]) {
      const w = [1, 0, b, 0, g];
      rows.push({ w, fe: ev(F.fe, halves.even, w), ie: ev(F.ie, halves.even, w) });
    }
  const minItem = (process.env.MIN_ITEM ?? '46.6,66.6,63.7,46.7').split(',').map(Number);
  const ok = rows.filter((r) => r.ie.every((x, i) => x >= minItem[i]!));
  ok.sort((a, b) => score(b.fe) - score(a.fe));
  for (const r of ok.slice(0, 3))
    console.log(
      r.w,
      'file even',
      fmt(r.fe),
      'item even',
      fmt(r.ie),
      '→ odd file',
      fmt(ev(F.fo, halves.odd, r.w)),
      'item',
      fmt(ev(F.io, halves.odd, r.w)),
    );
}
