// Workflow code must stay deterministic: every recorded history replays against today's code.
// Histories of today's code are recorded by `npm run fixtures:record` (test/record-histories.ts);
// those of older code (`*-before-<change>.json`) are kept as they were recorded, so the old side
// of every patch keeps replaying. docs/testing.md says when to record; docs/decisions/0015 which
// old sides stay and until when.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import { quietRuntime, workflowBundle } from '../helpers/stack';
import { RETIRED_ACTIVITIES } from '../../common/stages';

// Replay workers would otherwise log each state change of each replay (hundreds of lines in CI).
quietRuntime();

const DIR = fileURLToPath(new URL('../fixtures/histories/', import.meta.url));
const WORKFLOWS = fileURLToPath(new URL('../../workflows/', import.meta.url));
const files = readdirSync(DIR)
  .filter((f) => f.endsWith('.json'))
  .sort();

/** What the replay tests read of a history's JSON: its events as recorded. */
interface RawEvent {
  eventType: string;
  workflowExecutionStartedEventAttributes?: { workflowType?: { name?: string } };
  activityTaskScheduledEventAttributes?: { activityType?: { name?: string }; input?: { payloads?: { data?: string }[] } };
  markerRecordedEventAttributes?: { markerName?: string; details?: Record<string, { payloads?: { data?: string }[] }> };
  workflowExecutionContinuedAsNewEventAttributes?: unknown;
  startChildWorkflowExecutionInitiatedEventAttributes?: { workflowType?: { name?: string } };
}

interface Recorded {
  file: string;
  type: string;
  activities: Set<string>;
  children: Set<string>;
  /** Patch IDs whose marker the history carries. */
  patches: Set<string>;
  completed: boolean;
  continuedAsNew: boolean;
  /** Repair prompts (the attempt and Lean's messages) sent more than once. */
  repeatedRepairPrompt: boolean;
}

/** The first argument of a scheduled activity, as the JSON payload converter wrote it. */
function firstArgument(e: RawEvent): unknown {
  const data = e.activityTaskScheduledEventAttributes?.input?.payloads?.[0]?.data;
  return data ? JSON.parse(Buffer.from(data, 'base64').toString('utf8')) : undefined;
}

function read(file: string): Recorded {
  const events = (JSON.parse(readFileSync(join(DIR, file), 'utf8')) as { events: RawEvent[] }).events;
  const patches = new Set<string>();
  for (const e of events) {
    const marker = e.markerRecordedEventAttributes;
    const data = marker?.markerName === 'core_patch' ? marker.details?.['patch-data']?.payloads?.[0]?.data : undefined;
    if (data) patches.add((JSON.parse(Buffer.from(data, 'base64').toString('utf8')) as { id: string }).id);
  }
  return {
    file,
    type: events[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name ?? '?',
    activities: new Set(events.map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name).filter((n): n is string => !!n)),
    children: new Set(
      events.map((e) => e.startChildWorkflowExecutionInitiatedEventAttributes?.workflowType?.name).filter((n): n is string => !!n),
    ),
    patches,
    completed: events.some((e) => e.eventType === 'EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED'),
    continuedAsNew: events.some((e) => e.workflowExecutionContinuedAsNewEventAttributes),
    repeatedRepairPrompt: (() => {
      const prompts = events
        .map((e) => (firstArgument(e) as { repair?: { statement: string; messages: unknown } } | undefined)?.repair)
        .filter((r) => r !== undefined)
        .map((r) => JSON.stringify([r.statement, r.messages]));
      return new Set(prompts).size < prompts.length;
    })(),
  };
}

const recorded = files.map(read);

/** The run workflows that end through the run core's finishRun (and so read the ledger). */
const RUN_TYPES = new Set(['formalize', 'formalizeAgent', 'evaluateStatement', 'rejudge']);

/**
 * Where each patch ID of the workflow code is decided: a history "reaches" it when its workflow
 * ran the code that calls patched() (so a history without the marker there took the old side).
 * A patched() ID missing here fails the test: say where it is reached, and record both sides.
 */
const PATCH_POINTS: Record<string, (h: Recorded) => boolean> = {
  // Every formalize run asks for its first draft.
  'formalize-repair-activities': (h) =>
    h.type === 'formalize' &&
    ['formalize', 'repair', ...RETIRED_ACTIVITIES.filter((r) => r.patch === 'formalize-repair-activities').map((r) => r.activity)].some(
      (a) => h.activities.has(a),
    ),
  // A repair round that would send the formalizer a prompt already sent.
  'repair-stops-on-repeated-prompt': (h) => h.type === 'formalize' && h.repeatedRepairPrompt,
  // Every run that finishes reads the ledger (or, before the patch, nothing).
  'llm-usage': (h) => RUN_TYPES.has(h.type) && h.completed,
  // Every agent run that finishes.
  'agent-run-core': (h) => h.type === 'formalizeAgent' && h.completed,
};

/** The patch IDs the workflow code calls, by how: patched() (both sides live) or
 * deprecatePatch() (only the new side runs; the marker is still written). */
function patchIdsInCode(): { patched: Set<string>; deprecated: Set<string> } {
  const patched = new Set<string>();
  const deprecated = new Set<string>();
  for (const f of readdirSync(WORKFLOWS).filter((f) => f.endsWith('.ts'))) {
    const source = readFileSync(join(WORKFLOWS, f), 'utf8');
    for (const m of source.matchAll(/\b(patched|deprecatePatch)\(\s*['"]([^'"]+)['"]\s*\)/g))
      (m[1] === 'patched' ? patched : deprecated).add(m[2]!);
  }
  return { patched, deprecated };
}

