// Monolithic dependency retrieval on the ConNF development split: the whole informal statement
// as one query, top-k premises, against the gold `mathlib_dependencies`. Precision, recall and
// F1 are computed per item and averaged (items where P = R = 0 count F1 = 0).
//
//   npx tsx bench/retrieval-eval.ts [dataDir]     (default ../shared/data, or DRIFTLINE_SHARED_DATA)
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { loadCorpus } from '../activities/retrieval/corpus';
import { LexicalIndex } from '../activities/retrieval/premise-index';
import { retrievePremises } from '../activities/retrieval/retrieve-premises';
import { selectExamples } from '../activities/retrieval/greedy-examples';

interface Item {
  full_name: string;
  informal_stmt: string;
  mathlib_dependencies: string[];
}

const dataDir = resolve(process.argv[2] ?? process.env.DRIFTLINE_SHARED_DATA ?? '../shared/data');
const KS = [1, 3, 5, 10];

const corpus = await loadCorpus(join(dataDir, 'connf/library.jsonl'));
const t0 = performance.now();
const index = LexicalIndex.build('connf', corpus.declarations);
const buildMs = performance.now() - t0;
const items: Item[] = readFileSync(join(dataDir, 'connf/benchmark.dev.jsonl'), 'utf8')
  .split('\n')
  .filter((l) => l.trim() !== '')
  .map((l) => JSON.parse(l) as Item);

const sums = KS.map(() => ({ p: 0, r: 0, f: 0 }));
const t1 = performance.now();
for (const item of items) {
  const gold = new Set(item.mathlib_dependencies);
  const { premises } = await retrievePremises(index, {
    library: 'connf',
    statement: item.informal_stmt,
    subqueries: [],
    mode: 'monolithic',
    topK: Math.max(...KS),
    exclude: [item.full_name],
    gold: [],
  });
  KS.forEach((k, j) => {
    const got = premises.slice(0, k).map((p) => p.name);
    const hit = got.filter((n) => gold.has(n)).length;
    // Precision over k (the baseline always shows k premises), recall over the gold set.
    const p = hit / k;
    const r = gold.size > 0 ? hit / gold.size : 0;
    const s = sums[j]!;
    s.p += p;
    s.r += r;
    s.f += p + r > 0 ? (2 * p * r) / (p + r) : 0;
  });
}
const searchMs = performance.now() - t1;

// Illustration with the gold premises (oracle): how much of them m = 3 examples cover.
let covered = 0;
let total = 0;
for (const item of items) {
  const ex = await selectExamples(index, {
    statement: item.informal_stmt,
    premises: item.mathlib_dependencies,
    m: 3,
    exclude: [item.full_name],
  });
  covered += ex.reduce((n, e) => n + e.covers.length, 0);
  total += item.mathlib_dependencies.length;
}

const pct = (x: number) => ((100 * x) / items.length).toFixed(2).padStart(6);
console.log(`ConNF dev: ${items.length} items; library ${corpus.declarations.length} declarations`);
console.log(`index build ${buildMs.toFixed(0)} ms; ${items.length} searches ${searchMs.toFixed(0)} ms\n`);
console.log('monolithic BM25 (whole informal statement)');
console.log('   k | precision | recall |     F1');
console.log('-----|-----------|--------|-------');
KS.forEach((k, j) => {
  const s = sums[j]!;
  console.log(`${String(k).padStart(4)} |    ${pct(s.p)} | ${pct(s.r)} | ${pct(s.f)}`);
});
console.log('(DRIFT paper, ConNF: dense whole-statement baseline F1 28.17)');
console.log(`\ngreedy illustration, m = 3, gold premises: ${((100 * covered) / total).toFixed(2)}% covered`);
