// The shapes driftline answers with, defined once as TypeBox schemas: a run's view, a run in a
// list, a run's events, a sweep's status and a Lean check's result. The client's types are
// derived from them (Static<>); the HTTP API uses them as response schemas (adding its links),
// the MCP tools convert their JSON Schema to zod, and the web page imports the types. Where a
// richer TypeScript type exists already (a run's result, its progress, a sweep's progress), the
// schema states it and the checks at the end keep the two equal.
import { Type, type Static, type TLiteral, type TSchema, type TUnion } from 'typebox';
import { OUTCOMES } from './outcomes';
import type { FormalizeResult, Progress } from './run-types';
import type { CheckItemResult } from './checks';
import type { CompileResult, EquivalenceResult } from './lean-types';
import { STAGE_NAMES, type Stage } from './stages';
import type { SweepProgress, SweepStatus } from './sweep';
import { PROVIDER_BATCH_STATUSES, type SweepBatchCounts } from './llm-batch';

/** A union of the literals of a list, typed as the list's union. */
export function literalUnion<const T extends readonly string[]>(
  values: T,
  options: { description?: string } = {},
): TUnion<{ -readonly [K in keyof T]: TLiteral<T[K]> }> {
  return Type.Union(
    values.map((v) => Type.Literal(v)),
    options,
  ) as unknown as TUnion<{ -readonly [K in keyof T]: TLiteral<T[K]> }>;
}

/** `failed` covers runs that failed, timed out or were terminated; `canceled` was asked for. */
export const RUN_STATUSES = ['running', 'completed', 'failed', 'canceled'] as const;
export const RunStatusSchema = literalUnion(RUN_STATUSES);
export type RunStatus = Static<typeof RunStatusSchema>;

export const OutcomeSchema = literalUnion(OUTCOMES, { description: OUTCOMES.join(', ') });

const STAGE_WORDS = `${STAGE_NAMES.join(', ')}; \`starting\` before the first, \`done\` at the end`;
const StageSchema = Type.Unsafe<Stage>(literalUnion(['starting', ...STAGE_NAMES, 'done'], { description: STAGE_WORDS }));

const ProgressObject = Type.Object(
  {
    stage: StageSchema,
    round: Type.Integer({ description: 'Repair round in progress (0 before any repair)' }),
    completed: Type.Array(StageSchema, { description: 'Stages finished so far, in order (repeated for repair rounds)' }),
    step: Type.Optional(Type.Integer({ description: 'Agent runs: the LLM step in progress' })),
    lastTool: Type.Optional(
      Type.Union([Type.String(), Type.Null()], { description: 'Agent runs: the last tool called (null: none, or an answer)' }),
    ),
  },
  { additionalProperties: false },
);
/** Where a running run is (the workflow's `progress` query). */
export const ProgressSchema = Type.Unsafe<Progress>(ProgressObject);

/** One step of an agent run. */
export const AgentStepSchema = Type.Object(
  {
    step: Type.Integer(),
    tool: Type.Union([Type.String(), Type.Null()], { description: 'The function called, or null for an answer without a tool call' }),
    arguments: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    output: Type.String({ description: 'What the tool returned, shortened' }),
    error: Type.Optional(Type.Boolean()),
    accepted: Type.Optional(Type.Boolean()),
    tokens: Type.Object({ prompt: Type.Integer(), completion: Type.Integer(), total: Type.Integer() }),
    ms: Type.Number(),
  },
  { additionalProperties: false },
);

/** The run's result: the main fields stated, the rest (premises, attempts, …) passed through;
 * its type is the workflow's (common/run-types.ts, FormalizeResult). */