describe('replay of recorded histories', () => {
  it('has histories of today\u2019s code for every workflow and path that matters', () => {
    const have = (name: string) => recorded.some((h) => h.file === `${name}.json`);
    // What `npm run fixtures:record` writes (test/record-histories.ts).
    for (const name of [
      'formalize-completed',
      'formalize-repair-rounds',
      'formalize-repeated-prompt',
      'formalize-repairs-exhausted',
      'formalize-compile-skipped',
      'formalize-budget-exhausted',
      'formalize-agent-completed',
      'evaluate-statement',
      'check-statements',
      'rejudge-completed',
      'rejudge-carried',
      'sweep-completed',
      'sweep-completed-last-run',
      'sweep-retry',
      'sweep-predictions',
      'sweep-rescore',
      'sweep-batch-run',
      'llm-batcher',
      'llm-batcher-cancelled',
      'build-index',
    ])
      expect(have(name), name).toBe(true);
    // The batcher's whole cycle: a flush, polls on timers, an ended batch written, a failed line
    // sent again in a second batch.
    const batcher = recorded.find((h) => h.file === 'llm-batcher.json')!;
    expect(batcher.type).toBe('llmBatcher');
    for (const a of ['submitLlmBatch', 'pollLlmBatch', 'collectLlmBatch']) expect(batcher.activities.has(a), a).toBe(true);
    // A cancelled sweep's batcher cancels its batch at the provider and lets its requests go.
    const cancelled = recorded.find((h) => h.file === 'llm-batcher-cancelled.json')!;
    for (const a of ['cancelLlmBatch', 'releaseLlmRequests']) expect(cancelled.activities.has(a), a).toBe(true);
    const byType = (type: string) => recorded.filter((h) => h.type === type);
    // The pipeline's current stages: `formalize` and `repair` activities, with the marker.
    expect(
      byType('formalize').some(
        (h) => h.activities.has('formalize') && h.activities.has('repair') && h.patches.has('formalize-repair-activities'),
      ),
    ).toBe(true);
    // A history past a retiring patch never schedules the activity it retired; one before it does.
    for (const { activity, patch } of RETIRED_ACTIVITIES) {
      expect(
        recorded.filter((h) => h.patches.has(patch) && h.activities.has(activity)).map((h) => h.file),
        `${activity} after ${patch}`,
      ).toEqual([]);
      expect(
        recorded.some((h) => !h.patches.has(patch) && h.activities.has(activity)),
        `${activity} before ${patch}`,
      ).toBe(true);
    }
    // A sweep that continued as new, one with predictions (evaluateStatement children), a rescore (rejudge children).
    expect(byType('sweep').some((h) => h.continuedAsNew)).toBe(true);
    expect(byType('sweep').some((h) => h.children.has('evaluateStatement'))).toBe(true);
    expect(byType('sweep').some((h) => h.children.has('rejudge'))).toBe(true);
    for (const type of ['formalize', 'formalizeAgent', 'evaluateStatement', 'checkStatements', 'rejudge', 'sweep', 'buildIndex'])
      expect(byType(type).length, type).toBeGreaterThan(0);
  });

  it('has, for every patched() ID in the workflow code, a history on each side of it', () => {
    const { patched, deprecated } = patchIdsInCode();
    expect(patched.size).toBeGreaterThan(0);
    for (const id of patched) {
      const reaches = PATCH_POINTS[id];
      expect(reaches, `patched('${id}') has no entry in PATCH_POINTS (replay.test.ts)`).toBeDefined();
      const newSide = recorded.filter((h) => h.patches.has(id)).map((h) => h.file);
      const oldSide = recorded.filter((h) => !h.patches.has(id) && reaches!(h)).map((h) => h.file);
      expect(newSide, `no recorded history carries the '${id}' marker (npm run fixtures:record)`).not.toEqual([]);
      expect(oldSide, `no recorded history reaches patched('${id}') without its marker (the old side)`).not.toEqual([]);
    }
    // A deprecated patch keeps writing its marker: some history must show it.
    for (const id of deprecated)
      expect(
        recorded.some((h) => h.patches.has(id)),
        `deprecatePatch('${id}'): no history carries its marker`,
      ).toBe(true);
    // No stale entries: each point names a live patched() ID.
    for (const id of Object.keys(PATCH_POINTS)) expect(patched.has(id), `PATCH_POINTS names '${id}', which no workflow calls`).toBe(true);
  });

  for (const file of files) {
    it(`replays ${file} without a determinism error`, async () => {
      const history = historyFromJSON(JSON.parse(readFileSync(join(DIR, file), 'utf8')));
      await expect(Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, history)).resolves.toBeUndefined();
    });
  }

  it('notices when the workflow code no longer matches a history', async () => {
    // The same history against a workflow that schedules different activities must fail,
    // or the test above could not catch anything.
    const history = historyFromJSON(JSON.parse(readFileSync(join(DIR, 'formalize-repair-rounds.json'), 'utf8')));
    const events = history.events ?? [];
    const scheduled = events.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'repair');
    scheduled!.activityTaskScheduledEventAttributes!.activityType!.name = 'somethingElse';
    await expect(Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, history)).rejects.toBeInstanceOf(
      DeterminismViolationError,
    );
  });

  it('notices when the agent workflow no longer matches its history', async () => {
    const history = historyFromJSON(JSON.parse(readFileSync(join(DIR, 'formalize-agent-completed.json'), 'utf8')));
    const scheduled = (history.events ?? []).find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'resolveName');
    scheduled!.activityTaskScheduledEventAttributes!.activityType!.name = 'inspectName';
    await expect(Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, history)).rejects.toBeInstanceOf(
      DeterminismViolationError,
    );
  });
});
