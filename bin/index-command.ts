// `driftline index …`: build a library's index as a durable workflow (with a progress bar), list
// versions, promote one, search the current one.
import { resolve } from 'node:path';
import { WorkflowIdConflictPolicy } from '@temporalio/common';
import { defaultPayloadConverter } from '@temporalio/common';
import type { Client } from '@temporalio/client';
import { type Command, InvalidArgumentError, Option } from 'commander';
import {
  INDEX_BUILD_PROGRESS_QUERY,
  INDEX_BUILD_WORKFLOW,
  indexBuildWorkflowId,
  type BuildIndexInput,
  type BuildIndexResult,
  type IndexBuildProgress,
  type StoreIndexHeartbeat,
} from '../common/index-build';
import { MAIN_TASK_QUEUE } from '../common/activities';
import type { Config } from '../infra/config';
import { configOrExit, fail } from './cli-support';
import { connectClient } from '../infra/connect';
import { buildRetrieval } from '../infra/deps';
import type { IndexRegistry } from '../engines/retrieval/index-registry';
import type { PremiseIndex } from '../engines/retrieval/premise-index';
import { searchInteractive } from '../engines/retrieval/interactive-search';
import { promoteVersion, versionForCorpus } from '../engines/retrieval/stores/build';
import { checkLibraryName } from '../engines/retrieval/stores/store';

function loadCfg(): Config {
  // Index commands name their corpus themselves; a configured one may be absent here.
  return configOrExit({ skipFileChecks: true });
}

function positive(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('expected a whole number ≥ 1');
  return n;
}