export const ResultSchema = Type.Unsafe<FormalizeResult>(
  Type.Object(
    {
      statement: Type.String(),
      library: Type.String(),
      formalStatement: Type.String({ description: 'The Lean statement' }),
      compiled: Type.Boolean(),
      checked: Type.Boolean(),
      outcome: OutcomeSchema,
      attempts: Type.Array(Type.Unknown()),
      judge: Type.Union([
        Type.Object({ grade: Type.Number(), faithful: Type.Boolean(), explanation: Type.String() }, { additionalProperties: true }),
        Type.Null(),
      ]),
      stages: Type.Array(Type.String()),
      steps: Type.Optional(Type.Array(AgentStepSchema, { description: 'Agent runs: every step, in order' })),
    },
    { additionalProperties: true },
  ),
);

/** Why a run failed, in words a user can act on (client/run-failure.ts). */
export const RunFailureSchema = Type.Object(
  {
    stage: Type.Optional(Type.String({ description: 'The activity (stage) that failed, when an activity did' })),
    type: Type.Optional(Type.String({ description: 'The failure type (e.g. `LlmUnavailable`), when it has one' })),
    message: Type.String({ description: 'The whole message: stage, then the reason with its context' }),
  },
  { additionalProperties: false },
);
export type RunFailure = Static<typeof RunFailureSchema>;

/** A run's state: each door adds its own `links`. */
export const RunViewProperties = {
  id: Type.String(),
  status: RunStatusSchema,
  progress: Type.Union([ProgressSchema, Type.Null()]),
  result: Type.Optional(ResultSchema),
  error: Type.Optional(Type.String({ description: 'Why the run failed: the stage, and the reason with the model and endpoint' })),
  failure: Type.Optional(RunFailureSchema),
};
export const RunViewSchema = Type.Object(RunViewProperties, { additionalProperties: false });
export type RunView = Static<typeof RunViewSchema>;

/** A run in a list (a Temporal visibility row and the run's memo); each door adds its `links`. */
export const RunSummaryProperties = {
  id: Type.String(),
  status: RunStatusSchema,
  startedAt: Type.String(),
  closedAt: Type.Optional(Type.String()),
  library: Type.Optional(Type.String()),
  config: Type.Optional(Type.String()),
  stage: Type.Optional(Type.String()),
  outcome: Type.Optional(Type.String()),
  sweep: Type.Optional(Type.String()),
  statement: Type.Optional(Type.String({ description: "The statement's first words (runs started from the API, CLI or page)" })),
  item: Type.Optional(Type.String({ description: "The benchmark item's ID (runs of a sweep)" })),
};
export const RunSummarySchema = Type.Object(RunSummaryProperties, { additionalProperties: false });
export type RunSummary = Static<typeof RunSummarySchema>;

/** The kinds of event a run's stream carries. */
export const RUN_EVENT_TYPES = [
  'run.started',
  'stage.started',
  'stage.completed',
  'stage.failed',
  'run.completed',
  'run.failed',
  'run.canceled',
] as const;
export type RunEventType = (typeof RUN_EVENT_TYPES)[number];

/** One event of a run's stream (client/run-events.ts): the JSON in an SSE event's `data`. */
export const RunEventSchema = Type.Object(
  {
    seq: Type.Integer({ minimum: 1, description: "The event's sequence number (its Temporal history event id); SSE's `id`" }),
    type: literalUnion(RUN_EVENT_TYPES),
    stage: Type.String({ description: `The workflow's stage: ${STAGE_WORDS}` }),
    activity: Type.Optional(Type.String({ description: 'The activity behind a stage event (e.g. `compile`, `resolveName`)' })),
    round: Type.Optional(
      Type.Integer({ minimum: 0, description: 'Compile round (0 = first attempt) for compile events; repair round for repair events' }),
    ),
    step: Type.Optional(
      Type.Integer({ minimum: 1, description: "The n-th activity of the run (1-based): an agent's steps count up here" }),
    ),
    time: Type.String(),
    compile: Type.Optional(
      Type.Object(
        {
          status: Type.String(),
          errors: Type.Integer({ minimum: 0 }),
          refusedBy: Type.Optional(literalUnion(['tampering', 'disagreement'] as const)),
        },
        {
          additionalProperties: false,
          description:
            'compile: `ok` | `error` | `refused` (by the screen, before Lean, unless `refusedBy`: `tampering`, a forged REPL reply, or `disagreement`, Lean could not parse what the screen accepted) | `timeout` | `skipped`, and how many error messages came back',
        },
      ),
    ),
    judge: Type.Optional(
      Type.Object(
        { grade: Type.Number(), faithful: Type.Boolean() },
        { additionalProperties: false, description: 'judge: the grade and verdict' },
      ),
    ),
    outcome: Type.Optional(Type.String({ description: 'run.completed: the outcome' })),
    compiled: Type.Optional(Type.Boolean({ description: 'run.completed: whether it compiled' })),
    error: Type.Optional(Type.String({ description: 'Why a stage or the run failed, in words' })),
  },
  { additionalProperties: false },
);
export type RunEvent = Static<typeof RunEventSchema>;

