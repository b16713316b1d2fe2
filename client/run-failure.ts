// Why a run failed, in words a user can act on: the stage, and the failure our own code raised
// (which names the model, the endpoint and the reason), with deeper causes only where they add
// something. Temporal wraps it in "Workflow execution failed" and "Activity task failed", and
// the deepest cause alone ("Request timed out.") says nothing about where or why.
import { ActivityFailure, ApplicationFailure, TimeoutFailure } from '@temporalio/common';
import { stageOfActivity } from '../common/stages';

import type { RunFailure } from '../common/wire';
export type { RunFailure };

const WRAPPERS = new Set(['Workflow execution failed', 'Activity task failed', 'Child Workflow execution failed']);

function chain(err: unknown): unknown[] {
  const out: unknown[] = [];
  let current: unknown = err;
  while (current && out.length < 20) {
    out.push(current);
    current = (current as { cause?: unknown }).cause;
  }
  return out;
}

function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

export function describeRunFailure(err: unknown): RunFailure {
  const links = chain(err);
  const activity = links.find((e): e is ActivityFailure => e instanceof ActivityFailure);
  // The pipeline's stage name (a retired activity of an older run reads as its stage: common/stages.ts).
  const stage = activity ? (stageOfActivity(activity.activityType) ?? activity.activityType) : undefined;
  const mainAt = links.findIndex(
    (e) =>
      e instanceof ApplicationFailure ||
      e instanceof TimeoutFailure ||
      (e instanceof Error && !WRAPPERS.has(e.message) && !(e instanceof ActivityFailure) && e.message !== ''),
  );
  const main = mainAt >= 0 ? links[mainAt] : links.at(-1);
  let reason =
    main instanceof TimeoutFailure
      ? `Temporal stopped the activity: its ${main.timeoutType?.toLowerCase().replace(/_/g, '-') ?? ''} timeout passed`
      : messageOf(main);
  // Deeper causes, where they say something the message does not already say.
  for (const deeper of links.slice(mainAt + 1)) {
    const text = messageOf(deeper);
    if (text && !reason.includes(text)) reason += ` (cause: ${text})`;
  }
  if (activity?.retryState === 'MAXIMUM_ATTEMPTS_REACHED') reason += '; gave up after the last retry';
  const type = main instanceof ApplicationFailure && main.type ? main.type : undefined;
  return {
    ...(stage ? { stage } : {}),
    ...(type ? { type } : {}),
    message: stage ? `stage ${stage} failed: ${reason}` : reason,
  };
}