function duration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '--:--';
  const s = Math.round(ms / 1000);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${sec}` : `${m}:${sec}`;
}

/** One line of progress: bar, counts, rate and ETA (from the rate since storing began). */
export function progressLine(p: IndexBuildProgress, done: number, elapsedMs: number, width = 30): string {
  const total = p.total || 0;
  const frac = total > 0 ? Math.min(1, done / total) : 0;
  const filled = Math.round(frac * width);
  const rate = elapsedMs > 0 ? (done * 1000) / elapsedMs : 0;
  const eta = rate > 0 ? ((total - done) / rate) * 1000 : NaN;
  const bar = `${'█'.repeat(filled)}${'░'.repeat(width - filled)}`;
  return `${bar} ${(frac * 100).toFixed(0).padStart(3)}%  ${done}/${total}  ${rate.toFixed(0)}/s  ETA ${p.phase === 'done' ? '0:00' : duration(eta)}  ${p.phase}`;
}

/** Declarations stored so far: whole chunks from the query, plus the running chunk's heartbeat. */
async function currentDone(client: Client, workflowId: string, p: IndexBuildProgress): Promise<number> {
  if (p.phase !== 'storing') return p.done;
  try {
    const d = await client.workflow.getHandle(workflowId).describe();
    let extra = 0;
    for (const a of d.raw.pendingActivities ?? []) {
      const payload = a.heartbeatDetails?.payloads?.[0];
      if (!payload) continue;
      const hb = defaultPayloadConverter.fromPayload<StoreIndexHeartbeat>(payload);
      if (hb && hb.from === p.done) extra = Math.max(extra, hb.next - hb.from);
    }
    return p.done + extra;
  } catch {
    return p.done;
  }
}

async function withRegistry<T>(fn: (cfg: Config, registry: IndexRegistry) => Promise<T>): Promise<T> {
  const cfg = loadCfg();
  // The service's registry: its embedder names the version a build makes, and searches go
  // through the same re-ranking as runs.
  const { registry } = await buildRetrieval(cfg, undefined, { maxRetries: 3 }).catch((err: Error) => fail(err.message));
  try {
    return await fn(cfg, registry);
  } finally {
    await registry.close();
  }
}

interface BuildOptions {
  library: string;
  corpus: string;
  chunkSize?: number;
  skipBadLines?: boolean;
  batchSize?: number;
  promote: boolean;
  wait: boolean;
}

async function buildCommand(opts: BuildOptions): Promise<void> {
  try {
    checkLibraryName(opts.library);
  } catch (err) {
    fail((err as Error).message);
  }
  const corpusPath = resolve(opts.corpus);
  await withRegistry(async (cfg, registry) => {
    const { version } = await versionForCorpus(opts.library, corpusPath, registry.embedder?.id).catch((err: Error) =>
      fail(`cannot read corpus ${corpusPath}: ${err.message}`),
    );
    if (!cfg.libraries.some((l) => l.name === opts.library)) {
      process.stderr.write(`note: library ${opts.library} is not in DRIFTLINE_LIBRARIES; runs will not use it until it is configured\n`);
    }
    const client = await connectClient(cfg).catch((err: Error) => fail(err.message));
    const workflowId = indexBuildWorkflowId(opts.library, version);
    const input: BuildIndexInput = { library: opts.library, corpusPath, version, promote: opts.promote };
    if (opts.chunkSize) input.chunkSize = opts.chunkSize;
    if (opts.skipBadLines) input.skipBadLines = true;
    if (opts.batchSize) input.batchSize = opts.batchSize;
    // The same build started twice attaches to the running one.
    const handle = await client.workflow.start(INDEX_BUILD_WORKFLOW, {
      taskQueue: MAIN_TASK_QUEUE,
      workflowId,
      args: [input],
      workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
    });
    process.stderr.write(
      `index build ${workflowId}\n  store ${registry.store.kind}, embedder ${registry.embedder?.id ?? 'none (lexical only)'}\n`,
    );
    if (!opts.wait) {
      process.stdout.write(`${JSON.stringify({ workflowId, version })}\n`);
      await client.connection.close();
      return;
    }
    const tty = process.stderr.isTTY;
    let lastPrinted = -1;
    let storingSince: number | undefined;
    let doneAtStart = 0;
    const result = handle.result() as Promise<BuildIndexResult>;
    let finished = false;
    result.then(
      () => (finished = true),
      () => (finished = true),
    );
    while (!finished) {
      const p = await handle.query<IndexBuildProgress>(INDEX_BUILD_PROGRESS_QUERY).catch(() => undefined);
      if (p) {
        const done = await currentDone(client, workflowId, p);
        if (p.phase === 'storing' && storingSince === undefined) {
          storingSince = Date.now();
          doneAtStart = done; // a resumed build: rate from what this command watched
        }
        const elapsed = storingSince === undefined ? 0 : Date.now() - storingSince;
        const line = progressLine(p, done, elapsed, 30).replace(
          /\d+\/s/,
          `${(elapsed > 0 ? ((done - doneAtStart) * 1000) / elapsed : 0).toFixed(0)}/s`,
        );
        if (tty) process.stderr.write(`\r${line}\x1b[K`);
        else {
          const decile = p.total > 0 ? Math.floor((10 * done) / p.total) : 0;
          if (decile !== lastPrinted) {
            lastPrinted = decile;
            process.stderr.write(`${line}\n`);
          }
        }
      }
      await Promise.race([result.catch(() => undefined), new Promise((r) => setTimeout(r, 500))]);
    }
    try {
      const r = await result;
      if (tty) process.stderr.write('\n');
      process.stdout.write(
        `built ${r.version}: ${r.count} declarations${r.promoted ? `; ${opts.library} now uses it` : ' (not promoted)'}\n`,
      );
    } catch (err) {
      if (tty) process.stderr.write('\n');
      const cause = (err as { cause?: Error }).cause;
      fail(`index build ${workflowId} failed: ${cause?.message ?? (err as Error).message}`);
    } finally {
      await client.connection.close();
    }
  });
}

async function listCommand(opts: { library?: string; json?: boolean }): Promise<void> {
  await withRegistry(async (_cfg, registry) => {
    const versions = await registry.store.listVersions(opts.library);
    const aliases = new Map<string, string | undefined>();
    for (const v of versions) if (!aliases.has(v.library)) aliases.set(v.library, await registry.store.getAlias(v.library));
    const rows = await Promise.all(
      versions.map(async (v) => ({
        current: aliases.get(v.library) === v.version,
        library: v.library,
        version: v.version,
        embedder: v.embedder,
        points: await registry.store.count(v.version).catch(() => -1),
        expected: v.expected,
        status: v.completedAt ? 'complete' : 'building',
        createdAt: v.createdAt,
      })),
    );
    if (opts.json) {
      process.stdout.write(`${JSON.stringify({ store: registry.store.kind, versions: rows }, null, 2)}\n`);
      return;
    }
    if (rows.length === 0) {
      process.stdout.write(`no index versions in the ${registry.store.kind} store${opts.library ? ` for ${opts.library}` : ''}\n`);
      return;
    }
    process.stdout.write(`store: ${registry.store.kind}   (* = current, what the library's alias points at)\n`);
    for (const r of rows) {
      process.stdout.write(
        `${r.current ? '*' : ' '} ${r.version.padEnd(48)} ${String(r.points).padStart(7)}/${String(r.expected).padEnd(7)} ${r.status.padEnd(9)} ${r.embedder}  ${r.createdAt}\n`,
      );
    }
  });
}

async function promoteCommand(opts: { library: string; version: string }): Promise<void> {
  await withRegistry(async (_cfg, registry) => {
    const before = await registry.store.getAlias(opts.library);
    await promoteVersion(registry.store, opts.library, opts.version).catch((err: Error) => fail(err.message));
    process.stdout.write(`${opts.library}: ${before ?? '(none)'} → ${opts.version}\n`);
  });
}

