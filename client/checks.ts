// Batch checks (workflow `checkStatements`): start, read, list and follow, through the Temporal
// client. One code path for the API (POST /v1/checks), the CLI (`driftline check`) and the MCP
// tool `check_lean`. Every statement and gold is screened here before the batch starts: a refused
// one becomes its result (`status: 'refused'`, with the reason) and never reaches a Lean worker,
// which screens what it is sent again anyway.
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { SafetyPolicy } from '../engines/lean/statement-safety';
import { describeRefusal, screenText } from '../engines/lean/screen-text';
import {
  CHECK_FINISHED_QUERY,
  CHECK_PROGRESS_QUERY,
  type CheckFinished,
  type CheckItem,
  type CheckItemResult,
  type CheckProgress,
  type CheckStatementsInput,
  type CheckStatementsResult,
} from '../common/checks';
import { MAIN_TASK_QUEUE } from '../common/activities';
import { checksDomain } from '../common/trust-domain';
import { describeIf, statusOf } from './runs';

export const CHECK_WORKFLOW_TYPE = 'checkStatements';
/** The most statements one batch may hold. */
export const MAX_CHECK_STATEMENTS = 500;

export type CheckStatus = 'running' | 'completed' | 'failed' | 'canceled';

export interface StartChecksOptions {
  /** The main task queue the workflow runs on (default `driftline`). */
  taskQueue?: string;
  /** The Lean task queue the checks go to (default `lean`). */
  leanTaskQueue?: string;
  screenPolicy?: SafetyPolicy;
  /** The workflow ID (default `checks-<uuid>`). */
  id?: string;
  staticSummary?: string;
  /** Whose texts these are (an API key's: `apiKeyDomain`); default the batch's own domain. */
  trustDomain?: string;
}

/** The statements as the workflow receives them: each screened, a refusal marked on its item. */
export function screenChecks(items: CheckItem[], policy?: SafetyPolicy): CheckItem[] {
  return items.map((item) => {
    const clean: CheckItem = {
      ...(item.id !== undefined ? { id: item.id } : {}),
      statement: item.statement,
      ...(item.gold !== undefined ? { gold: item.gold } : {}),
    };
    for (const [field, text] of [
      ['statement', item.statement],
      ['gold', item.gold],
    ] as const) {
      if (text === undefined) continue;
      // The statement is a formalizer's whole text (definitions, then the theorem).
      const screened = screenText({ statement: text, as: field === 'gold' ? 'gold' : 'formalizer' }, policy);
      if (!screened.accepted) return { ...clean, refused: { reason: describeRefusal(screened, field), message: screened.message } };
    }
    return clean;
  });
}

/** Starts a batch; answers its workflow ID. */
export async function startChecks(client: Client, items: CheckItem[], options: StartChecksOptions = {}): Promise<string> {
  const id = options.id ?? `checks-${randomUUID()}`;
  const input: CheckStatementsInput = {
    statements: screenChecks(items, options.screenPolicy),
    ...(options.leanTaskQueue ? { leanTaskQueue: options.leanTaskQueue } : {}),
    // A batch started without an API key is a domain of its own (common/trust-domain.ts).
    trustDomain: options.trustDomain ?? checksDomain(id),
  };
  await client.workflow.start(CHECK_WORKFLOW_TYPE, {
    workflowId: id,
    taskQueue: options.taskQueue ?? MAIN_TASK_QUEUE,
    args: [input],
    staticSummary: options.staticSummary ?? `check of ${items.length} Lean statement(s)`,
  });
  return id;
}

export interface ChecksView {
  id: string;
  status: CheckStatus;
  startedAt: string;
  closedAt?: string;
  total: number;
  done: number;
  /** One per statement, in the order given; once the batch has completed. */
  results?: CheckItemResult[];
  /** Why the batch failed or was canceled. */
  error?: string;
}

/** A batch's status and, when completed, its results; null when there is no such batch. */
export async function getChecks(client: Client, id: string): Promise<ChecksView | null> {
  const found = await describeIf(client, id, (type) => type === CHECK_WORKFLOW_TYPE);
  if (!found) return null;
  const { handle, description } = found;
  const status = statusOf(description.status.name);
  const view: ChecksView = {
    id,
    status,
    startedAt: description.startTime.toISOString(),
    ...(description.closeTime ? { closedAt: description.closeTime.toISOString() } : {}),
    total: 0,
    done: 0,
  };
  if (status === 'completed') {
    const outcome = (await handle.result()) as CheckStatementsResult;
    return { ...view, total: outcome.results.length, done: outcome.results.length, results: outcome.results };
  }
  if (status === 'running') {
    const progress = await handle.query<CheckProgress>(CHECK_PROGRESS_QUERY).catch(() => null);
    return progress ? { ...view, total: progress.total, done: progress.done } : view;
  }
  const error = await handle.result().then(
    () => undefined,
    (err: Error) => ((err as { cause?: Error }).cause ?? err).message,
  );
  return { ...view, ...(error ? { error } : {}) };
}

