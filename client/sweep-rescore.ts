// Starting a rescore: a finished sweep judged again by another judge, as a sweep of its own
// (`driftline sweep rescore SOURCE --id NEW --judge PROVIDER[:MODEL]`). Its cells mirror the
// source's configurations with the judge moved; its units are `rejudge` children that read the
// source's records. Shared by the CLI and the HTTP API.
import { createHash } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { TypedSearchAttributes } from '@temporalio/common';
import { LIBRARY_KEY, SWEEP_KEY } from '../common/search-attributes';
import { MAIN_TASK_QUEUE } from '../common/activities';
import type { LlmCallPolicy } from '../common/llm-call-policy';
import { runProvidersProblem } from '../common/run-config';
import { judgeLabel, rescoreConfig, type JudgeChoice, type RescoreSpec } from '../common/rescore';
import type { SweepCell, SweepInput } from '../common/sweep';
import { canonicalJson } from '../engines/sweeps/config-hash';
import type { ResultsDb, SweepRow } from '../engines/results/results-db';
import type { SweepSpec } from '../engines/sweeps/sweep-file';
import { getSweepProgress, SWEEP_ID, SweepRequestError, workflowExists, type StartedSweep } from './sweeps';

/** A rescore that cannot start as asked; `status` says whose move it is (400: the request,
 * 404: no such source, 409: the source has not finished). */
export class RescoreRequestError extends SweepRequestError {
  override name = 'RescoreRequestError';
  constructor(
    message: string,
    readonly status: 400 | 404 | 409 = 400,
  ) {
    super(message);
  }
}

/** The most text a rubric file may hold: it is sent with every judge call. */
export const MAX_RUBRIC_CHARS = 16_000;

export interface StartRescoreOptions {
  id: string;
  judge: JudgeChoice;
  /** faithful = compiled ∧ grade ≥ threshold (0–10). */
  threshold: number;
  equivalence?: boolean;
  /** A rubric replacing the judge's instructions: its file's name and text. */
  rubric?: { file: string; text: string };
  /** The deployment's provider names: a judge on any other is refused before anything starts. */
  providerNames: readonly string[];
  /** Units in flight at once (default: the source's window). */
  window?: number;
  taskQueue?: string;
  leanTaskQueue?: string;
  historyLimit?: number;
  llm?: LlmCallPolicy;
}

/** Why a rubric's text cannot be used, or null. */
export function rubricProblem(text: string): string | null {
  if (text.trim() === '') return 'the rubric is empty';
  if (text.length > MAX_RUBRIC_CHARS) return `the rubric has ${text.length} characters; at most ${MAX_RUBRIC_CHARS}`;
  if (text.includes('\u0000')) return 'the rubric is not text (it holds a NUL character)';
  return null;
}

/** A rescore cell's hash: its source cell's, and the judge choice (so `--reuse` never takes a
 * rescored cell for a generated one, nor one judge's for another's). */
function rescoreCellHash(sourceHash: string, spec: RescoreSpec): string {
  const identity = {
    source: sourceHash,
    judge: spec.judge,
    threshold: spec.threshold,
    equivalence: spec.equivalence,
    rubric: spec.rubric?.sha256 ?? null,
  };
  return createHash('sha256').update(canonicalJson(identity)).digest('hex').slice(0, 16);
}

/** What a request to start `id` asks differently from the rescore stored under it. */
function rescoreDifferences(stored: SweepRow, wanted: RescoreSpec): string[] {
  const had = (stored.spec as { rescore?: RescoreSpec } | undefined)?.rescore;
  if (!had) return ['(the ID belongs to a sweep that is not a rescore)'];
  const out: string[] = [];
  if (had.of !== wanted.of) out.push('source');
  if (judgeLabel(had.judge) !== judgeLabel(wanted.judge)) out.push('judge');
  if (had.threshold !== wanted.threshold) out.push('threshold');
  if (had.equivalence !== wanted.equivalence) out.push('equivalence');
  if ((had.rubric?.sha256 ?? null) !== (wanted.rubric?.sha256 ?? null)) out.push('rubric');
  return out;
}

/** Records the rescore sweep (the source's items, its cells with the judge moved) and starts
 * its `sweep` workflow; an ID that exists answers with the existing sweep. Refuses a source
 * that is unknown or still running, and a judge on a provider that is not configured. */