const SWEEP_STATUSES = ['running', 'paused', 'completed', 'cancelled', 'failed', 'budget-exhausted'] as const;
const RETRIED = 'units started again by `driftline sweep retry` (each once); present once the sweep has been retried';
const SweepCountsSchema = Type.Object(
  {
    total: Type.Integer(),
    done: Type.Integer({ description: 'runs finished (recorded), failed ones included' }),
    failed: Type.Integer({ description: 'runs recorded as failed after their last attempt' }),
    running: Type.Integer(),
    retried: Type.Optional(Type.Integer({ description: RETRIED })),
  },
  { additionalProperties: false },
);

/** A sweep's status: done, running and failed runs per configuration, rate and ETA; each door
 * adds its `links`. */
export const SweepProgressProperties = {
  sweepId: Type.String(),
  status: literalUnion(SWEEP_STATUSES, {
    description: "`budget-exhausted`: the sweep file's LLM budget was reached; no run started after that (see `budget.reached`)",
  }),
  ...SweepCountsSchema.properties,
  perConfig: Type.Record(Type.String(), SweepCountsSchema),
  retries: Type.Integer({ description: 'failed attempts retried by the retry policy' }),
  rate: Type.Number({ description: 'finished runs per unpaused second' }),
  etaSeconds: Type.Union([Type.Number(), Type.Null()], { description: 'seconds to go at that rate; null before the first run finishes' }),
  generation: Type.Integer({ description: 'times the sweep workflow continued as new' }),
  startedAt: Type.String(),
  budget: Type.Optional(
    Type.Object(
      {
        tokens: Type.Optional(Type.Integer()),
        costUsd: Type.Optional(Type.Number()),
        used: Type.Object({ tokens: Type.Integer(), costUsd: Type.Optional(Type.Number()) }, { additionalProperties: false }),
        reached: Type.Optional(Type.String({ description: 'why no more runs start' })),
      },
      { additionalProperties: false, description: "the sweep's LLM budget and what its runs used (sweeps with a budget)" },
    ),
  ),
};
export const SweepProgressSchema = Type.Object(SweepProgressProperties, { additionalProperties: false });

/** One LLM provider's quota over the last minute, for the whole deployment (infra/llm-quota.ts):
 * shown beside a sweep that is still going (API, web card, `sweep status`). */
export const LlmQuotaSchema = Type.Object(
  {
    provider: Type.String(),
    binding: Type.Union([literalUnion(['tokens', 'requests', 'in-flight'] as const), Type.Null()], {
      description: 'the limit closest to full over the last minute',
    }),
    utilisation: Type.Union([Type.Number(), Type.Null()], { description: 'use of the binding limit, as a fraction of it' }),
    summary: Type.String({ description: 'the line `driftline sweep status` prints for the provider' }),
  },
  { additionalProperties: false },
);
export type LlmQuotaView = Static<typeof LlmQuotaSchema>;

/** A batch-mode sweep's provider batches (common/llm-batch.ts), beside its status (API, web
 * card, `sweep status --json` `batches`). */
