// Starting and reading sweeps through the Temporal client and the results database; shared by
// the CLI and the HTTP API so both name, record and report sweeps the same way.
import { randomBytes } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import { TypedSearchAttributes } from '@temporalio/common';
import { LIBRARY_KEY, SWEEP_KEY } from '../common/search-attributes';
import type { BenchmarkItem, SweepCell, SweepCounts, SweepInput, SweepProgress, SweepStatus } from '../common/sweep';
import { MAIN_TASK_QUEUE } from '../common/activities';
import { DEFAULT_LLM_CALL_POLICY, type LlmCallPolicy } from '../common/llm-call-policy';
import { DEFAULT_BATCH_WAIT_MS, LLM_BATCH_SIGNALS, LLM_BATCHER_WORKFLOW, type LlmBatchPolicy } from '../common/llm-batch';
import { configHash } from '../engines/sweeps/config-hash';
import type { SweepSpec } from '../engines/sweeps/sweep-file';
import type { ResultsDb, SweepRow } from '../engines/results/results-db';
import { unitWorkflowId } from '../common/sweep-ledger';
import type { PredictionSet } from '../engines/sweeps/predictions';

export interface StartSweepOptions {
  id?: string;
  /** Re-use the finished cells of this earlier sweep whose hash matches (same items, index version). */
  reuse?: string;
  /** The index version the library's alias names now (used when the sweep file pins none). */
  currentIndexVersion?: string;
  taskQueue?: string;
  leanTaskQueue?: string;
  /** History events before the sweep continues as new (tests use a small one). */
  historyLimit?: number;
  /** The workers' LLM settings (timeout, re-asks), handed to every run. */
  llm?: LlmCallPolicy;
  /** The files of the sweep's predictions configurations, read and checked (by configuration
   * name; engines/sweeps/predictions.ts). Every predictions configuration needs its set. */
  predictions?: ReadonlyMap<string, PredictionSet>;
}

export interface StartedSweep {
  id: string;
  /** The ID existed: nothing new was started. */
  existing: boolean;
  total: number;
  cells: SweepCell[];
  /** Cells whose results were copied from the `reuse` sweep. */
  reused: string[];
  /** When the ID existed: what the request asked differently from the existing sweep (sweep
   * file fields, e.g. `window`, `configurations.drift`); empty when it asked the same. */
  differences?: string[];
}

export class SweepRequestError extends Error {
  override name = 'SweepRequestError';
}

export const SWEEP_ID = /^[A-Za-z0-9][A-Za-z0-9._+=,-]{0,99}$/;

/** The LLM policy every run of the sweep is handed: the workers' settings, and in batch mode
 * the sweep's batchers. */
function runLlmPolicy(id: string, spec: SweepSpec, llm: LlmCallPolicy | undefined): { llm?: LlmCallPolicy } {
  if (!spec.llm?.batch) return llm ? { llm } : {};
  const batch: LlmBatchPolicy = {
    sweep: id,
    waitMs: DEFAULT_BATCH_WAIT_MS,
    ...(spec.llm.resubmits !== undefined ? { resubmits: spec.llm.resubmits } : {}),
  };
  return { llm: { ...(llm ?? DEFAULT_LLM_CALL_POLICY), batch } };
}

export function newSweepId(now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace(/\..*$/, '').replace('T', '-');
  return `sweep-${stamp}-${randomBytes(2).toString('hex')}`;
}

export function sweepCells(
  spec: SweepSpec,
  indexVersion: string | undefined,
  predictions: ReadonlyMap<string, PredictionSet> = new Map(),
): SweepCell[] {
  return spec.configurations.map((c) => {
    const set = predictions.get(c.name);
    if (c.predictions && !set) throw new SweepRequestError(`configurations.${c.name}: its predictions file was not read`);
    const file = c.predictions && set ? { sha256: set.sha256, fields: { ...c.predictions.fields } } : undefined;
    return {
      name: c.name,
      config: c.config,
      hash: configHash({
        config: c.config,
        library: spec.library,
        indexVersion,
        leaveOut: spec.leaveOut,
        ...(file ? { predictions: file } : {}),
      }),
      ...(c.factors ? { factors: c.factors } : {}),
      ...(set && c.predictions ? { predictionsFile: { sha256: set.sha256, statements: set.entries.length } } : {}),
    };
  });
}

