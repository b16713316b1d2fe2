// The activities the workflows proxy, by task queue: their signatures, and the queue names.
import type { AgentStepInput, AgentStepOutput } from './agent-types';
import type {
  CompileResult,
  EquivalenceInput,
  EquivalenceResult,
  InspectNameInput,
  LeanMessage,
  NameInfo,
  ResolveNameInput,
  ResolveNameResult,
} from './lean-types';
import type { LlmMeter, LlmUsageReport } from './llm-types';
import type { Example, IllustrateInput, RetrieveInput, RetrieveOutput, SubQuery } from './retrieval-types';
import type { FormalizeStageInput, JudgeInput, JudgeVerdict, RepairStageInput } from './run-types';
import type { ActivityName } from './stages';

/** Activities of the main task queue. */
export interface MainActivities {
  decompose(input: { statement: string; meter?: LlmMeter }): Promise<SubQuery[]>;
  /** What the run's LLM calls used so far (the ledger in the results database). */
  llmUsage(input: { runId: string }): Promise<LlmUsageReport>;
  retrieve(input: RetrieveInput): Promise<RetrieveOutput>;
  illustrate(input: IllustrateInput): Promise<Example[]>;
  /** The formalize stage: the first Lean statement of a run. */
  formalize(input: FormalizeStageInput): Promise<string>;
  /** The repair stage: a new Lean statement from the last attempt and Lean's messages on it. */
  repair(input: RepairStageInput): Promise<string>;
  /** Both stages under their old activity name (a repair when `repair` is set): runs started
   * before the 'formalize-repair-activities' patch call it. */
  draftStatement(input: FormalizeStageInput): Promise<string>;
  judge(input: JudgeInput): Promise<JudgeVerdict>;
  /** One LLM step of the agent: the conversation so far in, the model's next message out. */
  agentStep(input: AgentStepInput): Promise<AgentStepOutput>;
  /** The `draft` tool: a Lean draft from the translator model (free text). */
  draft(input: { statement: string; meter?: LlmMeter }): Promise<string>;
}

/** Activities of the `lean` task queue. */
export interface LeanActivities {
  /** `domain`: whose text it is (common/trust-domain.ts); absent, driftline's own. */
  compile(input: { code: string; domain?: string }): Promise<CompileResult>;
  /** The statement sandbox alone (no Lean): why the code may not reach Lean, or null. */
  screenStatement(input: { code: string }): Promise<LeanMessage | null>;
  inspectName(input: InspectNameInput): Promise<NameInfo>;
  resolveName(input: ResolveNameInput): Promise<ResolveNameResult>;
  equivalence(input: EquivalenceInput): Promise<EquivalenceResult>;
}

export const MAIN_TASK_QUEUE = 'driftline';

export const LEAN_TASK_QUEUE = 'lean';

/** True only while the stage registry (stages.ts) names exactly the activities above: a new
 * activity without its entry, or an entry without its activity, does not compile. */
export const STAGE_REGISTRY_COMPLETE: [
  Exclude<keyof MainActivities | keyof LeanActivities, ActivityName>,
  Exclude<ActivityName, keyof MainActivities | keyof LeanActivities>,
] extends [never, never]
  ? true
  : never = true;
