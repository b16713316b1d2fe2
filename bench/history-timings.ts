// Where a workflow's time goes, read from its history: for each activity, the wait between
// being scheduled and a worker starting it (schedule-to-start) and its run (start-to-close);
// for each workflow task, the wait for a worker and the worker's processing time. Percentiles
// over a sample of workflows say whether the server, the task queues or the workers hold runs up.
import type { Client } from '@temporalio/client';

type Event = NonNullable<Awaited<ReturnType<ReturnType<Client['workflow']['getHandle']>['fetchHistory']>>['events']>[number];

// temporal.api.enums.v1.EventType values (stable in Temporal's API).
const T = {
  EVENT_TYPE_WORKFLOW_TASK_SCHEDULED: 5,
  EVENT_TYPE_WORKFLOW_TASK_STARTED: 6,
  EVENT_TYPE_WORKFLOW_TASK_COMPLETED: 7,
  EVENT_TYPE_ACTIVITY_TASK_SCHEDULED: 10,
  EVENT_TYPE_ACTIVITY_TASK_STARTED: 11,
  EVENT_TYPE_ACTIVITY_TASK_COMPLETED: 12,
  EVENT_TYPE_MARKER_RECORDED: 25,
} as const;

function ms(event: Event | undefined): number {
  const t = event?.eventTime;
  if (!t) return NaN;
  return Number(t.seconds ?? 0) * 1000 + (t.nanos ?? 0) / 1e6;
}

export interface Percentiles {
  n: number;
  p50: number;
  p95: number;
  mean: number;
}

export function percentiles(xs: number[]): Percentiles {
  const s = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (s.length === 0) return { n: 0, p50: NaN, p95: NaN, mean: NaN };
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
  const round = (x: number) => +x.toFixed(1);
  return { n: s.length, p50: round(at(0.5)), p95: round(at(0.95)), mean: round(s.reduce((a, b) => a + b, 0) / s.length) };
}

export interface HistoryTimings {
  workflows: number;
  /** Milliseconds, per activity. */
  activityScheduleToStart: Percentiles;
  activityStartToClose: Percentiles;
  /** Milliseconds, per workflow task. */
  workflowTaskScheduleToStart: Percentiles;
  workflowTaskStartToComplete: Percentiles;
  /** Per workflow: first to last event. */
  workflowMs: Percentiles;
  activitiesPerWorkflow: number;
  /** Local activities (a marker each, run inside a workflow task). */
  localActivitiesPerWorkflow: number;
  workflowTasksPerWorkflow: number;
  eventsPerWorkflow: number;
}

/** Timings from the histories of `ids` (fetched one after another, after the work is done). */
export async function historyTimings(client: Client, ids: string[]): Promise<HistoryTimings> {
  const actWait: number[] = [];
  const actRun: number[] = [];
  const wftWait: number[] = [];
  const wftRun: number[] = [];
  const total: number[] = [];
  let activities = 0;
  let localActivities = 0;
  let tasks = 0;
  let events = 0;
  for (const id of ids) {
    const history = await client.workflow.getHandle(id).fetchHistory();
    const list = history.events ?? [];
    const byId = new Map(list.map((e) => [Number(e.eventId), e]));
    events += list.length;
    total.push(ms(list[list.length - 1]) - ms(list[0]));
    for (const e of list) {
      switch (Number(e.eventType)) {
        case T.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
          activities++;
          break;
        case T.EVENT_TYPE_ACTIVITY_TASK_STARTED:
          actWait.push(ms(e) - ms(byId.get(Number(e.activityTaskStartedEventAttributes?.scheduledEventId))));
          break;
        case T.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
          actRun.push(ms(e) - ms(byId.get(Number(e.activityTaskCompletedEventAttributes?.startedEventId))));
          break;
        case T.EVENT_TYPE_MARKER_RECORDED:
          if (e.markerRecordedEventAttributes?.markerName === 'core_local_activity') localActivities++;
          break;
        case T.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED:
          tasks++;
          break;
        case T.EVENT_TYPE_WORKFLOW_TASK_STARTED:
          wftWait.push(ms(e) - ms(byId.get(Number(e.workflowTaskStartedEventAttributes?.scheduledEventId))));
          break;
        case T.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
          wftRun.push(ms(e) - ms(byId.get(Number(e.workflowTaskCompletedEventAttributes?.startedEventId))));
          break;
        default:
      }
    }
  }
  const n = Math.max(1, ids.length);
  return {
    workflows: ids.length,
    activityScheduleToStart: percentiles(actWait),
    activityStartToClose: percentiles(actRun),
    workflowTaskScheduleToStart: percentiles(wftWait),
    workflowTaskStartToComplete: percentiles(wftRun),
    workflowMs: percentiles(total),
    activitiesPerWorkflow: +(activities / n).toFixed(1),
    localActivitiesPerWorkflow: +(localActivities / n).toFixed(1),
    workflowTasksPerWorkflow: +(tasks / n).toFixed(1),
    eventsPerWorkflow: +(events / n).toFixed(1),
  };
}