export async function workflowExists(client: Client, id: string): Promise<boolean> {
  try {
    await client.workflow.getHandle(id).describe();
    return true;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return false;
    throw err;
  }
}

/** Copies the records of finished, identical cells of `from` into sweep `to`; returns the
 * names of the cells copied. Identical: same config hash (configuration, library, index
 * version, leave-out), the same items in the same order, the same number of samples. */
async function reuseCells(db: ResultsDb, to: SweepRow, items: BenchmarkItem[], fromId: string): Promise<string[]> {
  const from = await db.getSweep(fromId);
  if (!from) throw new SweepRequestError(`--reuse ${fromId}: no such sweep in the results database`);
  if (from.samples !== to.samples) return [];
  const fromItems = await db.items(fromId);
  if (fromItems.length !== items.length || fromItems.some((item, i) => item.id !== items[i]!.id)) return [];
  const counts = await db.counts(fromId);
  const reused: string[] = [];
  for (const cell of to.cells) {
    const match = from.cells.find((c) => c.hash === cell.hash);
    if (!match) continue;
    const c = counts[match.name];
    // Finished: every unit recorded, none failed.
    if (!c || c.done !== items.length * from.samples || c.failed > 0) continue;
    for (const { retryRound: _retried, ...record } of await db.runs(fromId, match.name)) {
      await db.recordRun({
        ...record,
        sweepId: to.id,
        config: cell.name,
        workflowId: unitWorkflowId(to.id, cell.name, record.item, record.sample),
        reusedFrom: record.workflowId,
      });
    }
    reused.push(cell.name);
  }
  return reused;
}

/** Records the sweep and its items, then starts the `sweep` workflow. Starting an ID that
 * exists answers with the existing sweep. */
export async function startSweep(
  client: Client,
  db: ResultsDb,
  spec: SweepSpec,
  items: BenchmarkItem[],
  options: StartSweepOptions = {},
): Promise<StartedSweep> {
  const id = options.id ?? spec.id ?? newSweepId();
  if (!SWEEP_ID.test(id))
    throw new SweepRequestError(`sweep id "${id}": use letters, digits and . _ + = , - (no "/" or spaces), at most 100 characters`);
  const indexVersion = spec.indexVersion ?? options.currentIndexVersion;
  const predictions = options.predictions ?? new Map<string, PredictionSet>();
  const cells = sweepCells(spec, indexVersion, predictions);
  const total = items.length * cells.length * spec.samples;
  if (await workflowExists(client, id)) {
    const row = await db.getSweep(id);
    if (!row) return { id, existing: true, total, cells, reused: [], differences: ['(the ID belongs to a workflow that is not a sweep)'] };
    return {
      id,
      existing: true,
      total: row.items * row.cells.length * row.samples,
      cells: row.cells,
      reused: [],
      differences: [...sweepSpecDifferences(row.spec, spec), ...predictionFileDifferences(row.cells, cells)],
    };
  }
  const row: SweepRow = {
    id,
    library: spec.library,
    indexVersion: indexVersion ?? null,
    leaveOut: spec.leaveOut,
    samples: spec.samples,
    items: items.length,
    cells,
    spec,
    createdAt: new Date().toISOString(),
  };
  // A sweep recorded by an earlier attempt whose workflow never started keeps its first record.
  const { sweep } = await db.createSweep(row, items, new Map([...predictions].map(([name, set]) => [name, set.entries])));
  const storedItems = sweep.items === items.length ? items : await db.items(id);
  const reused = options.reuse ? await reuseCells(db, sweep, storedItems, options.reuse) : [];
  const input: SweepInput = {
    sweepId: id,
    library: sweep.library,
    items: sweep.items,
    cells: sweep.cells,
    samples: sweep.samples,
    window: spec.window,
    maxAttempts: spec.maxAttempts,
    leaveOut: sweep.leaveOut,
    ...(sweep.indexVersion ? { indexVersion: sweep.indexVersion } : {}),
    ...(options.taskQueue ? { taskQueue: options.taskQueue } : {}),
    ...(options.leanTaskQueue ? { leanTaskQueue: options.leanTaskQueue } : {}),
    ...(options.historyLimit ? { historyLimit: options.historyLimit } : {}),
    ...runLlmPolicy(id, spec, options.llm),
    ...(reused.length ? { reusedCells: reused } : {}),
    ...(spec.budget ? { budget: spec.budget } : {}),
  };
  try {
    await client.workflow.start('sweep', {
      workflowId: id,
      taskQueue: options.taskQueue ?? MAIN_TASK_QUEUE,
      args: [input],
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      memo: { library: sweep.library, cells: sweep.cells.map((c) => c.name).join(', '), items: sweep.items },
      staticSummary: `sweep of ${sweep.items} items × ${sweep.cells.length} configurations × ${sweep.samples} samples`,
      typedSearchAttributes: new TypedSearchAttributes([
        { key: SWEEP_KEY, value: id },
        { key: LIBRARY_KEY, value: sweep.library },
      ]),
    });
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError)
      return {
        id,
        existing: true,
        total,
        cells: sweep.cells,
        reused: [],
        differences: [...sweepSpecDifferences(sweep.spec, spec), ...predictionFileDifferences(sweep.cells, cells)],
      };
    throw err;
  }
  return { id, existing: false, total, cells: sweep.cells, reused };
}

