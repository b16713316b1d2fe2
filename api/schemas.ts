// Response schemas shared by the routes; the OpenAPI document is generated from these and the
// request schemas beside each route, so the document and the validation never disagree.
import { Type, type Static } from '@fastify/type-provider-typebox';
import {
  literalUnion,
  OutcomeSchema,
  RUN_EVENT_TYPES,
  RunEventSchema,
  RunStatusSchema,
  RunSummaryProperties,
  RunViewProperties,
} from '../common/wire';
import { HttpProblem } from './problem';

export const StatusSchema = RunStatusSchema;
export { OutcomeSchema };

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

// The run's shapes are defined once (common/wire.ts); the API adds its links.
export const RunViewSchema = Type.Object({ ...RunViewProperties, links: RunLinks }, { additionalProperties: false });

export const StartedSchema = Type.Object(
  {
    id: Type.String(),
    /** true: a run with this id existed already, started by the same request; nothing new started. */
    existing: Type.Optional(Type.Boolean()),
    links: RunLinks,
  },
  { additionalProperties: false },
);

export const RunSummarySchema = Type.Object({ ...RunSummaryProperties, links: RunLinks }, { additionalProperties: false });

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
    /** The Lean workers' REPL tamperings and screen/Lean parse disagreements so far (decision
     * 0017), when there were any: holes found, the trust domains in the worker's log. */
    leanIntegrity: Type.Optional(
      Type.Object(
        {
          tampering: Type.Integer({ minimum: 0 }),
          disagreement: Type.Integer({ minimum: 0 }),
          lastAt: Type.Optional(Type.String()),
          lastKind: Type.Optional(Type.Union([Type.Literal('tampering'), Type.Literal('disagreement')])),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

/** What /readyz answers: `missing` lists services not configured (the stack runs, but says what
 * it cannot do); `warnings` things that work but need attention (e.g. Temporal overloaded). */
export type ReadinessReport = Static<typeof ReadinessSchema>;

/** One event of a run's stream: the JSON in an SSE event's `data` (common/wire.ts). */
export { RunEventSchema };

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
