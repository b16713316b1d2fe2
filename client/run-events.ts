// A run's progress as a list of events, read from its Temporal history: the history is the one
// record that misses nothing (every stage is an activity, scheduled and then closed), is in
// order, and survives every crash. Each event's `seq` is its history event id, so a reader that
// saw event n resumes after n without a gap or a repeat (SSE's Last-Event-ID).
import type { Client } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import proto from '@temporalio/proto';
import { SEARCH_ATTRIBUTES } from '../common/search-attributes';
import { isBookkeeping, stageOfActivity } from '../common/stages';

type HistoryEvent = proto.temporal.api.history.v1.IHistoryEvent;
type Payload = proto.temporal.api.common.v1.IPayload;

// The event's shape and kinds are defined once, in common/wire.ts.
import type { RunEvent } from '../common/wire';
export { RUN_EVENT_TYPES, type RunEvent, type RunEventType } from '../common/wire';

const { EventType } = proto.temporal.api.enums.v1;

function decode(payload: Payload | null | undefined): unknown {
  if (!payload) return undefined;
  try {
    return defaultPayloadConverter.fromPayload(payload as never);
  } catch {
    return undefined;
  }
}

function timeOf(event: HistoryEvent): string {
  const t = event.eventTime;
  if (!t) return new Date(0).toISOString();
  return new Date(Number(t.seconds ?? 0) * 1000 + Math.floor((t.nanos ?? 0) / 1e6)).toISOString();
}

function failureText(failure: proto.temporal.api.failure.v1.IFailure | null | undefined): string {
  // The innermost message tells the user what to do (the activity's own words).
  let message = failure?.message ?? 'failed';
  let current = failure?.cause;
  while (current) {
    if (current.message) message = current.message;
    current = current.cause;
  }
  return message;
}

/** Turns history events into run events, one call per page; keeps what it needs between. */
export class RunEventMapper {
  private stage = 'starting';
  private steps = 0;
  private compiles = 0;
  private readonly scheduled = new Map<number, { activity: string; stage: string; round?: number; step: number }>();

  map(event: HistoryEvent): RunEvent | undefined {
    const seq = Number(event.eventId);
    const time = timeOf(event);
    switch (event.eventType) {
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED:
        return { seq, type: 'run.started', stage: 'starting', time };
      case EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES: {
        // The workflow names each stage as it enters it: the truth about which stage an
        // activity belongs to (resolveName runs inside `repair`, equivalence inside `judge`).
        const fields = event.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields ?? {};
        const stage = decode(fields[SEARCH_ATTRIBUTES.stage]);
        if (typeof stage === 'string') this.stage = stage;
        return undefined;
      }
      case EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED: {
        const activity = event.activityTaskScheduledEventAttributes?.activityType?.name ?? 'activity';
        // Bookkeeping after the last stage (reading the LLM ledger) is not a stage of the run.
        if (isBookkeeping(activity)) return undefined;
        const stage = this.stage !== 'starting' ? this.stage : (stageOfActivity(activity) ?? activity);
        const step = ++this.steps;
        let round: number | undefined;
        if (activity === 'compile') round = this.compiles++;
        else if (stage === 'repair') round = this.compiles;
        this.scheduled.set(seq, { activity, stage, round, step });
        return { seq, type: 'stage.started', stage, activity, ...(round !== undefined ? { round } : {}), step, time };
      }
      case EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED: {
        const attrs = event.activityTaskCompletedEventAttributes;
        const from = this.scheduled.get(Number(attrs?.scheduledEventId));
        if (!from) return undefined;
        const result = decode(attrs?.result?.payloads?.[0]) as Record<string, unknown> | undefined;
        return { seq, type: 'stage.completed', ...this.base(from), time, ...summarize(from.activity, result) };
      }
      case EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED:
      case EventType.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT:
      case EventType.EVENT_TYPE_ACTIVITY_TASK_CANCELED: {
        const attrs =
          event.activityTaskFailedEventAttributes ?? event.activityTaskTimedOutEventAttributes ?? event.activityTaskCanceledEventAttributes;
        const from = this.scheduled.get(Number(attrs?.scheduledEventId));
        if (!from) return undefined;
        const error = event.activityTaskFailedEventAttributes
          ? failureText(event.activityTaskFailedEventAttributes.failure)
          : event.activityTaskTimedOutEventAttributes
            ? `timed out: ${failureText(event.activityTaskTimedOutEventAttributes.failure)}`
            : 'canceled';
        return { seq, type: 'stage.failed', ...this.base(from), time, error };
      }
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED: {
        const result = decode(event.workflowExecutionCompletedEventAttributes?.result?.payloads?.[0]) as
          { outcome?: string; compiled?: boolean } | undefined;
        return {
          seq,
          type: 'run.completed',
          stage: 'done',
          time,
          ...(result?.outcome ? { outcome: result.outcome } : {}),
          ...(typeof result?.compiled === 'boolean' ? { compiled: result.compiled } : {}),
        };
      }
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED:
        return { seq, type: 'run.failed', stage: 'done', time, error: failureText(event.workflowExecutionFailedEventAttributes?.failure) };
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT:
        return { seq, type: 'run.failed', stage: 'done', time, error: 'the run timed out' };
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED:
        return {
          seq,
          type: 'run.failed',
          stage: 'done',
          time,
          error: `terminated${event.workflowExecutionTerminatedEventAttributes?.reason ? `: ${event.workflowExecutionTerminatedEventAttributes.reason}` : ''}`,
        };
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED:
        return { seq, type: 'run.canceled', stage: 'done', time };
      default:
        return undefined;
    }
  }