/** JSON with object keys sorted, so equal specs compare equal whatever their key order. */
function canonical(value: unknown): string {
  return JSON.stringify(value ?? null, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as object).sort(([a], [b]) => a.localeCompare(b)))
      : v,
  );
}

/** The sweep-file fields in which `wanted` differs from the stored spec of an existing sweep
 * (its ID aside): `benchmark`, `library`, `window`, `configurations.NAME`, … */
export function sweepSpecDifferences(stored: unknown, wanted: SweepSpec): string[] {
  const had = (stored ?? {}) as Partial<SweepSpec>;
  const differences: string[] = [];
  const same = (a: unknown, b: unknown) => canonical(a) === canonical(b);
  if (!same(had.benchmarks, wanted.benchmarks)) differences.push('benchmark');
  for (const key of ['library', 'indexVersion', 'samples', 'window', 'leaveOut'] as const)
    if (!same(had[key], wanted[key])) differences.push(key);
  if (!same(had.maxAttempts, wanted.maxAttempts)) differences.push('retry.maxAttempts');
  const before = new Map((had.configurations ?? []).map((c) => [c.name, c]));
  const after = new Map(wanted.configurations.map((c) => [c.name, c]));
  for (const name of new Set([...before.keys(), ...after.keys()])) {
    const a = before.get(name);
    const b = after.get(name);
    if (!a || !b || !same(a.config, b.config) || !same(a.factors, b.factors) || !same(a.predictions, b.predictions))
      differences.push(`configurations.${name}`);
  }
  if (differences.length === 0 && !same([...before.keys()], [...after.keys()])) differences.push('configurations (order)');
  return differences;
}

/** Predictions configurations whose file's content differs from the existing sweep's (the same
 * path may hold another file now). */
function predictionFileDifferences(stored: readonly SweepCell[], wanted: readonly SweepCell[]): string[] {
  return wanted
    .filter(
      (c) =>
        c.predictionsFile &&
        stored.some((s) => s.name === c.name && s.predictionsFile && s.predictionsFile.sha256 !== c.predictionsFile!.sha256),
    )
    .map((c) => `configurations.${c.name} (its predictions file changed)`);
}