export const SweepBatchesSchema = Type.Object(
  {
    inFlight: Type.Integer({ description: 'batches at the provider not yet ended' }),
    submitted: Type.Integer({ description: 'batches submitted' }),
    completed: Type.Integer({ description: 'batches that came back completed (some lines may have failed)' }),
    failed: Type.Integer({ description: 'batches that failed, expired or were cancelled' }),
    requests: Type.Integer({ description: 'request lines submitted, resubmissions included' }),
    resubmitted: Type.Integer({ description: 'lines sent again after a failed or expired batch or an error line' }),
    synchronous: Type.Integer({ description: 'calls answered one at a time after their resubmissions ran out' }),
    batches: Type.Array(
      Type.Object(
        {
          id: Type.String(),
          provider: Type.String(),
          model: Type.String(),
          status: literalUnion(PROVIDER_BATCH_STATUSES),
          requests: Type.Integer(),
          since: Type.String({ description: 'ISO time the batch was submitted' }),
        },
        { additionalProperties: false },
      ),
      { description: 'the batches in flight' },
    ),
  },
  { additionalProperties: false },
);
export type SweepBatchesView = Static<typeof SweepBatchesSchema>;

const LeanMessageSchema = Type.Object(
  {
    severity: literalUnion(['error', 'warning', 'info'] as const),
    line: Type.Integer(),
    column: Type.Integer(),
    endLine: Type.Optional(Type.Integer()),
    endColumn: Type.Optional(Type.Integer()),
    text: Type.String(),
  },
  { additionalProperties: false },
);

/** One statement's Lean check (client/checks.ts): Lean's verdict, or why the check failed. */
export const CheckResultProperties = {
  compiled: Type.Boolean(),
  status: literalUnion(['ok', 'error', 'refused', 'skipped', 'timeout', 'failed'] as const, {
    description:
      'ok/error/timeout: Lean decided; refused: the screen, before Lean; skipped: no Lean configured; failed: the check itself failed',
  }),
  messages: Type.Array(LeanMessageSchema),
  reason: Type.Optional(Type.String()),
  refusedBy: Type.Optional(
    literalUnion(['tampering', 'disagreement'] as const, {
      description:
        'Set on a `refused` result the screen did not decide: the Lean REPL wrote something other than the one reply to the check (tampering), or Lean could not parse a text the screen accepted (disagreement). Never compiled.',
    }),
  ),
  durationMs: Type.Number(),
  peakRssMb: Type.Optional(Type.Number({ description: 'Peak resident memory (MB) of the Lean REPL while it checked the statement' })),
  equivalent: Type.Optional(Type.Boolean({ description: 'With gold: whether Lean proved both directions' })),
  equivalence: Type.Optional(Type.Unsafe<EquivalenceResult>(Type.Object({ equivalent: Type.Boolean() }, { additionalProperties: true }))),
  error: Type.Optional(Type.String({ description: 'Why the check failed (status `failed`)' })),
};
/** A batch's result for one statement, under the caller's name for it. */
export const CheckResultSchema = Type.Object(
  { id: Type.Optional(Type.String({ description: "The caller's name for the statement" })), ...CheckResultProperties },
  { additionalProperties: false },
);

// The schemas state what the workflows' own types say; these fail to compile when they part.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Stated<T extends TSchema> = Static<T>;
export const WIRE_MATCHES_TYPES: {
  progress: Same<Stated<typeof ProgressObject>, Progress>;
  sweep: Same<Stated<typeof SweepProgressSchema>, SweepProgress>;
  sweepStatus: Same<Stated<typeof SweepProgressProperties.status>, SweepStatus>;
  leanMessage: Same<Stated<typeof LeanMessageSchema>, CompileResult['messages'][number]>;
  checkResult: Same<Stated<typeof CheckResultSchema>, CheckItemResult>;
  sweepBatches: Same<Stated<typeof SweepBatchesSchema>, SweepBatchCounts>;
} = { progress: true, sweep: true, sweepStatus: true, leanMessage: true, checkResult: true, sweepBatches: true };
