// Starting and reading formalization runs through the Temporal client; shared by the HTTP API
// and the CLI so both name, tag and report runs the same way.
import { createHash, randomBytes } from 'node:crypto';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { defaultPayloadConverter, TypedSearchAttributes } from '@temporalio/common';
import proto from '@temporalio/proto';
import { CONFIG_KEY, LIBRARY_KEY, STAGE_KEY } from '../common/search-attributes';
import { describeRunFailure, type RunFailure } from './run-failure';
import { describeConfig, resolveRunConfig, statementPreview, workflowTypeFor } from '../common/run-config';
import { adHocRunId, runStaticDetails, runSummary } from '../common/run-metadata';
import { MAIN_TASK_QUEUE } from '../common/activities';
import type { LlmCallPolicy } from '../common/llm-call-policy';
import type { LeaveOutPolicy } from '../common/retrieval-types';
import type { RunConfig } from '../common/run-config-schema';
import type { FormalizeInput, FormalizeResult, Progress, Stage } from '../common/run-types';
import { SEARCH_ATTRIBUTES } from '../common/search-attributes';

export interface StartRequest {
  statement: string;
  library: string;
  config?: Partial<RunConfig>;
  exclude?: string[];
  /** `item` (default) or `file`: also hide the theorems of the excluded names' source files. */
  leaveOut?: LeaveOutPolicy;
  goldPremises?: string[];
  leanTaskQueue?: string;
  goldStatement?: string;
  /** Workflow ID to use; default: `formalize-<first words of the statement>-<12 random hex>`. A
   * repeated ID never starts a second run. */
  id?: string;
  /** The workers' LLM timeout and re-asks (from configuration): the LLM activities' time
   * budget is derived from them. */
  llm?: LlmCallPolicy;
  /** Sample index (a sweep's k samples of one item); default 0. */
  sample?: number;
  /** Whose texts the run's Lean checks run (common/trust-domain.ts); default driftline's own. */
  trustDomain?: string;
}

/** The workflow input a request becomes (also what a repeated id is compared against). */
export function formalizeInput(request: StartRequest): FormalizeInput {
  const config = resolveRunConfig(request.config);
  return {
    statement: request.statement,
    library: request.library,
    config,
    exclude: request.exclude,
    ...(request.leaveOut ? { leaveOut: request.leaveOut } : {}),
    goldPremises: request.goldPremises,
    ...(request.leanTaskQueue ? { leanTaskQueue: request.leanTaskQueue } : {}),
    ...(request.goldStatement ? { goldStatement: request.goldStatement } : {}),
    ...(request.llm
      ? {
          llm: {
            timeoutMs: request.llm.timeoutMs,
            maxReasks: request.llm.maxReasks,
            ...(request.llm.providers ? { providers: request.llm.providers } : {}),
          },
        }
      : {}),
    ...(request.sample ? { sample: request.sample } : {}),
    ...(request.trustDomain ? { trustDomain: request.trustDomain } : {}),
  };
}

export async function startFormalization(client: Client, request: StartRequest, taskQueue = MAIN_TASK_QUEUE): Promise<string> {
  const input = formalizeInput(request);
  const config = input.config;
  const id = request.id ?? adHocRunId(request.statement, randomBytes(6).toString('hex'));
  // Agent runs are their own workflow type, so each kind keeps a plain history and UI view.
  await client.workflow.start(workflowTypeFor(config), {
    workflowId: id,
    taskQueue,
    args: [input],
    // A caller-chosen ID names one run for good: repeating it, even after the run closed,
    // never starts another (sweeps count each item exactly once this way).
    ...(request.id ? { workflowIdReusePolicy: 'REJECT_DUPLICATE' as const } : {}),
    memo: { statement: statementPreview(request.statement) },
    // The Temporal UI shows these under the run's "User Metadata".
    staticSummary: runSummary(request.statement),
    staticDetails: runStaticDetails({ library: request.library, config }),
    typedSearchAttributes: new TypedSearchAttributes([
      { key: STAGE_KEY, value: 'starting' },
      { key: LIBRARY_KEY, value: request.library },
      { key: CONFIG_KEY, value: describeConfig(config) },
    ]),
  });
  return id;
}

const QUERY_TIMEOUT_MS = 1500;

