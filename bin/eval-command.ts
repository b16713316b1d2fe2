// `driftline eval retrieval`: dependency-retrieval precision, recall and F1 of a library's index
// against a benchmark's gold `mathlib_dependencies`, as a Markdown table or one JSON object.
// Runs in process (no Temporal needed) through the service's own retrieval (`buildRetrieval`):
// the configured store, the version of the library's current corpus for the configured embedder
// (built in process when the store lacks it; promoted only when the library has no index at
// all, as `npm start` would), and the re-ranking runs use. `--in-memory` evaluates the in-memory
// reference indexes instead (the hybrid fusion weights are ablations of those only). Document
// vectors are cached on disk per embedder, DRIFT decompositions per decomposer model.
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { publicDataDir, type Config } from '../infra/config';
import { parseBenchmarkName } from '../engines/benchmarks/named';
import { configOrExit, fail } from './cli-support';
import { registerJudgeEvalCommand } from './judge-eval-command';
import { decomposeStatement } from '../engines/llm/stages';
import type { Embedder } from '../engines/retrieval/embedder';
import { buildRetrieval, createConfiguredEmbedder, createConfiguredLlm } from '../infra/deps';
import { DEFAULT_RERANK, rerank, usageTableOf, type RerankSettings } from '../engines/retrieval/rerank';
import { UsageTable } from '../engines/retrieval/usage-prior';
import { isTheorem, loadCorpus, type Declaration } from '../engines/retrieval/corpus';
import { buildInProcess, versionForCorpus } from '../engines/retrieval/stores/build';
import { StoreIndex, type StoreSearchMode } from '../engines/retrieval/stores/store-index';
import { HybridIndex } from '../engines/retrieval/eval/hybrid-index';
import { LexicalIndex } from '../engines/retrieval/eval/lexical-index';
import type { PremiseIndex } from '../engines/retrieval/premise-index';
import { loadBenchmark, loadNamedBenchmark, type BenchmarkItem } from '../engines/retrieval/eval/benchmark';
import { DecompositionCache } from '../engines/retrieval/eval/decomposition-cache';
import { metricsTable, parseKs, type RetrievalMetrics } from '../engines/retrieval/eval/metrics';
import { mostUsedPremises, usageBaseline } from '../engines/retrieval/eval/usage-baseline';
import { evaluateRetrieval, type EvalMode } from '../engines/retrieval/eval/run-eval';
import type { LeaveOutPolicy, SubQuery } from '../common/retrieval-types';

export type Retriever = 'auto' | 'lexical' | 'dense' | 'hybrid';

export interface EvalRetrievalOptions {
  benchmark: string;
  library?: string;
  k: string;
  mode: EvalMode;
  retriever: Retriever;
  json?: boolean;
  limit?: number;
  /** Only the items at even (0, 2, …: the tuning half) or odd positions (the held-out half). */
  half?: 'even' | 'odd';
  /** Weight of BM25 against dense (1) in hybrid fusion. */
  lexicalWeight?: number;
  rrfK?: number;
  /** false: no library-usage prior (`--no-usage-prior`; the default uses it in DRIFT mode only). */
  usagePrior?: boolean;
  /** false: no votes from similar theorems (`--no-analogy`). */
  analogy?: boolean;
  /** false: no votes of the best-matching definitions for what they use (`--no-definitions`). */
  definitions?: boolean;
  /** The monolithic votes (definitions, similar theorems) in DRIFT mode too (the service
   * leaves them out there). */
  driftAnalogy?: boolean;
  /** The in-memory reference indexes instead of the service's store path. */
  inMemory?: boolean;
  /** `item` (default) hides the item's own declaration; `file` every theorem of its file too. */
  leaveOut?: LeaveOutPolicy;
  /** With --json: add `baseline`, the query-blind most-used-premises ranking's figures. */
  baseline?: boolean;
}

class EvalError extends Error {}

function progress(label: string, quiet: boolean) {
  let last = 0;
  return (done: number, total: number) => {
    if (quiet || !process.stderr.isTTY) return;
    const now = Date.now();
    if (now - last < 200 && done < total) return;
    last = now;
    process.stderr.write(`\r${label} ${done}/${total}${done === total ? '\n' : ''}`);
  };
}

async function buildIndex(cfg: Config, library: string, retriever: Retriever, opts: EvalRetrievalOptions): Promise<PremiseIndex> {
  const { index, declarations } = await buildBaseIndex(cfg, library, retriever, opts);
  // The service's re-ranking (rerank.ts) over the in-memory index.
  const table = new UsageTable(declarations, isTheorem);
  return rerank(index, table, opts.mode === 'drift' ? 'drift' : 'monolithic', rerankSettings(opts));
}