export async function startRescore(client: Client, db: ResultsDb, sourceId: string, options: StartRescoreOptions): Promise<StartedSweep> {
  const { id } = options;
  if (!SWEEP_ID.test(id))
    throw new RescoreRequestError(`sweep id "${id}": use letters, digits and . _ + = , - (no "/" or spaces), at most 100 characters`);
  const providerProblem = runProvidersProblem({ providers: { judge: options.judge.provider } }, [...options.providerNames]);
  if (providerProblem)
    throw new RescoreRequestError(`judge ${judgeLabel(options.judge)}: ${providerProblem.replace(/^"providers\.judge": /, '')}`);
  if (!Number.isInteger(options.threshold) || options.threshold < 0 || options.threshold > 10)
    throw new RescoreRequestError(`threshold ${options.threshold}: a grade from 0 to 10`);
  if (options.rubric) {
    const problem = rubricProblem(options.rubric.text);
    if (problem) throw new RescoreRequestError(`${options.rubric.file}: ${problem}`);
  }
  const source = await db.getSweep(sourceId);
  if (!source) throw new RescoreRequestError(`no sweep "${sourceId}" in the results database`, 404);
  const spec: RescoreSpec = {
    of: sourceId,
    judge: options.judge,
    threshold: options.threshold,
    equivalence: options.equivalence ?? false,
    ...(options.rubric ? { rubric: { ...options.rubric, sha256: createHash('sha256').update(options.rubric.text).digest('hex') } } : {}),
  };
  const cells: SweepCell[] = source.cells.map((c) => ({
    name: c.name,
    config: rescoreConfig(c.config, options.judge),
    hash: rescoreCellHash(c.hash, spec),
    ...(c.factors ? { factors: c.factors } : {}),
  }));
  const total = source.items * cells.length * source.samples;
  if (await workflowExists(client, id)) {
    const row = await db.getSweep(id);
    if (!row) return { id, existing: true, total, cells, reused: [], differences: ['(the ID belongs to a workflow that is not a sweep)'] };
    return {
      id,
      existing: true,
      total: row.items * row.cells.length * row.samples,
      cells: row.cells,
      reused: [],
      differences: rescoreDifferences(row, spec),
    };
  }
  const progress = await getSweepProgress(client, db, sourceId);
  if (progress && (progress.status === 'running' || progress.status === 'paused'))
    throw new RescoreRequestError(
      `sweep ${sourceId} is ${progress.status} (${progress.done}/${progress.total} runs done); rescore it once it has finished`,
      409,
    );
  const sourceSpec = (source.spec ?? {}) as Partial<SweepSpec>;
  const row: SweepRow = {
    id,
    library: source.library,
    indexVersion: source.indexVersion,
    leaveOut: source.leaveOut,
    samples: source.samples,
    items: source.items,
    cells,
    spec: { ...sourceSpec, id, rescore: spec },
    createdAt: new Date().toISOString(),
    rescoreOf: sourceId,
  };
  const { sweep } = await db.createSweep(row, await db.items(sourceId));
  const input: SweepInput = {
    sweepId: id,
    library: sweep.library,
    items: sweep.items,
    cells: sweep.cells,
    samples: sweep.samples,
    window: options.window ?? sourceSpec.window ?? 4,
    maxAttempts: sourceSpec.maxAttempts ?? 2,
    leaveOut: sweep.leaveOut,
    ...(sweep.indexVersion ? { indexVersion: sweep.indexVersion } : {}),
    ...(options.taskQueue ? { taskQueue: options.taskQueue } : {}),
    ...(options.leanTaskQueue ? { leanTaskQueue: options.leanTaskQueue } : {}),
    ...(options.historyLimit ? { historyLimit: options.historyLimit } : {}),
    ...(options.llm ? { llm: options.llm } : {}),
    rescore: { of: spec.of, judge: spec.judge, threshold: spec.threshold, equivalence: spec.equivalence },
  };
  try {
    await client.workflow.start('sweep', {
      workflowId: id,
      taskQueue: options.taskQueue ?? MAIN_TASK_QUEUE,
      args: [input],
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      memo: { library: sweep.library, cells: sweep.cells.map((c) => c.name).join(', '), items: sweep.items, rescoreOf: sourceId },
      staticSummary: `rescore of sweep ${sourceId} by the judge ${judgeLabel(spec.judge)} (faithful: grade ≥ ${spec.threshold})`,
      typedSearchAttributes: new TypedSearchAttributes([
        { key: SWEEP_KEY, value: id },
        { key: LIBRARY_KEY, value: sweep.library },
      ]),
    });
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError)
      return { id, existing: true, total, cells: sweep.cells, reused: [], differences: rescoreDifferences(sweep, spec) };
    throw err;
  }
  return { id, existing: false, total, cells: sweep.cells, reused: [] };
}
