// The one registry of a run's stages and of the activities behind them. Every list of stages
// (the `Stage` type, the export's timing columns, the report's latency table, the web page's
// words, the run events' stage of an activity, the LLM workers' activities) derives from here.

/** A run's stages in their order, with the words the web page shows for each. */
export const STAGES = [
  { name: 'decompose', label: 'Decompose into concepts' },
  { name: 'retrieve', label: 'Retrieve premises' },
  { name: 'illustrate', label: 'Choose example theorems' },
  { name: 'formalize', label: 'Formalize' },
  { name: 'agent', label: 'Agent' },
  { name: 'compile', label: 'Compile with Lean' },
  { name: 'repair', label: 'Repair' },
  { name: 'judge', label: 'Judge faithfulness' },
] as const;

export type StageName = (typeof STAGES)[number]['name'];

/** Where a run is: before its first stage, in one, or finished. */
export type Stage = 'starting' | StageName | 'done';

export const STAGE_NAMES: readonly StageName[] = STAGES.map((s) => s.name);

/** The words for a stage, `starting` and `done` included. */
export const STAGE_LABELS: Readonly<Record<Stage, string>> = {
  starting: 'Starting',
  ...(Object.fromEntries(STAGES.map((s) => [s.name, s.label])) as Record<StageName, string>),
  done: 'Done',
};

/** Which worker runs an activity: the main queue, an LLM provider's queue (`llm-<provider>`, or
 * the main queue when the run names no provider), or the Lean queue. */
export type ActivityQueue = 'main' | 'llm' | 'lean';

export interface ActivityEntry {
  /** The stage it serves; null: bookkeeping, no stage of the run. */
  stage: StageName | null;
  queue: ActivityQueue;
  /** `stage`: the stage's own activity; `tool`: a helper inside a stage (named beside it). */
  role: 'stage' | 'tool';
  /** An activity today's workflow code no longer schedules: it stays registered (and its
   * events read as its stage) for runs started before the `patched()` ID that replaced it,
   * until no such run can be open or replayed (docs/decisions/0012). */
  retiredBy?: string;
}

/** Every activity a workflow proxies; the compiler holds this to the activity interfaces
 * (common/activities.ts). */
export const ACTIVITIES = {
  decompose: { stage: 'decompose', queue: 'llm', role: 'stage' },
  retrieve: { stage: 'retrieve', queue: 'main', role: 'stage' },
  illustrate: { stage: 'illustrate', queue: 'main', role: 'stage' },
  formalize: { stage: 'formalize', queue: 'llm', role: 'stage' },
  // The one home of this legacy name: both stages' activity in runs started before the patch.
  draftStatement: { stage: 'formalize', queue: 'llm', role: 'stage', retiredBy: 'formalize-repair-activities' },
  agentStep: { stage: 'agent', queue: 'llm', role: 'tool' },
  draft: { stage: 'agent', queue: 'llm', role: 'tool' },
  compile: { stage: 'compile', queue: 'lean', role: 'stage' },
  screenStatement: { stage: null, queue: 'lean', role: 'tool' },
  repair: { stage: 'repair', queue: 'llm', role: 'stage' },
  resolveName: { stage: 'repair', queue: 'lean', role: 'tool' },
  inspectName: { stage: 'repair', queue: 'lean', role: 'tool' },
  judge: { stage: 'judge', queue: 'llm', role: 'stage' },
  equivalence: { stage: 'judge', queue: 'lean', role: 'tool' },
  llmUsage: { stage: null, queue: 'main', role: 'tool' },
} as const satisfies Record<string, ActivityEntry>;

export type ActivityName = keyof typeof ACTIVITIES;

function activitiesWhere(keep: (entry: ActivityEntry) => boolean): ActivityName[] {
  return (Object.keys(ACTIVITIES) as ActivityName[]).filter((name) => keep(ACTIVITIES[name]));
}

/** The activities that call an LLM: what a provider's queue runs. */
export const LLM_ACTIVITY_NAMES = activitiesWhere((a) => a.queue === 'llm') as Array<
  { [K in ActivityName]: (typeof ACTIVITIES)[K]['queue'] extends 'llm' ? K : never }[ActivityName]
>;

/** The activities kept only for runs started before the patch that retired them (an old run's
 * events, failures and replays still name them), with that patch's ID. */
export const RETIRED_ACTIVITIES: ReadonlyArray<{ activity: ActivityName; patch: string }> = (
  Object.keys(ACTIVITIES) as ActivityName[]
).flatMap((activity) => {
  const patch = (ACTIVITIES[activity] as ActivityEntry).retiredBy;
  return patch ? [{ activity, patch }] : [];
});

/** The activities a run started by today's code may schedule (the retired ones left out). */
export const CURRENT_ACTIVITY_NAMES = activitiesWhere((a) => a.retiredBy === undefined);

/** The stage an activity serves, for activities a workflow schedules before naming a stage;
 * undefined for bookkeeping and for names this registry does not know. */
export function stageOfActivity(activity: string): StageName | undefined {
  return (ACTIVITIES as Record<string, ActivityEntry | undefined>)[activity]?.stage ?? undefined;
}

/** Whether an activity is bookkeeping (no stage of the run: no events for it). */
export function isBookkeeping(activity: string): boolean {
  return (ACTIVITIES as Record<string, ActivityEntry | undefined>)[activity]?.stage === null;
}

/** Whether an activity is a helper inside its stage, to be named beside the stage's words
 * (an unknown activity is, too). */
export function isStageTool(activity: string): boolean {
  return (ACTIVITIES as Record<string, ActivityEntry | undefined>)[activity]?.role !== 'stage';
}