async function buildBaseIndex(
  cfg: Config,
  library: string,
  retriever: Retriever,
  opts: EvalRetrievalOptions,
): Promise<{ index: PremiseIndex; declarations: Declaration[] }> {
  const lib = cfg.libraries.find((l) => l.name === library);
  if (!lib)
    throw new EvalError(
      `unknown library "${library}"; configured: ${cfg.libraries.map((l) => l.name).join(', ')} (DRIFTLINE_LIBRARIES=name=corpus.jsonl)`,
    );
  const corpus = await loadCorpus(lib.corpus);
  // The prior is the re-ranking's (rerank.ts), not the index's own.
  const lexical = LexicalIndex.build(library, corpus.declarations, { usagePrior: 0 });
  const declarations = corpus.declarations;
  const wanted = retriever === 'auto' ? (cfg.embeddings.embedder === 'none' ? 'lexical' : 'hybrid') : retriever;
  if (wanted === 'lexical') return { index: lexical, declarations };
  if (cfg.embeddings.embedder === 'none') {
    throw new EvalError(
      `--retriever ${wanted} needs an embedder: set DRIFTLINE_EMBEDDER=local (after \`npm run setup:model\`) or DRIFTLINE_EMBEDDER=openai with DRIFTLINE_EMBEDDING_MODEL`,
    );
  }
  // The CLI has no Temporal to retry for it, so the HTTP client retries a little itself.
  const embedder: Embedder = (await createConfiguredEmbedder(cfg, { maxRetries: 3 }))!;
  const index = await HybridIndex.build(lexical, corpus.declarations, embedder, {
    mode: wanted,
    ...(opts.lexicalWeight !== undefined ? { lexicalWeight: opts.lexicalWeight } : {}),
    ...(opts.rrfK !== undefined ? { rrfK: opts.rrfK } : {}),
    onProgress: progress(`embedding ${library} premises with ${embedder.id}`, Boolean(opts.json)),
  });
  return { index, declarations };
}

/** The re-ranking the options ask for: the service's by default. */
export function rerankSettings(
  opts: Pick<EvalRetrievalOptions, 'usagePrior' | 'analogy' | 'definitions' | 'driftAnalogy'>,
): RerankSettings {
  const mono = DEFAULT_RERANK.monolithic;
  const drift = opts.driftAnalogy
    ? { ...DEFAULT_RERANK.drift, definitions: mono.definitions, analogy: mono.analogy }
    : DEFAULT_RERANK.drift;
  const off = (w: RerankSettings['monolithic']) => ({
    usagePrior: opts.usagePrior === false ? 0 : w.usagePrior,
    analogy: opts.analogy === false ? 0 : w.analogy,
    definitions: opts.definitions === false ? 0 : w.definitions,
  });
  return { monolithic: off(mono), drift: off(drift) };
}

/** The index the service would search, opened through its registry and store. */
async function buildStoreIndex(
  cfg: Config,
  library: string,
  opts: EvalRetrievalOptions,
): Promise<{ index: PremiseIndex; notes: string[]; close(): Promise<void> }> {
  const lib = cfg.libraries.find((l) => l.name === library);
  if (!lib)
    throw new EvalError(
      `unknown library "${library}"; configured: ${cfg.libraries.map((l) => l.name).join(', ')} (DRIFTLINE_LIBRARIES=name=corpus.jsonl)`,
    );
  if (opts.lexicalWeight !== undefined || opts.rrfK !== undefined) {
    throw new EvalError(
      '--lexical-weight and --rrf-k change the in-memory hybrid index only (the stores fuse with RRF k=60, equal weights); add --in-memory',
    );
  }
  const wanted = opts.retriever === 'auto' ? (cfg.embeddings.embedder === 'none' ? 'lexical' : 'hybrid') : opts.retriever;
  if (wanted !== 'lexical' && cfg.embeddings.embedder === 'none') {
    throw new EvalError(
      `--retriever ${wanted} needs an embedder: set DRIFTLINE_EMBEDDER=local (after \`npm run setup:model\`) or DRIFTLINE_EMBEDDER=openai with DRIFTLINE_EMBEDDING_MODEL`,
    );
  }
  const settings = rerankSettings(opts);
  // The CLI has no Temporal to retry for it, so the HTTP client retries a little itself.
  const { registry, embedder } = await buildRetrieval(cfg, undefined, { rerank: settings, maxRetries: 3 });
  try {
    const notes: string[] = [];
    // The version of the current corpus for the configured embedder: what `driftline index
    // build` makes and the service then searches. A lexical evaluation searches its sparse side.
    const { version } = await versionForCorpus(library, lib.corpus, embedder?.id);
    const current = await registry.store.getAlias(library);
    let info = await registry.store.getVersion(version);
    if (!info?.completedAt) {
      info = await buildInProcess({
        library,
        corpusPath: lib.corpus,
        store: registry.store,
        ...(embedder ? { embedder } : {}),
        promote: current === undefined,
        onProgress: progress(
          `indexing ${library}${embedder ? ` with ${embedder.id}` : ''} in the ${registry.store.kind} store`,
          Boolean(opts.json),
        ),
      });
      notes.push(`built index version ${version}${current === undefined ? ' and made it current (the library had none)' : ''}`);
    }
    if (current !== undefined && current !== version) {
      notes.push(
        `evaluated ${version} (the current corpus); the library's current version is ${current}: \`driftline index build\` makes the service use the evaluated one`,
      );
    }
    const use = opts.mode === 'drift' ? 'drift' : 'monolithic';
    const search: StoreSearchMode = wanted;
    const native: StoreSearchMode = info.dimensions > 0 ? 'hybrid' : 'lexical';
    let index: PremiseIndex;
    if (search === native) {
      // Exactly the service's path: the registry's version with its re-ranking for this use.
      index = await registry.wrappedVersion(version, use);
    } else {
      // An ablation over the same version (e.g. only its sparse side), re-ranked the same way.
      const base = new StoreIndex(registry.store, info, embedder, { search });
      index = rerank(base, settings[use].usagePrior > 0 ? await usageTableOf(base) : undefined, use, settings);
    }
    return { index, notes, close: () => registry.close() };
  } catch (err) {
    await registry.close();
    throw err;
  }
}