// The wire shapes of a run, a run in a list and their statuses: defined once in common/wire.ts.
import { RUN_STATUSES, type RunStatus, type RunView, type RunSummary } from '../common/wire';
export { RUN_STATUSES, type RunStatus, type RunView, type RunSummary };

/** A workflow's description when it exists and its type is one `accepts` takes; null otherwise
 * (other workflows, a sweep say, share the namespace's IDs but are not what was asked for). */
export async function describeIf(client: Client, id: string, accepts: (workflowType: string) => boolean) {
  const handle = client.workflow.getHandle(id);
  let description;
  try {
    description = await handle.describe();
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return null;
    throw err;
  }
  return accepts(description.type) ? { handle, description } : null;
}

/** The run's state, or null when no run has that ID. */
export async function getFormalization(client: Client, id: string): Promise<RunView | null> {
  const found = await describeIf(client, id, isFormalization);
  if (!found) return null;
  const { handle, description } = found;
  const status = description.status.name;
  if (status === 'RUNNING') {
    // The query needs a live worker; when none answers soon, the stage search attribute (set by
    // the workflow at every stage) still tells where the run is. The query is aborted when it
    // loses the race: left in flight, its gRPC retry timer fires after the caller has closed the
    // connection and throws `Channel has been shut down` from a timer (the CLI crash).
    const fallback: Progress = {
      stage: (description.typedSearchAttributes.get(STAGE_KEY) as Stage | undefined) ?? 'starting',
      round: 0,
      completed: [],
    };
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), QUERY_TIMEOUT_MS);
    const progress = await client.connection
      .withAbortSignal(abort.signal, () => handle.query<Progress>('progress'))
      .catch(() => fallback)
      .finally(() => clearTimeout(timer));
    return { id, status: 'running', progress };
  }
  if (status === 'CANCELLED') return { id, status: 'canceled', progress: null, error: 'the run was canceled' };
  if (status === 'COMPLETED') {
    const result = (await handle.result()) as FormalizeResult;
    const done: Progress = { stage: 'done', round: result.attempts.length - 1, completed: result.stages ?? [] };
    if (result.agent)
      Object.assign(done, { round: result.agent.steps, step: result.agent.steps, lastTool: result.steps?.at(-1)?.tool ?? null });
    return { id, status: 'completed', progress: done, result };
  }
  let failure: RunFailure = { message: `run ended with status ${status}` };
  try {
    await handle.result();
  } catch (err) {
    failure = describeRunFailure(err);
  }
  return { id, status: 'failed', progress: null, error: failure.message, failure };
}

export class RunNotFoundError extends Error {
  constructor(readonly id: string) {
    super(`no formalization with id "${id}"`);
    this.name = 'RunNotFoundError';
  }
}

export class RunClosedError extends Error {
  constructor(
    readonly id: string,
    readonly status: string,
  ) {
    super(`run "${id}" has already ended (${status}); there is nothing to cancel`);
    this.name = 'RunClosedError';
  }
}

/** The workflow types that are formalization runs (pipeline and agent). */
export const FORMALIZATION_TYPES = ['formalize', 'formalizeAgent'] as const;

export function isFormalization(workflowType: string): boolean {
  return (FORMALIZATION_TYPES as readonly string[]).includes(workflowType);
}

/** Asks a running run to stop; its stages are canceled and it ends as `canceled`. */
export async function cancelFormalization(client: Client, id: string): Promise<void> {
  const found = await describeIf(client, id, isFormalization);
  if (!found) throw new RunNotFoundError(id);
  const { handle, description } = found;
  if (description.status.name !== 'RUNNING') throw new RunClosedError(id, statusOf(description.status.name));
  await handle.cancel();
}

/** Our status words for Temporal's execution statuses. */
export function statusOf(temporalStatus: string): RunStatus {
  switch (temporalStatus) {
    case 'RUNNING':
      return 'running';
    case 'COMPLETED':
      return 'completed';
    case 'CANCELLED':
      return 'canceled';
    default:
      return 'failed';
  }
}