/** How `index search` ranks: for a person (the default, as the API and MCP search), as a
 * monolithic run's retrieval does (usage prior, analogy), or the store's own. */
const SEARCH_RANKINGS = ['name', 'run', 'store'] as const;
type SearchRanking = (typeof SEARCH_RANKINGS)[number];

async function searchCommand(
  query: string,
  opts: { library?: string; k: number; theorems?: boolean; version?: string; json?: boolean; rerank: boolean; ranking: SearchRanking },
): Promise<void> {
  // --no-rerank, from before --ranking: the store's own ranking.
  const ranking: SearchRanking = opts.rerank === false ? 'store' : opts.ranking;
  await withRegistry(async (cfg, registry) => {
    const library = opts.library ?? cfg.libraries[0]!.name;
    let index: PremiseIndex;
    let version: string;
    try {
      if (opts.version) version = opts.version;
      else {
        const current = await registry.store.getAlias(library);
        if (!current)
          fail(`library ${library} has no index yet; build one with \`driftline index build --library ${library} --corpus FILE\``);
        version = current;
      }
      index = ranking === 'run' ? await registry.wrappedVersion(version) : await registry.openVersion(version);
    } catch (err) {
      fail((err as Error).message);
    }
    const role = opts.theorems ? 'theorem' : 'premise';
    const hits =
      ranking === 'name'
        ? await searchInteractive(index, query, opts.k, { role })
        : role === 'theorem'
          ? await index.searchTheorems(query, opts.k)
          : await index.searchPremises(query, opts.k);
    if (opts.json) {
      process.stdout.write(
        `${JSON.stringify({ version: version, kind: index.kind, ranking, hits: hits.map((h) => ({ name: h.decl.name, kind: h.decl.kind, score: h.score })) }, null, 2)}\n`,
      );
      return;
    }
    process.stdout.write(`${version} (${index.kind}), ${opts.theorems ? 'theorems' : 'premises'}, ranked ${RANKING_WORDS[ranking]}:\n`);
    hits.forEach((h, i) => {
      const sig = h.decl.signature.replace(/\s+/g, ' ').slice(0, 100);
      process.stdout.write(`${String(i + 1).padStart(3)}. ${h.score.toFixed(4)}  ${h.decl.name}  [${h.decl.kind}]\n       ${sig}\n`);
    });
    if (hits.length === 0) process.stdout.write('  (no matches)\n');
  });
}

const RANKING_WORDS: Record<SearchRanking, string> = {
  name: 'for a person (name matches first)',
  run: "as a run's retrieval (usage prior, analogy)",
  store: "by the store's own score",
};

export function registerIndexCommands(program: Command): void {
  const index = program.command('index').description('premise indexes: build (durably), list versions, promote, search');
  index
    .command('build')
    .description('build an index version of a library as a durable workflow, then point the library at it')
    .requiredOption('-l, --library <name>', 'library name')
    .requiredOption('-c, --corpus <file>', 'corpus JSONL (our format or RAutoformalizer), as the workers see it')
    .option('--chunk-size <n>', 'declarations per activity (default 1000)', positive)
    .option('--batch-size <n>', 'declarations per embed + upsert batch (default 128)', positive)
    .option('--skip-bad-lines', 'skip corpus lines that do not parse instead of failing the build')
    .option('--no-promote', 'build only; promote later with `index promote`')
    .option('--no-wait', 'start the build and print its workflow ID')
    .action(buildCommand);
  index
    .command('list')
    .description('list index versions (current one starred)')
    .option('-l, --library <name>', 'only this library')
    .option('--json', 'print JSON')
    .action(listCommand);
  index
    .command('promote')
    .description("move a library's alias to a complete version (atomically)")
    .requiredOption('-l, --library <name>', 'library name')
    .requiredOption('-v, --version <version>', 'version to use')
    .action(promoteCommand);
  index
    .command('search')
    .description("search a library's current index")
    .argument('<query>', 'text or Lean to search for')
    .option('-l, --library <name>', 'library (default: the first configured)')
    .option('-k, --k <k>', 'how many results', positive, 10)
    .option('--theorems', 'search theorems (examples) instead of premises')
    .option('--version <version>', 'search this version instead of the current one')
    .addOption(
      new Option(
        '--ranking <ranking>',
        "name: for a person, name matches first; run: as a run's retrieval (usage prior, analogy); store: the store's own",
      )
        .choices(SEARCH_RANKINGS)
        .default('name'),
    )
    .option('--no-rerank', 'the same as --ranking store')
    .option('--json', 'print JSON')
    .action(searchCommand);
}