const QUERY_TIMEOUT_MS = 2000;

/** A sweep's progress: the workflow's own answer while it runs (or its result once done); from
 * the results database when no worker answers. Null when no such sweep exists. */
export async function getSweepProgress(client: Client, db: ResultsDb, id: string): Promise<SweepProgress | null> {
  const row = await db.getSweep(id);
  const handle = client.workflow.getHandle(id);
  let status: string;
  try {
    status = (await handle.describe()).status.name;
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
    if (!row) return null;
    return fromDatabase(db, row, 'failed');
  }
  if (status === 'RUNNING') {
    const answer = await Promise.race([
      handle.query<SweepProgress>('progress').catch(() => null),
      new Promise<null>((resolve) => setTimeout(() => resolve(null), QUERY_TIMEOUT_MS).unref()),
    ]);
    if (answer) return answer;
    return row ? fromDatabase(db, row, 'running') : null;
  }
  if (status === 'COMPLETED') return (await handle.result()) as SweepProgress;
  const mapped: SweepStatus = status === 'CANCELLED' || status === 'CANCELED' || status === 'TERMINATED' ? 'cancelled' : 'failed';
  return row ? fromDatabase(db, row, mapped) : null;
}

async function fromDatabase(db: ResultsDb, row: SweepRow, status: SweepStatus): Promise<SweepProgress> {
  const counts = await db.counts(row.id);
  const perConfig: Record<string, SweepCounts> = {};
  // Retried units are shown once the sweep has been retried (as the workflow answers them).
  const retried = Object.values(counts).some((c) => c.retried > 0);
  for (const cell of row.cells) {
    const c = counts[cell.name] ?? { done: 0, failed: 0, retried: 0 };
    perConfig[cell.name] = {
      total: row.items * row.samples,
      done: c.done,
      failed: c.failed,
      running: 0,
      ...(retried ? { retried: c.retried } : {}),
    };
  }
  const sum = (k: 'done' | 'failed') => Object.values(perConfig).reduce((a, c) => a + c[k], 0);
  return {
    sweepId: row.id,
    status,
    total: row.items * row.cells.length * row.samples,
    done: sum('done'),
    failed: sum('failed'),
    running: 0,
    perConfig,
    retries: 0,
    ...(retried ? { retried: Object.values(perConfig).reduce((a, c) => a + (c.retried ?? 0), 0) } : {}),
    rate: 0,
    etaSeconds: null,
    generation: 0,
    startedAt: row.createdAt,
  };
}

/** Sends `pause`, `resume` or `cancel` to a running sweep. */
/** A signal found the sweep's workflow closed: it ended after the caller last saw it running. */
export class SweepEndedError extends Error {
  override name = 'SweepEndedError';
}

/** A cancelled sweep's batches are cancelled at the provider: its batchers are told (the
 * withdrawn calls of its cancelled runs would tell them too, one by one). */
async function cancelSweepBatchers(client: Client, id: string): Promise<void> {
  if (!SWEEP_ID.test(id)) return;
  const query = `WorkflowType = '${LLM_BATCHER_WORKFLOW}' AND ${SWEEP_KEY.name} = '${id}' AND ExecutionStatus = 'Running'`;
  for await (const batcher of client.workflow.list({ query })) {
    await client.workflow
      .getHandle(batcher.workflowId)
      .signal(LLM_BATCH_SIGNALS.cancel)
      .catch(() => undefined); // it ended meanwhile
  }
}

export async function signalSweep(client: Client, id: string, signal: 'pause' | 'resume' | 'cancel'): Promise<void> {
  try {
    await client.workflow.getHandle(id).signal(signal);
    if (signal === 'cancel') await cancelSweepBatchers(client, id);
  } catch (err) {
    // Callers check the status first; a resumed sweep may still finish before the signal lands.
    if (err instanceof WorkflowNotFoundError) throw new SweepEndedError(`sweep "${id}" has ended (just now); it cannot ${signal}`);
    throw err;
  }
}
