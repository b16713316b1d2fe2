// `driftline sweep retry`: start the failed units of a finished sweep again. The sweep workflow
// is started once more under the sweep's own ID, with the input its last run had and a retry
// round naming the failed units (the workflow's ledger makes its cursor from it); each one's
// child keeps its workflow ID (a failed child may run again under it), and its record replaces
// the failed one, so each unit keeps one record.
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import { TypedSearchAttributes } from '@temporalio/common';
import { LIBRARY_KEY, SWEEP_KEY } from '../common/search-attributes';
import type { SweepInput, SweepProgress, SweepRetryRequest } from '../common/sweep';
import { encodeUnit, totalUnits } from '../common/sweep-ledger';
import type { ResultsDb } from '../engines/results/results-db';
import { getSweepProgress } from './sweeps';

export interface RetrySweepOptions {
  /** History events before the retry round continues as new (tests use a small one). */
  historyLimit?: number;
}

export interface RetriedSweep {
  id: string;
  /** The retry round started (1 for the sweep's first); null when nothing had failed. */
  round: number | null;
  /** Units started again: the sweep's failed runs (0: nothing started). */
  retried: number;
  /** The same per configuration (configurations with none left out). */
  perConfig: Record<string, number>;
  /** Units of the sweep. */
  total: number;
}

/** Why a sweep cannot be retried; `notFound`: there is no such sweep. */
export class SweepRetryError extends Error {
  override name = 'SweepRetryError';
  constructor(
    message: string,
    readonly notFound = false,
  ) {
    super(message);
  }
}

/** The input the sweep workflow's latest run was started with (the first event of its history),
 * or null when that run is not a `sweep` workflow. */
async function lastRunInput(client: Client, id: string, runId: string): Promise<SweepInput | null> {
  const page = await client.workflowService.getWorkflowExecutionHistory({
    namespace: client.options.namespace,
    execution: { workflowId: id, runId },
    maximumPageSize: 1,
  });
  const started = page.history?.events?.[0]?.workflowExecutionStartedEventAttributes;
  if (started?.workflowType?.name !== 'sweep') return null;
  const payload = started.input?.payloads?.[0];
  if (!payload) return null;
  return client.options.loadedDataConverter.payloadConverter.fromPayload<SweepInput>(payload);
}

/** Starts the failed units of sweep `id` again, once its workflow has ended (completed or
 * cancelled). Refused (a SweepRetryError) for an unknown sweep, one still running, one whose
 * workflow failed, and one whose LLM budget is spent. Units a cancelled sweep never ran are not
 * failed ones: a retry leaves them unrun. */
