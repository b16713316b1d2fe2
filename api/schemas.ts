// Response schemas shared by the routes; the OpenAPI document is generated from these and the
// request schemas beside each route, so the document and the validation never disagree.
import { Type, type Static, type TLiteral, type TUnion } from '@fastify/type-provider-typebox';
import { OUTCOMES } from '../common/outcomes';
import { RUN_EVENT_TYPES } from '../client/run-events';
import { RUN_STATUSES } from '../client/runs';
import { HttpProblem } from './problem';

/** A union of the literals of a list, typed as the list's union (a plain array would type as never). */
function literalUnion<const T extends readonly string[]>(values: T): TUnion<{ -readonly [K in keyof T]: TLiteral<T[K]> }> {
  return Type.Union(values.map((v) => Type.Literal(v))) as unknown as TUnion<{ -readonly [K in keyof T]: TLiteral<T[K]> }>;
}

export const StatusSchema = literalUnion(RUN_STATUSES);
export const OutcomeSchema = literalUnion(OUTCOMES);

/** Run ids: what a caller may choose, and what sweeps use (`<sweep>/<config>/<item>/<sample>`). */
export const ID_PATTERN = '^(?!\\.{1,2}(?:/|$))(?!.*/\\.{1,2}(?:/|$))[A-Za-z0-9._:-]+(?:/[A-Za-z0-9._:-]+)*$';
export const ID_MAX = 200;
export const ID_RULE =
  `"id" may use letters A-Z and a-z, digits, ".", "_", ":" and "-", with "/" between parts (no empty, "." or ".." parts), ` +
  `at most ${ID_MAX} characters; e.g. "my-sweep/drift/item-1/0". In a URL write "/" inside an id as %2F.`;

/** The `Idempotency-Key` header of a start route: the ID of what it starts when the body has none. */
export function idempotencyHeaders(what: string) {
  return Type.Object({
    'idempotency-key': Type.Optional(
      Type.String({ minLength: 1, maxLength: ID_MAX, pattern: ID_PATTERN, description: `Used as the ${what} id when the body has none` }),
    ),
  });
}

/** The ID a start request asks for: the body's `id`, else its Idempotency-Key (400 when both are
 * sent and differ). */
export function requestedId(headers: unknown, bodyId: string | undefined): string | undefined {
  const key = (headers as { 'idempotency-key'?: string })['idempotency-key'];
  if (key && bodyId && key !== bodyId) {
    throw new HttpProblem(400, `the Idempotency-Key header ("${key}") and "id" ("${bodyId}") differ; send one, or the same value in both`);
  }
  return bodyId ?? key;
}

export const RunLinks = Type.Object(
  {
    self: Type.String(),
    events: Type.String({ description: 'Server-sent events of the run' }),
    temporalUi: Type.String({ description: "The run's page in the Temporal Web UI" }),
  },
  { additionalProperties: false },
);

export const ProgressSchema = Type.Object(
  {
    stage: Type.String(),
    round: Type.Integer(),
    completed: Type.Array(Type.String()),
    step: Type.Optional(Type.Integer({ description: 'Agent runs: the LLM step in progress' })),
    lastTool: Type.Optional(
      Type.Union([Type.String(), Type.Null()], { description: 'Agent runs: the last tool called (null: none, or an answer)' }),
    ),
  },
  { additionalProperties: false },
);

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

/** The run's result: the main fields typed, the rest (premises, attempts, …) passed through. */
export const ResultSchema = Type.Object(
  {
    statement: Type.String(),
    library: Type.String(),
    formalStatement: Type.String(),
    compiled: Type.Boolean(),
    checked: Type.Boolean(),
    outcome: Type.String(),
    attempts: Type.Array(Type.Unknown()),
    judge: Type.Union([
      Type.Object({ grade: Type.Number(), faithful: Type.Boolean(), explanation: Type.String() }, { additionalProperties: true }),
      Type.Null(),
    ]),
    stages: Type.Array(Type.String()),
    steps: Type.Optional(Type.Array(AgentStepSchema, { description: 'Agent runs: every step, in order' })),
  },
  { additionalProperties: true },
);

export const RunViewSchema = Type.Object(
  {
    id: Type.String(),
    status: StatusSchema,
    progress: Type.Union([ProgressSchema, Type.Null()]),
    result: Type.Optional(ResultSchema),
    /** Why a failed run failed: the stage, and the reason with the model and endpoint. */
    error: Type.Optional(Type.String()),
    failure: Type.Optional(
      Type.Object(
        { stage: Type.Optional(Type.String()), type: Type.Optional(Type.String()), message: Type.String() },
        { additionalProperties: false },
      ),
    ),
    links: RunLinks,
  },
  { additionalProperties: false },
);

export const StartedSchema = Type.Object(
  {
    id: Type.String(),
    /** true: a run with this id existed already, started by the same request; nothing new started. */
    existing: Type.Optional(Type.Boolean()),
    links: RunLinks,
  },
  { additionalProperties: false },
);

