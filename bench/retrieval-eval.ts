// Monolithic dependency retrieval on the ConNF development split, every retriever side by side,
// on the tuning half (items at even positions: where α of the usage prior and the hybrid fusion
// weight were chosen), the held-out half (odd positions) and all items. F1 per item, averaged,
// in percent (engines/retrieval/eval/metrics.ts).
//
//   npx tsx bench/retrieval-eval.ts [dataDir] [--json] [--leave-out item|file]
//     dataDir: default the pulled public data (DRIFTLINE_SHARED_DATA, else .driftline/data)
//     dense and hybrid rows need the local model (`npm run setup:model`, or
//     DRIFTLINE_LOCAL_MODEL_DIR); document and query vectors are cached in .driftline/cache.
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { isTheorem, loadCorpus } from '../engines/retrieval/corpus';
import { CachingEmbedder, cacheFileFor } from '../engines/retrieval/embedders/cache';
import { LocalEmbedder } from '../engines/retrieval/embedders/local';
import { loadNamedBenchmark, type BenchmarkItem } from '../engines/retrieval/eval/benchmark';
import { evaluateRetrieval } from '../engines/retrieval/eval/run-eval';
import { retrievalMetricsAt, type RetrievalCase } from '../engines/retrieval/eval/metrics';
import { AnalogyIndex } from '../engines/retrieval/analogy';
import { HybridIndex } from '../engines/retrieval/eval/hybrid-index';
import { LexicalIndex } from '../engines/retrieval/eval/lexical-index';
import type { PremiseIndex } from '../engines/retrieval/premise-index';
import { UsageTable } from '../engines/retrieval/usage-prior';
import { loadConfig, publicDataDir } from '../infra/config';
import { FusionIndex } from '../engines/retrieval/premise-fusion';
import { rerank } from '../engines/retrieval/rerank';
import { hiddenTheorems } from '../engines/retrieval/eval/usage-baseline';
import type { LeaveOutPolicy } from '../common/retrieval-types';

const args = process.argv.slice(2);
const json = args.includes('--json');
const leaveOutAt = args.indexOf('--leave-out');
const leaveOut = leaveOutAt >= 0 ? (args.splice(leaveOutAt, 2)[1] as LeaveOutPolicy) : 'item';
if (leaveOut !== 'item' && leaveOut !== 'file') throw new Error('--leave-out item|file');
const dataDir = resolve(args.find((a) => !a.startsWith('--')) ?? publicDataDir(loadConfig({ skipFileChecks: true })));
const modelDir = resolve(process.env.DRIFTLINE_LOCAL_MODEL_DIR ?? '.tools/models/all-MiniLM-L6-v2');
const KS = [1, 3, 5, 10];
const log = (s: string) => {
  if (!json) console.log(s);
  else process.stderr.write(`${s}\n`);
};

const corpus = await loadCorpus(join(dataDir, 'connf/library.jsonl'));
const items = await loadNamedBenchmark('connf', 'dev', dataDir);
const halves: Record<string, BenchmarkItem[]> = {
  tune: items.filter((_, i) => i % 2 === 0),
  heldout: items.filter((_, i) => i % 2 === 1),
  all: items,
};