export interface ChecksSummary {
  id: string;
  status: CheckStatus;
  startedAt: string;
  closedAt?: string;
}

/** Batches from Temporal's visibility store, newest first. */
export async function listChecks(client: Client, options: { limit?: number } = {}): Promise<ChecksSummary[]> {
  const items: ChecksSummary[] = [];
  const limit = options.limit ?? 20;
  for await (const execution of client.workflow.list({ query: `WorkflowType = '${CHECK_WORKFLOW_TYPE}'`, pageSize: limit })) {
    items.push({
      id: execution.workflowId,
      status: statusOf(execution.status.name),
      startedAt: execution.startTime.toISOString(),
      ...(execution.closeTime ? { closedAt: execution.closeTime.toISOString() } : {}),
    });
    if (items.length >= limit) break;
  }
  return items;
}

export type CheckEvent =
  | { type: 'check.finished'; seq: number; index: number; total: number; result: CheckItemResult }
  | { type: 'checks.completed'; seq: number; total: number; summary: ChecksSummaryCounts }
  | { type: 'checks.failed' | 'checks.canceled'; seq: number; error?: string };

export interface ChecksSummaryCounts {
  total: number;
  compiled: number;
  rejected: number;
  refused: number;
  failed: number;
  /** Not checked: no Lean is configured. */
  skipped: number;
  equivalent: number;
  notEquivalent: number;
}

export function summarizeChecks(results: CheckItemResult[]): ChecksSummaryCounts {
  return {
    total: results.length,
    compiled: results.filter((r) => r.compiled).length,
    rejected: results.filter((r) => r.status === 'error' || r.status === 'timeout').length,
    refused: results.filter((r) => r.status === 'refused').length,
    failed: results.filter((r) => r.status === 'failed').length,
    skipped: results.filter((r) => r.status === 'skipped').length,
    equivalent: results.filter((r) => r.equivalent === true).length,
    notEquivalent: results.filter((r) => r.equivalent === false).length,
  };
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });

/** A batch's progress: one event per finished statement (in the order they finished), then an
 * end event. `after` skips the first events (a reconnecting client's Last-Event-ID). Read by
 * polling the workflow's `checkFinished` query; once it has closed, from its result. */
export async function* followChecks(
  client: Client,
  id: string,
  options: { after?: number; signal?: AbortSignal; pollMs?: number } = {},
): AsyncGenerator<CheckEvent> {
  const handle = client.workflow.getHandle(id);
  // A batch has at most MAX_CHECK_STATEMENTS + 1 events: a reader's `after` past that is the end,
  // and the end event's number stays a small integer whatever it sent.
  let seq = Math.min(options.after ?? 0, MAX_CHECK_STATEMENTS + 1);
  while (!options.signal?.aborted) {
    const description = await handle.describe();
    const status = statusOf(description.status.name);
    if (status === 'running') {
      const finished = await handle.query<CheckFinished[], [number]>(CHECK_FINISHED_QUERY, seq).catch(() => [] as CheckFinished[]);
      const progress = finished.length ? await handle.query<CheckProgress>(CHECK_PROGRESS_QUERY).catch(() => null) : null;
      for (const entry of finished) {
        if (entry.seq <= seq) continue;
        seq = entry.seq;
        yield { type: 'check.finished', seq, index: entry.index, total: progress?.total ?? 0, result: entry.result };
      }
      await sleep(options.pollMs ?? 500, options.signal);
      continue;
    }
    if (status !== 'completed') {
      const error = await handle.result().then(
        () => undefined,
        (err: Error) => ((err as { cause?: Error }).cause ?? err).message,
      );
      yield { type: status === 'canceled' ? 'checks.canceled' : 'checks.failed', seq: seq + 1, ...(error ? { error } : {}) };
      return;
    }
    // Closed: the statements not shown yet, in the order they finished (a closed workflow still
    // answers queries, replayed on a worker); without a worker, from its result in statement order.
    const outcome = (await handle.result()) as CheckStatementsResult;
    const total = outcome.results.length;
    const finished = await handle.query<CheckFinished[], [number]>(CHECK_FINISHED_QUERY, seq).catch(() => null);
    if (finished) {
      for (const entry of finished) {
        if (entry.seq <= seq) continue;
        seq = entry.seq;
        yield { type: 'check.finished', seq, index: entry.index, total, result: entry.result };
      }
    } else if (seq === 0) {
      for (const [index, result] of outcome.results.entries()) yield { type: 'check.finished', seq: ++seq, index, total, result };
    }
    yield { type: 'checks.completed', seq: seq + 1, total, summary: summarizeChecks(outcome.results) };
    return;
  }
}