export async function retrySweep(client: Client, db: ResultsDb, id: string, options: RetrySweepOptions = {}): Promise<RetriedSweep> {
  const row = await db.getSweep(id);
  if (!row) throw new SweepRetryError(`no sweep "${id}" in the results database`, true);
  const handle = client.workflow.getHandle(id);
  let description;
  try {
    description = await handle.describe();
  } catch (err) {
    if (err instanceof WorkflowNotFoundError)
      throw new SweepRetryError(
        `sweep ${id} has no workflow in Temporal (it never started, or its history is gone); nothing to retry from`,
      );
    throw err;
  }
  const progress: SweepProgress | null = await getSweepProgress(client, db, id);
  if (description.status.name === 'RUNNING' || progress?.status === 'running' || progress?.status === 'paused')
    throw new SweepRetryError(
      `sweep ${id} is still ${progress?.status ?? 'running'}; retry it once it has ended (driftline sweep status ${id} --watch), or cancel it first`,
    );
  if (progress?.status === 'failed')
    throw new SweepRetryError(
      `sweep ${id}'s workflow failed (see it in the Temporal UI); retry is for a sweep that completed or was cancelled`,
    );
  if (progress?.status === 'budget-exhausted')
    throw new SweepRetryError(
      `sweep ${id} ended with its LLM budget spent (${progress.budget?.reached ?? 'budget reached'}); a retry would run past it`,
    );
  const input = await lastRunInput(client, id, description.runId);
  if (!input) throw new SweepRetryError(`the workflow "${id}" is not a sweep; nothing to retry`);

  const failed = await db.failedRuns(id);
  const total = totalUnits(input);
  if (failed.length === 0) return { id, round: null, retried: 0, perConfig: {}, total };

  // The failed units by their coordinates; the workflow's ledger turns them into its cursor.
  const ord = new Map((await db.items(id)).map((item, i) => [item.id, i]));
  const attempts = new Map<string, number>();
  for (const f of await db.failures(id)) attempts.set(f.workflowId, Math.max(attempts.get(f.workflowId) ?? 0, f.attempt));
  const units: SweepRetryRequest['units'] = [];
  const perConfig: Record<string, number> = {};
  let firstRetries = 0;
  for (const r of failed) {
    const item = ord.get(r.item);
    if (item === undefined || encodeUnit(input, item, r.config, r.sample) === undefined)
      throw new SweepRetryError(`sweep ${id}: the failed run ${r.workflowId} is not a unit of the sweep's workflow input`);
    // Attempts count on from the unit's earlier ones, so every failed attempt keeps its note.
    units.push({ item, cell: r.config, sample: r.sample, attemptsBefore: attempts.get(r.workflowId) ?? 0 });
    perConfig[r.config] = (perConfig[r.config] ?? 0) + 1;
    if (!r.retryRound) firstRetries++;
  }

  const stored = await db.counts(id);
  const round = (await db.lastRetryRound(id)) + 1;
  // The counters are the database's: a retried unit stays done and failed until its new record
  // replaces the failed one (the workflow then counts a success off `failed`).
  const counts: SweepRetryRequest['counts'] = {};
  let recorded = 0;
  for (const cell of input.cells) {
    const c = stored[cell.name] ?? { done: 0, failed: 0, retried: 0 };
    recorded += c.done;
    const firstTime = failed.filter((r) => r.config === cell.name && !r.retryRound).length;
    counts[cell.name] = { done: c.done, failed: c.failed, retried: c.retried + firstTime };
  }
  const rate = progress?.rate ?? 0;
  const retryRound: SweepRetryRequest = {
    round,
    units,
    counts,
    retries: progress?.retries ?? 0,
    // The sweep's rate stays its own: the time it ran so far, from its last answer.
    activeMs: rate > 0 && progress ? Math.round((progress.done / rate) * 1000) : 0,
    startedAt: progress?.startedAt ?? row.createdAt,
    ...(recorded < total ? { incomplete: true } : {}),
  };
  const { cursor: _previous, retryRound: _earlier, ...base } = input;
  try {
    await client.workflow.start('sweep', {
      workflowId: id,
      taskQueue: description.taskQueue,
      args: [{ ...base, ...(options.historyLimit ? { historyLimit: options.historyLimit } : {}), retryRound }],
      // The sweep has ended (checked above): its ID may start again, but never beside a running one.
      workflowIdReusePolicy: 'ALLOW_DUPLICATE',
      workflowIdConflictPolicy: 'FAIL',
      memo: { library: input.library, cells: input.cells.map((c) => c.name).join(', '), items: input.items, retryRound: round },
      staticSummary: `retry ${round} of sweep ${id}: ${units.length} failed run${units.length === 1 ? '' : 's'} started again (${firstRetries} for the first time)`,
      typedSearchAttributes: new TypedSearchAttributes([
        { key: SWEEP_KEY, value: id },
        { key: LIBRARY_KEY, value: input.library },
      ]),
    });
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError)
      throw new SweepRetryError(`sweep ${id} is running again (started just now by someone else); nothing new started`);
    throw err;
  }
  return { id, round, retried: units.length, perConfig, total };
}
