// What a sweep's report is made from: its row in the results database (benchmark, library,
// index version, configurations, factorial design) and its finished runs. Shared by
// `driftline sweep report` and `GET /v1/sweeps/:id/report`.
import { sweepBatchCounts } from '../engines/results/llm-batches';
import type { FactorialDesign, SweepCell } from '../common/sweep';
import type { ResultsDb, SweepRow } from '../engines/results/results-db';
import type { SweepReportInput } from '../engines/report/write-report';
import type { SweepSpec } from '../engines/sweeps/sweep-file';
import { SqlReplyLedger } from '../engines/results/llm-ledger';
import { SCREEN_VERSION } from '../engines/lean/statement-safety';
import { resolveRunConfig } from '../common/run-config';
import { judgeLabel, type RescoreSpec } from '../common/rescore';
import type { RescoreMeta } from '../engines/report/judge-agreement';
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';

const ROOT = new URL('../', import.meta.url);

/** `driftline 0.1.0 (commit 1a2b3c4)`: the package's version, and the checkout's commit where
 * there is one (read from .git, no git process). */
export function softwareVersion(): string {
  let version = '?';
  try {
    version = (JSON.parse(readFileSync(new URL('package.json', ROOT), 'utf8')) as { version?: string }).version ?? '?';
  } catch {
    // a bundled copy without package.json
  }
  let commit: string | undefined;
  try {
    const head = readFileSync(new URL('.git/HEAD', ROOT), 'utf8').trim();
    const ref = /^ref: (.+)$/.exec(head)?.[1];
    commit = ref ? readFileSync(new URL(`.git/${ref}`, ROOT), 'utf8').trim() : head;
  } catch {
    // not a git checkout, or the ref is packed
  }
  return `driftline ${version}${commit && /^[0-9a-f]{40}$/.test(commit) ? ` (commit ${commit.slice(0, 12)})` : ''}`;
}

const LOW_WORDS = new Set(['off', 'false', 'no', 'without', 'none', '0']);

/** The 2^n design of a sweep's factorial cells: every factor with exactly two levels, the level
 * that reads as "off" (or else the first declared) as 0. Undefined when the cells are not a
 * full 2^n design. */
export function factorialDesign(row: Pick<SweepRow, 'cells'>): FactorialDesign | undefined {
  const cells = row.cells.filter((c) => c.factors && Object.keys(c.factors).length > 0);
  if (cells.length === 0) return undefined;
  const names = Object.keys(cells[0]!.factors!);
  const factors: FactorialDesign['factors'] = [];
  const levelOf: Record<string, Record<string, 0 | 1>> = {};
  for (const name of names) {
    const levels = [...new Set(cells.map((c) => c.factors![name]!))];
    if (levels.length !== 2) return undefined;
    const low = levels.find((l) => LOW_WORDS.has(l.toLowerCase())) ?? levels[0]!;
    const high = levels.find((l) => l !== low)!;
    factors.push({ name, low, high });
    levelOf[name] = { [low]: 0, [high]: 1 };
  }
  if (cells.length !== 2 ** names.length) return undefined;
  return {
    factors,
    cells: Object.fromEntries(cells.map((c) => [c.name, Object.fromEntries(names.map((n) => [n, levelOf[n]![c.factors![n]!]!]))])),
  };
}

function describeBenchmarks(spec: Partial<SweepSpec> | undefined): string | undefined {
  if (!spec?.benchmarks?.length) return undefined;
  return spec.benchmarks
    .map((b) => {
      const sel = [
        b.ids ? `${b.ids.length} ids` : '',
        b.offset ? `offset ${b.offset}` : '',
        b.limit ? `limit ${b.limit}` : '',
        b.seed !== undefined ? `seed ${b.seed}` : '',
      ].filter(Boolean);
      return `${b.path} (${b.format}${sel.length ? `; ${sel.join(', ')}` : ''})`;
    })
    .join('; ');
}

function describeCell(cell: SweepCell, spec: Partial<SweepSpec> | undefined): unknown {
  const config = resolveRunConfig(cell.config);
  if (!cell.predictionsFile) return config;
  const file = spec?.configurations?.find((c) => c.name === cell.name)?.predictions;
  return {
    predictions: {
      ...(file ? { file: basename(file.path), fields: file.fields } : {}),
      sha256: cell.predictionsFile.sha256,
      statements: cell.predictionsFile.statements,
    },
    judge: config.judge,
    ...(config.models?.judge ? { models: { judge: config.models.judge } } : {}),
    ...(config.providers?.judge ? { providers: { judge: config.providers.judge } } : {}),
  };
}

/** A rescore as its report states it, with the source's judge from the source's ledger. */
async function rescoreMeta(ledger: SqlReplyLedger, r: RescoreSpec | undefined): Promise<RescoreMeta | undefined> {
  if (!r) return undefined;
  const judges = (await ledger.sweepModels(r.of)).filter((m) => m.stage === 'judge');
  return {
    of: r.of,
    judge: judgeLabel(r.judge),
    threshold: r.threshold,
    equivalence: r.equivalence,
    ...(r.rubric ? { rubric: r.rubric.file } : {}),
    ...(judges.length ? { sourceJudge: judges.map((m) => `${m.provider}/${m.model}`).join(', ') } : {}),
  };
}

/** The report's input for sweep `id`, or null when the results database has no such sweep. */
export async function sweepReportInput(
  db: ResultsDb,
  id: string,
  opts: { status?: string; temporalUi?: { base: string; namespace: string } } = {},
): Promise<SweepReportInput | null> {
  const row = await db.getSweep(id);
  if (!row) return null;
  const spec = row.spec as Partial<SweepSpec> | undefined;
  const design = factorialDesign(row);
  const benchmark = describeBenchmarks(spec);
  const ledger = new SqlReplyLedger(db.driver);
  const rescore = await rescoreMeta(ledger, (row.spec as { rescore?: RescoreSpec } | undefined)?.rescore);
  const seeds = spec?.benchmarks
    ?.filter((b) => b.seed !== undefined)
    .map((b) => `benchmark selection ${b.seed}`)
    .join(', ');
  return {
    sweep: {
      id: row.id,
      ...(opts.status ? { status: opts.status } : {}),
      ...(benchmark ? { benchmark } : {}),
      library: row.library,
      ...(row.indexVersion ? { indexVersion: row.indexVersion } : {}),
      leaveOut: row.leaveOut,
      samples: row.samples,
      createdAt: row.createdAt,
      // Resolved with the defaults, so the report says what each configuration ran with; a
      // predictions configuration by its file and the judge settings that applied.
      configurations: Object.fromEntries(row.cells.map((c) => [c.name, describeCell(c, spec)])),
      ...(design ? { design } : {}),
      ...(row.indexVersion ? {} : { notes: ["index version: not pinned (the library alias's version at each run)"] }),
      models: await ledger.sweepModels(id),
      ...(rescore ? { rescore } : {}),
      software: softwareVersion(),
      screen: SCREEN_VERSION,
      ...(seeds ? { seeds } : {}),
      informal: Object.fromEntries((await db.items(id)).map((item) => [item.id, item.informal])),
    },
    records: await db.runs(id),
    llmCosts: await ledger.sweepRunCosts(id),
    batches: await sweepBatchCounts(db.driver, id),
    ...(opts.temporalUi ? { temporalUi: opts.temporalUi } : {}),
  };
}