/** The input a run was started with (its first history event), or null when there is no run. */
export async function runInput(client: Client, id: string): Promise<FormalizeInput | null> {
  try {
    const response = await client.workflowService.getWorkflowExecutionHistory({
      namespace: client.options.namespace,
      execution: { workflowId: id },
      maximumPageSize: 1,
      skipArchival: true,
    });
    const started = response.history?.events?.[0]?.workflowExecutionStartedEventAttributes;
    const payload = started?.input?.payloads?.[0];
    return payload ? (defaultPayloadConverter.fromPayload(payload as never) as FormalizeInput) : null;
  } catch (err) {
    if ((err as { code?: number }).code === 5) return null; // NOT_FOUND
    throw err;
  }
}

/** Fields in which a request differs from a run's input (empty: the same request). */
export function requestDifferences(existing: FormalizeInput, request: StartRequest): string[] {
  const wanted = formalizeInput(request);
  const norm = (v: unknown) => JSON.stringify(v ?? null);
  const list = (v: string[] | undefined) => (v && v.length ? v : undefined);
  const differences: string[] = [];
  if (existing.statement !== wanted.statement) differences.push('statement');
  if (existing.library !== wanted.library) differences.push('library');
  for (const key of Object.keys(wanted.config) as (keyof RunConfig)[]) {
    if (norm(existing.config?.[key]) !== norm(wanted.config[key])) differences.push(`config.${key}`);
  }
  if (norm(list(existing.exclude)) !== norm(list(wanted.exclude))) differences.push('exclude');
  if ((existing.leaveOut ?? 'item') !== (wanted.leaveOut ?? 'item')) differences.push('leaveOut');
  if (norm(list(existing.goldPremises)) !== norm(list(wanted.goldPremises))) differences.push('goldPremises');
  if (norm(existing.goldStatement) !== norm(wanted.goldStatement)) differences.push('goldStatement');
  return differences;
}

export type ListStatus = RunStatus;

export interface ListFilter {
  status?: ListStatus;
  outcome?: string;
  library?: string;
  sweep?: string;
  /** Only runs that started or closed at or after this time (ISO 8601). */
  changedSince?: string;
  /** Opaque token from a previous page. */
  pageToken?: string;
  limit?: number;
}

const STATUS_QUERY: Record<ListStatus, string> = {
  running: "ExecutionStatus = 'Running'",
  completed: "ExecutionStatus = 'Completed'",
  failed: "ExecutionStatus IN ('Failed', 'TimedOut', 'Terminated')",
  canceled: "ExecutionStatus = 'Canceled'",
};