async function decompositions(cfg: Config, items: readonly BenchmarkItem[], quiet: boolean): Promise<Map<string, SubQuery[]>> {
  // The decomposer's provider and model as configured (DRIFTLINE_ROLE_DECOMPOSER or the default).
  const llm = createConfiguredLlm(cfg);
  const model = llm.modelFor('decomposer');
  const cache = new DecompositionCache(join(cfg.dataDir, 'cache', 'decompositions.jsonl'));
  const out = new Map<string, SubQuery[]>();
  const missing = items.filter((it) => {
    const hit = cache.get(model, it.statement);
    if (hit) out.set(it.name, hit);
    return !hit;
  });
  if (missing.length === 0) return out;
  if (!llm.configured) {
    throw new EvalError(
      `--mode drift needs the statements decomposed into sub-queries by an LLM, and ${missing.length} of ${items.length} are not in the cache ` +
        `(${join(cfg.dataDir, 'cache', 'decompositions.jsonl')}): set OPENAI_BASE_URL (and OPENAI_API_KEY, DRIFTLINE_MODEL_DECOMPOSER), or use --mode monolithic`,
    );
  }
  const report = progress(`decomposing with ${model}`, quiet);
  let done = 0;
  for (const it of missing) {
    const subs = await decomposeStatement(llm, it.statement);
    cache.set(model, it.statement, subs);
    out.set(it.name, subs);
    report(++done, missing.length);
  }
  return out;
}

/** Runs the evaluation and returns what to print. */
export async function evalRetrieval(cfg: Config, opts: EvalRetrievalOptions): Promise<string> {
  const ks = parseKs(opts.k);
  // A file, or a benchmark of the public data by name (`connf:dev`), found by what the data directory has.
  const named = existsSync(opts.benchmark) ? undefined : parseBenchmarkName(opts.benchmark);
  let items: BenchmarkItem[];
  if (named) items = await loadNamedBenchmark(named.name, named.split, publicDataDir(cfg));
  else items = await loadBenchmark(resolve(opts.benchmark));
  if (opts.half) items = items.filter((_, i) => i % 2 === (opts.half === 'even' ? 0 : 1));
  if (opts.limit !== undefined) items = items.slice(0, opts.limit);
  const library = opts.library ?? cfg.libraries[0]!.name;
  const leaveOut = opts.leaveOut ?? 'item';
  const subqueries = opts.mode === 'drift' ? await decompositions(cfg, items, Boolean(opts.json)) : undefined;
  let index: PremiseIndex;
  let setupNotes: string[];
  let close = async () => {};
  if (opts.inMemory) {
    index = await buildIndex(cfg, library, opts.retriever, opts);
    setupNotes = ["in-memory reference indexes (--in-memory), not the service's store"];
  } else {
    ({ index, notes: setupNotes, close } = await buildStoreIndex(cfg, library, opts));
  }
  let result;
  try {
    result = await evaluateRetrieval(index, items, {
      mode: opts.mode,
      ks,
      leaveOut,
      ...(subqueries ? { subqueries } : {}),
      onProgress: progress('retrieving', Boolean(opts.json)),
    });
  } finally {
    await close();
  }
  // The query-blind baseline under the same leave-out policy (most-used premises first).
  const lib = cfg.libraries.find((l) => l.name === library);
  const decls = lib ? (await loadCorpus(lib.corpus)).declarations : undefined;
  const baseline = decls ? usageBaseline(decls, items, ks, leaveOut) : undefined;
  const pick = ({ k, precision, recall, f1, microF1 }: RetrievalMetrics) => ({ k, precision, recall, f1, microF1 });
  if (opts.json) {
    // Exactly {results} unless the baseline is asked for: scripts read this object.
    return JSON.stringify({ results: result.metrics.map(pick), ...(opts.baseline && baseline ? { baseline: baseline.map(pick) } : {}) });
  }
  const m0 = result.metrics[0]!;
  const lines = [
    `# Dependency retrieval: ${opts.mode}, ${index.kind}`,
    '',
    `benchmark ${opts.benchmark}${opts.half ? `, ${opts.half}-numbered half` : ''} (${m0.items} items${m0.skipped ? `, ${m0.skipped} without gold dependencies left out` : ''}); library ${library} (${index.size} declarations)`,
    opts.mode === 'drift'
      ? 'k = premises kept per sub-query; precision over the de-duplicated set'
      : 'k = premises retrieved for the whole statement',
    leaveOut === 'file'
      ? 'leave-out: file (the item and every theorem of its source file hidden from analogy votes, the usage prior and examples; definitions stay retrievable)'
      : "leave-out: item (only the item's own declaration hidden)",
    '',
    metricsTable(result.metrics),
  ];
  if (baseline) {
    lines.push(
      '',
      `Query-blind baseline, same leave-out: the most-used premises first (the library's most used: ${mostUsedPremises(decls!, new Set(), 3).join(', ')}):`,
      '',
      metricsTable(baseline),
    );
  }
  for (const n of [...setupNotes, ...result.notes]) lines.push('', `note: ${n}`);
  return lines.join('\n');
}

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('expected a whole number ≥ 1');
  return n;
}