export const RunSummarySchema = Type.Object(
  {
    id: Type.String(),
    status: StatusSchema,
    startedAt: Type.String(),
    closedAt: Type.Optional(Type.String()),
    library: Type.Optional(Type.String()),
    config: Type.Optional(Type.String()),
    stage: Type.Optional(Type.String()),
    outcome: Type.Optional(Type.String()),
    sweep: Type.Optional(Type.String()),
    statement: Type.Optional(Type.String({ description: "The statement's first words (runs started from the API, CLI or page)" })),
    item: Type.Optional(Type.String({ description: "The benchmark item's ID (runs of a sweep)" })),
    links: RunLinks,
  },
  { additionalProperties: false },
);

export const RunListSchema = Type.Object(
  {
    items: Type.Array(RunSummarySchema),
    nextPageToken: Type.Optional(Type.String({ description: 'Pass as pageToken for the next page; absent on the last page' })),
  },
  { additionalProperties: false },
);

export const CancelSchema = Type.Object(
  {
    id: Type.String(),
    status: Type.Literal('canceling'),
    links: RunLinks,
  },
  { additionalProperties: false },
);

export const LibrarySchema = Type.Object(
  {
    name: Type.String(),
    default: Type.Boolean(),
    /** The version the library's alias names (what runs search), if built. */
    current: Type.Optional(Type.String()),
    versions: Type.Array(
      Type.Object(
        {
          version: Type.String(),
          revision: Type.String(),
          embedder: Type.String(),
          declarations: Type.Integer(),
          createdAt: Type.String(),
          complete: Type.Boolean(),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

export const LibraryListSchema = Type.Object({ items: Type.Array(LibrarySchema) }, { additionalProperties: false });

export const SearchResultSchema = Type.Object(
  {
    library: Type.String(),
    version: Type.String(),
    query: Type.String(),
    items: Type.Array(
      Type.Object(
        {
          name: Type.String(),
          kind: Type.String(),
          signature: Type.String(),
          module: Type.Optional(Type.String()),
          score: Type.Number(),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

/** What the main worker learnt about one LLM provider (engines/llm/provider.ts, ProviderStatus). */
const ProviderStatusSchema = Type.Object(
  {
    baseURL: Type.String(),
    structuredOutput: Type.Union([Type.Literal('json_schema'), Type.Literal('json_object'), Type.Literal('prompt')]),
    source: Type.Union([Type.Literal('configured'), Type.Literal('probe'), Type.Literal('fallback'), Type.Literal('default')]),
    detail: Type.String(),
    updatedAt: Type.String(),
    foldSystemPrompt: Type.Boolean(),
    busyUntil: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

export const ReadinessSchema = Type.Object(
  {
    ready: Type.Boolean(),
    checks: Type.Record(
      Type.String(),
      Type.Object({ ok: Type.Boolean(), detail: Type.Optional(Type.String()) }, { additionalProperties: false }),
    ),
    missing: Type.Array(Type.String()),
    warnings: Type.Optional(Type.Array(Type.String())),
    /** The default LLM provider as the main worker found it. */
    llm: Type.Optional(ProviderStatusSchema),
    /** Every configured provider the main worker has reported on, by provider name. */
    llmProviders: Type.Optional(Type.Record(Type.String(), ProviderStatusSchema)),
  },
  { additionalProperties: false },
);

/** What /readyz answers: `missing` lists services not configured (the stack runs, but says what
 * it cannot do); `warnings` things that work but need attention (e.g. Temporal overloaded). */
export type ReadinessReport = Static<typeof ReadinessSchema>;

/** One event of a run's stream (client/run-events.ts, RunEvent): the JSON in an SSE event's `data`. */
export const RunEventSchema = Type.Object(
  {
    seq: Type.Integer({ minimum: 1, description: "The event's sequence number (its Temporal history event id); SSE's `id`" }),
    type: literalUnion(RUN_EVENT_TYPES),
    stage: Type.String({
      description: 'decompose, retrieve, illustrate, formalize, compile, repair, judge; `starting` before the first, `done` at the end',
    }),
    activity: Type.Optional(Type.String()),
    round: Type.Optional(Type.Integer({ minimum: 0 })),
    step: Type.Optional(Type.Integer({ minimum: 1 })),
    time: Type.String(),
    compile: Type.Optional(Type.Object({ status: Type.String(), errors: Type.Integer({ minimum: 0 }) }, { additionalProperties: false })),
    judge: Type.Optional(Type.Object({ grade: Type.Number(), faithful: Type.Boolean() }, { additionalProperties: false })),
    outcome: Type.Optional(Type.String()),
    compiled: Type.Optional(Type.Boolean()),
    error: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

/** The last event of a stream that broke off (Temporal unreachable): reconnect with Last-Event-ID. */
export const StreamErrorSchema = Type.Object({ stage: Type.Literal('error'), error: Type.String() }, { additionalProperties: false });

/** One server-sent event as OpenAPI models `text/event-stream` (each event an object of its
 * fields); `data` is JSON text of RunEventSchema (or StreamErrorSchema for `event: error`). */
export const SseEventSchema = Type.Object(
  {
    event: literalUnion([...RUN_EVENT_TYPES, 'error'] as const),
    id: Type.Optional(Type.String({ pattern: '^[0-9]+$' })),
    data: Type.String({ contentMediaType: 'application/json', contentSchema: Type.Union([RunEventSchema, StreamErrorSchema]) }),
    retry: Type.Optional(Type.Integer()),
  },
  { additionalProperties: false },
);