const retrievers: Record<string, PremiseIndex | 'usage-only'> = {
  'BM25 (no prior)': LexicalIndex.build('connf', corpus.declarations, { usagePrior: 0 }),
  'usage only': 'usage-only',
  'BM25 + usage prior': LexicalIndex.build('connf', corpus.declarations),
  'BM25 + usage prior + analogy (the default until issue 28)': new AnalogyIndex(LexicalIndex.build('connf', corpus.declarations)),
  'BM25 + definitions (query only)': new FusionIndex(LexicalIndex.build('connf', corpus.declarations, { usagePrior: 0 }), {
    definitions: 1,
    analogy: 0,
    usagePrior: 0,
  }),
  'BM25 + definitions + analogy (default)': rerank(
    LexicalIndex.build('connf', corpus.declarations, { usagePrior: 0 }),
    undefined,
    'monolithic',
  ),
};
if (existsSync(join(modelDir, 'model.safetensors'))) {
  const local = LocalEmbedder.fromDir(modelDir);
  const embedder = new CachingEmbedder(local, cacheFileFor(resolve('.driftline/cache/embeddings'), local.id));
  const t0 = performance.now();
  const noPrior = LexicalIndex.build('connf', corpus.declarations, { usagePrior: 0 });
  const withPrior = LexicalIndex.build('connf', corpus.declarations);
  retrievers[`dense ${local.id}`] = await HybridIndex.build(noPrior, corpus.declarations, embedder, { mode: 'dense' });
  retrievers['hybrid (BM25 no prior + dense)'] = await HybridIndex.build(noPrior, corpus.declarations, embedder);
  retrievers[`dense + analogy`] = new AnalogyIndex(await HybridIndex.build(noPrior, corpus.declarations, embedder, { mode: 'dense' }));
  for (const w of [1, 2, 3]) {
    const hybrid = await HybridIndex.build(withPrior, corpus.declarations, embedder, { lexicalWeight: w });
    retrievers[`hybrid (BM25 + prior ×${w}, dense)`] = hybrid;
    retrievers[`hybrid (BM25 + prior ×${w}, dense) + analogy`] = new AnalogyIndex(hybrid);
  }
  log(`premise vectors ready in ${((performance.now() - t0) / 1000).toFixed(1)} s (${embedder.hits} cached, ${embedder.misses} computed)`);
} else {
  log(`(no local model at ${modelDir}: dense and hybrid rows skipped; run \`npm run setup:model\`)`);
}

// Ranking every premise by how many theorems use it (the query is ignored): what the prior
// alone knows.
const usage = new UsageTable(corpus.declarations, isTheorem);
const premiseNames = corpus.declarations.filter((d) => !isTheorem(d)).map((d) => d.name);
function usageOnly(set: BenchmarkItem[]) {
  const cases: RetrievalCase[] = set.map((it) => ({
    retrieved: premiseNames
      .filter((n) => n !== it.name)
      .map((n) => ({ n, u: usage.uses(n, hiddenTheorems(corpus.declarations, it.name, leaveOut)) }))
      .sort((a, b) => b.u - a.u)
      .slice(0, 10)
      .map((x) => x.n),
    gold: it.gold,
  }));
  return KS.map((k) =>
    retrievalMetricsAt(
      cases.map((c) => ({ ...c, retrieved: c.retrieved.slice(0, k) })),
      k,
    ),
  );
}

const results: Record<string, Record<string, Record<number, number>>> = {};
for (const [name, index] of Object.entries(retrievers)) {
  results[name] = {};
  for (const [half, set] of Object.entries(halves)) {
    const metrics =
      index === 'usage-only' ? usageOnly(set) : (await evaluateRetrieval(index, set, { mode: 'monolithic', ks: KS, leaveOut })).metrics;
    results[name]![half] = Object.fromEntries(metrics.map((m) => [m.k, Number(m.f1.toFixed(2))]));
  }
}

if (json) {
  console.log(
    JSON.stringify({
      benchmark: 'connf/benchmark.dev.jsonl',
      leaveOut,
      items: { tune: halves.tune!.length, heldout: halves.heldout!.length },
      f1: results,
    }),
  );
} else {
  console.log(`\nConNF dev, monolithic (whole informal statement), --leave-out ${leaveOut}, F1 % at k = ${KS.join(', ')}`);
  console.log(`tune = ${halves.tune!.length} items at even positions; held-out = ${halves.heldout!.length} at odd positions\n`);
  const header = ['retriever', ...Object.keys(halves).flatMap((h) => KS.map((k) => `${h} @${k}`))];
  console.log(`| ${header.join(' | ')} |`);
  console.log(`|${header.map((_, i) => (i === 0 ? '---' : '---:')).join('|')}|`);
  for (const [name, byHalf] of Object.entries(results)) {
    const cells = Object.keys(halves).flatMap((h) => KS.map((k) => byHalf[h]![k]!.toFixed(2)));
    console.log(`| ${name} | ${cells.join(' | ')} |`);
  }
  console.log('\n(DRIFT paper, ConNF: fine-tuned dense whole-statement baseline F1 28.17; DRIFT 36.88)');
}