function nonNegative(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0) throw new InvalidArgumentError('expected a number ≥ 0');
  return n;
}

export function registerEvalCommand(program: Command): void {
  const group = program.command('eval').description('measure parts of the pipeline against benchmarks');
  registerJudgeEvalCommand(group);
  group
    .command('retrieval')
    .description('dependency retrieval precision / recall / F1 against gold mathlib_dependencies')
    .requiredOption(
      '-b, --benchmark <file|name>',
      'benchmark JSONL (full_name, informal_stmt, mathlib_dependencies), or a benchmark of the public data by name: connf:dev, connf, proofnet',
    )
    .option('-l, --library <name>', 'library to retrieve from (default: the first configured)')
    .option('-k, --k <list>', 'cut-offs, comma separated', '1,3,5,10')
    .addOption(
      new Option('-m, --mode <mode>', 'whole statement, or DRIFT sub-queries').choices(['monolithic', 'drift']).default('monolithic'),
    )
    .addOption(
      new Option('-r, --retriever <kind>', 'auto: hybrid when an embedder is configured, else lexical')
        .choices(['auto', 'lexical', 'dense', 'hybrid'])
        .default('auto'),
    )
    .option('--limit <n>', 'only the first n items', positiveInt)
    .addOption(
      new Option(
        '--half <half>',
        'only the items at even positions (0, 2, …: where the defaults were tuned) or at odd ones (held out)',
      ).choices(['even', 'odd']),
    )
    .addOption(
      new Option(
        '--leave-out <policy>',
        "item: hide the item's own declaration; file: also every theorem of its source file (definitions stay)",
      )
        .choices(['item', 'file'])
        .default('item'),
    )
    .option('--lexical-weight <w>', 'with --in-memory: weight of BM25 in hybrid fusion (dense: 1)', nonNegative)
    .option('--rrf-k <k>', 'with --in-memory: RRF constant (default 60)', nonNegative)
    .option('--no-usage-prior', 'no library-usage prior (the default uses it in drift mode only)')
    .option('--no-analogy', 'no votes from the most similar theorems')
    .option('--no-definitions', 'no votes of the best-matching definitions for the premises they use')
    .option('--drift-analogy', 'the votes of definitions and similar theorems in drift mode too (runs leave them out there)')
    .option('--in-memory', "the in-memory reference indexes instead of the service's store (needed for --lexical-weight, --rrf-k)")
    .option(
      '--baseline',
      'with --json: add "baseline", the figures of the query-blind ranking (most-used premises first), under the same leave-out',
    )
    .option('--json', 'print one JSON object {"results": [{k, precision, recall, f1, microF1}]}, in percent')
    .action(async (opts: EvalRetrievalOptions) => {
      const cfg = configOrExit();
      try {
        process.stdout.write(`${await evalRetrieval(cfg, opts)}\n`);
      } catch (err) {
        fail((err as Error).message);
      }
    });
}