/** A visibility query from filters whose values the API has already checked against patterns. */
export function listQuery(filter: ListFilter): string {
  const quote = (value: string) => `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  // Agent runs too: they are runs like any other (their workflow type differs).
  const parts = [`WorkflowType IN (${FORMALIZATION_TYPES.map((t) => `'${t}'`).join(', ')})`];
  if (filter.status) parts.push(STATUS_QUERY[filter.status]);
  if (filter.outcome) parts.push(`${SEARCH_ATTRIBUTES.outcome} = ${quote(filter.outcome)}`);
  if (filter.library) parts.push(`${SEARCH_ATTRIBUTES.library} = ${quote(filter.library)}`);
  if (filter.sweep) parts.push(`${SEARCH_ATTRIBUTES.sweep} = ${quote(filter.sweep)}`);
  if (filter.changedSince) parts.push(`(StartTime >= ${quote(filter.changedSince)} OR CloseTime >= ${quote(filter.changedSince)})`);
  return parts.join(' AND ');
}

const STATUS_BY_ENUM: Record<number, RunStatus> = {
  1: 'running',
  2: 'completed',
  3: 'failed',
  4: 'canceled',
  5: 'failed',
  6: 'completed',
  7: 'failed',
};

function toIso(t: proto.google.protobuf.ITimestamp | null | undefined): string | undefined {
  if (!t) return undefined;
  return new Date(Number(t.seconds ?? 0) * 1000 + Math.floor((t.nanos ?? 0) / 1e6)).toISOString();
}

export class BadPageTokenError extends Error {
  constructor() {
    super('"pageToken" is not a token this API handed out for these filters; start again without it');
    this.name = 'BadPageTokenError';
  }
}

// Page tokens carry a check of Temporal's token and the filters they were made for, so a token
// that was garbled, made up, or used with other filters is a clear 400 rather than a server error.
function tokenCheck(token: Uint8Array, query: string): string {
  return createHash('sha256').update(query).update('\u0000').update(token).digest('base64url').slice(0, 16);
}

function sealPageToken(token: Uint8Array, query: string): string {
  return `${Buffer.from(token).toString('base64url')}.${tokenCheck(token, query)}`;
}

function openPageToken(sealed: string, query: string): Uint8Array {
  const dot = sealed.lastIndexOf('.');
  const token = Buffer.from(sealed.slice(0, Math.max(0, dot)), 'base64url');
  if (dot <= 0 || token.length === 0 || sealed.slice(dot + 1) !== tokenCheck(token, query)) throw new BadPageTokenError();
  return token;
}

/** One page of runs from Temporal's visibility store, newest first. */
export async function listFormalizations(client: Client, filter: ListFilter): Promise<{ items: RunSummary[]; nextPageToken?: string }> {
  const query = listQuery(filter);
  const nextPageToken = filter.pageToken ? openPageToken(filter.pageToken, query) : undefined;
  let response;
  try {
    response = await client.workflowService.listWorkflowExecutions({
      namespace: client.options.namespace,
      pageSize: filter.limit ?? 20,
      query,
      ...(nextPageToken ? { nextPageToken } : {}),
    });
  } catch (err) {
    if (filter.pageToken && (err as { code?: number }).code === 3) throw new BadPageTokenError(); // INVALID_ARGUMENT
    throw err;
  }
  const attribute = (fields: Record<string, proto.temporal.api.common.v1.IPayload> | null | undefined, key: string): string | undefined => {
    const payload = fields?.[key];
    if (!payload) return undefined;
    const value = defaultPayloadConverter.fromPayload(payload as never);
    return typeof value === 'string' ? value : Array.isArray(value) && typeof value[0] === 'string' ? value[0] : undefined;
  };
  const items = (response.executions ?? []).map((info): RunSummary => {
    const fields = info.searchAttributes?.indexedFields;
    const summary: RunSummary = {
      id: info.execution?.workflowId ?? '',
      status: STATUS_BY_ENUM[info.status ?? 0] ?? 'failed',
      startedAt: toIso(info.startTime) ?? new Date(0).toISOString(),
    };
    const closedAt = toIso(info.closeTime);
    if (closedAt && summary.status !== 'running') summary.closedAt = closedAt;
    const memo = info.memo?.fields;
    const memoText = (key: string): string | undefined => {
      const payload = memo?.[key];
      if (!payload) return undefined;
      try {
        const value = defaultPayloadConverter.fromPayload(payload as never);
        return typeof value === 'string' && value.length > 0 ? value : undefined;
      } catch {
        return undefined; // a memo some other client wrote in another encoding: leave it out
      }
    };
    const extra = {
      library: attribute(fields, SEARCH_ATTRIBUTES.library),
      config: attribute(fields, SEARCH_ATTRIBUTES.config),
      stage: attribute(fields, SEARCH_ATTRIBUTES.stage),
      outcome: attribute(fields, SEARCH_ATTRIBUTES.outcome),
      sweep: attribute(fields, SEARCH_ATTRIBUTES.sweep),
      statement: memoText('statement'),
      item: memoText('item'),
    };
    for (const [key, value] of Object.entries(extra)) if (value !== undefined) (summary as unknown as Record<string, string>)[key] = value;
    return summary;
  });
  const token = response.nextPageToken?.length ? sealPageToken(response.nextPageToken, query) : undefined;
  return { items, ...(token ? { nextPageToken: token } : {}) };
}

/** The dev server's Web UI: where links point when the caller names no UI. */
export const DEFAULT_TEMPORAL_UI_URL = 'http://127.0.0.1:8233';

/** The Web UI and namespace links are made for: the caller's, else the dev server's UI and the
 * client's own namespace. The one place these fallbacks are written. */
export function temporalUiOf(
  client: Client,
  given: { temporalUiUrl?: string | undefined; namespace?: string | undefined },
): { temporalUiUrl: string; namespace: string } {
  return { temporalUiUrl: given.temporalUiUrl ?? DEFAULT_TEMPORAL_UI_URL, namespace: given.namespace ?? client.options.namespace };
}

/** The run's page in the Temporal Web UI. */
export function temporalUiLink(uiBase: string, namespace: string, id: string): string {
  return `${uiBase.replace(/\/$/, '')}/namespaces/${encodeURIComponent(namespace)}/workflows/${encodeURIComponent(id)}`;
}
