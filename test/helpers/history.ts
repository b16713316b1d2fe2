// Reading a run's history: which activities ran, on which attempt, and when. Retries add no
// scheduled events, so the attempt of each activity's started event is what shows a re-run.
import { fileURLToPath } from 'node:url';
import type { Client } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';

type History = temporal.api.history.v1.IHistory;

export interface ActivityRun {
  type: string;
  /** The attempt that finished (1: it ran once). Undefined: never started. */
  attempt?: number;
  scheduledAt: number;
  /** When the finishing attempt started (ms since the epoch). */
  startedAt?: number;
  closedAt?: number;
  /** A local activity: it ran inside a workflow task and left only a marker with its answer. */
  local?: true;
}

function ms(time: temporal.api.history.v1.IHistoryEvent['eventTime']): number {
  return Number(time?.seconds ?? 0) * 1000 + Math.floor((time?.nanos ?? 0) / 1e6);
}

/** What a local activity's marker says of it (the SDK core writes it as JSON). */
function localActivityOf(event: temporal.api.history.v1.IHistoryEvent): { type: string; attempt: number } | undefined {
  const marker = event.markerRecordedEventAttributes;
  if (marker?.markerName !== 'core_local_activity') return undefined;
  const data = marker.details?.data?.payloads?.[0]?.data;
  if (!data) return undefined;
  const parsed = JSON.parse(Buffer.from(data).toString('utf8')) as { activity_type: string; attempt: number };
  return { type: parsed.activity_type, attempt: parsed.attempt };
}

/** Every activity of a history, scheduled or local, in order, with its final attempt. */
export function activityRunsOf(history: History): ActivityRun[] {
  const runs = new Map<string, ActivityRun>();
  for (const e of history.events ?? []) {
    const id = String(e.eventId);
    const local = localActivityOf(e);
    if (local)
      runs.set(id, { type: local.type, attempt: local.attempt, scheduledAt: ms(e.eventTime), closedAt: ms(e.eventTime), local: true });
    if (e.activityTaskScheduledEventAttributes) {
      runs.set(id, { type: e.activityTaskScheduledEventAttributes.activityType?.name ?? '?', scheduledAt: ms(e.eventTime) });
    }
    const started = e.activityTaskStartedEventAttributes;
    if (started) {
      const run = runs.get(String(started.scheduledEventId));
      if (run) Object.assign(run, { attempt: started.attempt ?? 1, startedAt: ms(e.eventTime) });
    }
    const closed = e.activityTaskCompletedEventAttributes ?? e.activityTaskFailedEventAttributes ?? e.activityTaskTimedOutEventAttributes;
    if (closed) {
      const run = runs.get(String(closed.scheduledEventId));
      if (run) run.closedAt = ms(e.eventTime);
    }
  }
  return [...runs.values()];
}

export async function activityRuns(client: Client, workflowId: string, runId?: string): Promise<ActivityRun[]> {
  return activityRunsOf(await client.workflow.getHandle(workflowId, runId).fetchHistory());
}

/** `type×attempt` per scheduled activity, e.g. `['decompose×1', 'formalize×2']`. */
export function attemptsOf(runs: ActivityRun[]): string[] {
  return runs.map((r) => `${r.type}×${r.attempt ?? 0}`);
}

export const HISTORIES_DIR = fileURLToPath(new URL('../fixtures/histories/', import.meta.url));

/** The activity types of a history in order, local activities included. */
export function activityTypesOf(history: History): string[] {
  return activityRunsOf(history).map((run) => run.type);
}