  private base(from: { activity: string; stage: string; round?: number; step: number }) {
    return { stage: from.stage, activity: from.activity, ...(from.round !== undefined ? { round: from.round } : {}), step: from.step };
  }
}

/** A short, safe summary of an activity's result: never the statement or the LLM's text. */
function summarize(activity: string, result: Record<string, unknown> | undefined): Partial<RunEvent> {
  if (!result) return {};
  if (activity === 'compile' && typeof result.status === 'string') {
    const messages = Array.isArray(result.messages) ? (result.messages as { severity?: string }[]) : [];
    const refusedBy =
      result.status === 'refused' && (result.refusedBy === 'tampering' || result.refusedBy === 'disagreement')
        ? result.refusedBy
        : undefined;
    return {
      compile: {
        status: result.status,
        errors: messages.filter((m) => m.severity === 'error').length,
        ...(refusedBy ? { refusedBy } : {}),
      },
    };
  }
  if (activity === 'judge' && typeof result.grade === 'number') {
    return { judge: { grade: result.grade, faithful: Boolean(result.faithful) } };
  }
  return {};
}

export function isFinal(event: RunEvent): boolean {
  return event.type === 'run.completed' || event.type === 'run.failed' || event.type === 'run.canceled';
}

export interface FollowOptions {
  /** Events with `seq` up to this are skipped (what the reader already has). */
  after?: number;
  signal?: AbortSignal;
  /** The run to read (default: the latest run with that workflow id). */
  runId?: string;
  /** Time limit of one long poll, retries included (the server answers within ~20 s anyway);
   * past it the generator throws, so a caller notices a Temporal that went away. */
  pollTimeoutMs?: number;
  /** Called after every answer from Temporal, events or not: it is there. */
  onAnswer?: () => void;
}

/**
 * Every event of the run after `after`, as they happen, ending with the run's last event.
 * One long poll at a time (`waitNewEvent`): the server answers when the history grows.
 */
export async function* followRunEvents(client: Client, workflowId: string, options: FollowOptions = {}): AsyncGenerator<RunEvent> {
  const after = options.after ?? 0;
  const mapper = new RunEventMapper();
  let nextPageToken: Uint8Array | undefined;
  const runId = options.runId;
  for (;;) {
    const request = () =>
      client.workflowService.getWorkflowExecutionHistory({
        namespace: client.options.namespace,
        execution: { workflowId, ...(runId ? { runId } : {}) },
        waitNewEvent: true,
        skipArchival: true,
        ...(nextPageToken ? { nextPageToken } : {}),
      });
    const bounded = options.pollTimeoutMs ? () => client.connection.withDeadline(Date.now() + options.pollTimeoutMs!, request) : request;
    const response = options.signal ? await withSignal(client, options.signal, bounded) : await bounded();
    options.onAnswer?.();
    for (const event of response.history?.events ?? []) {
      const mapped = mapper.map(event);
      if (mapped && mapped.seq > after) yield mapped;
      if (mapped && isFinal(mapped)) return;
    }
    if (!response.nextPageToken?.length) return;
    nextPageToken = response.nextPageToken;
  }
}

/** Runs one call under a signal of its own, tied to `signal` only while it lasts: the SDK adds a
 * listener per call, so sharing one signal across a long stream's many polls would pile them up. */
async function withSignal<T>(client: Client, signal: AbortSignal, fn: () => Promise<T>): Promise<T> {
  const local = new AbortController();
  const forward = () => local.abort();
  if (signal.aborted) local.abort();
  else signal.addEventListener('abort', forward, { once: true });
  try {
    return await client.connection.withAbortSignal(local.signal, fn);
  } finally {
    signal.removeEventListener('abort', forward);
  }
}
