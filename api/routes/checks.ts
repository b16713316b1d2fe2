// Batch checks without an LLM (workflow `checkStatements`, client/checks.ts): start, read, list,
// follow as server-sent events. A statement or gold the screen refuses is that statement's result
// (`status: 'refused'` with the reason), not a 400 for the batch; a body that is not the schema is.
import { apiKeyDomain } from '../../common/trust-domain';
import type { FastifyPluginAsync } from 'fastify';
import { Type, type Static, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { SafetyPolicy } from '../../engines/lean/statement-safety';
import { CHECK_WORKFLOW_TYPE, followChecks, getChecks, listChecks, MAX_CHECK_STATEMENTS, startChecks } from '../../client/checks';
import { describeIf, temporalUiLink } from '../../client/runs';
import { HttpProblem, problemResponses } from '../problem';
import { CheckResultSchema } from '../../common/wire';
import { ID_MAX, ID_PATTERN, idempotencyHeaders, requestedId } from '../schemas';
import { IdParams } from './formalizations';
import { EventsHeaders, EventsQuery, eventStreams, resumeAfter } from '../sse';

export interface CheckRoutesOptions {
  temporal: Client;
  maxStatementChars: number;
  taskQueue?: string;
  leanTaskQueue?: string;
  screenPolicy?: SafetyPolicy;
  temporalUiUrl: string;
  namespace: string;
  keepAliveMs?: number;
}

const CheckStatus = Type.Union([Type.Literal('running'), Type.Literal('completed'), Type.Literal('failed'), Type.Literal('canceled')]);

function checksBody(maxStatementChars: number) {
  const lean = Type.String({ minLength: 1, maxLength: maxStatementChars, pattern: '\\S' });
  return Type.Object(
    {
      statements: Type.Array(
        Type.Object(
          {
            id: Type.Optional(Type.String({ minLength: 1, maxLength: 500, description: "The caller's name, echoed in the result" })),
            statement: {
              ...lean,
              description:
                'A Lean 4 text: the definitions the statement needs (def, abbrev, structure, …), then one theorem ending `:= by sorry`',
            },
            gold: Type.Optional({ ...lean, description: 'A reference statement: Lean checks that each proves the other' }),
          },
          { additionalProperties: false },
        ),
        { minItems: 1, maxItems: MAX_CHECK_STATEMENTS },
      ),
      // A caller-chosen batch ID makes a retried POST safe: the same ID never starts a second batch.
      id: Type.Optional(Type.String({ minLength: 1, maxLength: ID_MAX, pattern: ID_PATTERN })),
    },
    { additionalProperties: false },
  );
}

const StartHeaders = idempotencyHeaders('batch');

const ChecksLinks = Type.Object({ self: Type.String(), events: Type.String(), temporalUi: Type.String() }, { additionalProperties: false });

const CheckStartedSchema = Type.Object(
  { id: Type.String(), existing: Type.Optional(Type.Boolean()), links: ChecksLinks },
  { additionalProperties: false },
);

const ChecksViewSchema = Type.Object(
  {
    id: Type.String(),
    status: CheckStatus,
    startedAt: Type.String(),
    closedAt: Type.Optional(Type.String()),
    total: Type.Integer(),
    done: Type.Integer(),
    results: Type.Optional(Type.Array(CheckResultSchema)),
    error: Type.Optional(Type.String()),
    links: ChecksLinks,
  },
  { additionalProperties: false },
);

const ChecksListSchema = Type.Object(
  {
    items: Type.Array(
      Type.Object(
        { id: Type.String(), status: CheckStatus, startedAt: Type.String(), closedAt: Type.Optional(Type.String()), links: ChecksLinks },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

const ListQuery = Type.Object(
  { limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 20 })) },
  { additionalProperties: false },
);

const CheckSseSchema = Type.Object(
  {
    event: Type.Union([
      Type.Literal('check.finished'),
      Type.Literal('checks.completed'),
      Type.Literal('checks.failed'),
      Type.Literal('checks.canceled'),
      Type.Literal('error'),
    ]),
    id: Type.Optional(Type.String({ pattern: '^[0-9]+$' })),
    data: Type.String({ contentMediaType: 'application/json' }),
    retry: Type.Optional(Type.Integer()),
  },
  { additionalProperties: false },
);

export const checkRoutes: FastifyPluginAsync<CheckRoutesOptions> = async (fastify, options) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { temporal } = options;
  const body = checksBody(options.maxStatementChars);
  const self = (id: string) => `/v1/checks/${encodeURIComponent(id)}`;
  const links = (id: string) => ({
    self: self(id),
    events: `${self(id)}/events`,
    temporalUi: temporalUiLink(options.temporalUiUrl, options.namespace, id),
  });
  const send = eventStreams(app, options);

  app.post(
    '/v1/checks',
    {
      schema: {
        operationId: 'startChecks',
        summary: 'Check a batch of Lean statements (no LLM)',
        description:
          `Screens each statement (and gold), compiles it on the Lean queue and, with a gold, checks that the two prove each other. ` +
          `At most ${MAX_CHECK_STATEMENTS} statements. A statement the screen refuses is its result (status "refused" with the reason), ` +
          'not a 400. Answers 202 with the batch id; with an `id` (or Idempotency-Key) already taken by a batch, 200 with `existing: true`.',
        tags: ['checks'],
        body,
        headers: StartHeaders,
        response: { 202: CheckStartedSchema, 200: CheckStartedSchema, ...problemResponses(400, 401, 409, 413, 415, 429) },
      },
    },
    async (request, reply) => {
      const input = request.body as Static<typeof body>;
      const chosenId = requestedId(request.headers, input.id);
      try {
        const id = await startChecks(temporal, input.statements, {
          ...(chosenId ? { id: chosenId } : {}),
          ...(options.taskQueue ? { taskQueue: options.taskQueue } : {}),
          ...(options.leanTaskQueue ? { leanTaskQueue: options.leanTaskQueue } : {}),
          ...(options.screenPolicy ? { screenPolicy: options.screenPolicy } : {}),
          trustDomain: apiKeyDomain(request.apiKeyName),
        });
        return reply
          .status(202)
          .header('location', self(id))
          .send({ id, links: links(id) });
      } catch (err) {
        if (!(err instanceof WorkflowExecutionAlreadyStartedError) || !chosenId) throw err;
      }
      const takenBy = (await temporal.workflow.getHandle(chosenId).describe()).type;
      if (takenBy !== CHECK_WORKFLOW_TYPE) {
        throw new HttpProblem(409, `id "${chosenId}" belongs to a ${takenBy} workflow, not a batch of checks; choose another id`, {
          id: chosenId,
        });
      }
      return reply
        .status(200)
        .header('location', self(chosenId))
        .send({ id: chosenId, existing: true, links: links(chosenId) });
    },
  );

  app.get(
    '/v1/checks/:id',
    {
      schema: {
        operationId: 'getChecks',
        summary: 'Read a batch of checks: its status, progress and, once completed, one result per statement in order',
        tags: ['checks'],
        params: IdParams,
        response: { 200: ChecksViewSchema, ...problemResponses(400, 401, 404, 429) },
      },
    },
    async (request) => {
      const { id } = request.params as Static<typeof IdParams>;
      const view = await getChecks(temporal, id);
      if (!view) throw new HttpProblem(404, `no batch of checks with id "${id}"`, { id });
      return { ...view, links: links(id) };
    },
  );

  app.get(
    '/v1/checks',
    {
      schema: {
        operationId: 'listChecks',
        summary: "List batches of checks, newest first, from Temporal's visibility store",
        tags: ['checks'],
        querystring: ListQuery,
        response: { 200: ChecksListSchema, ...problemResponses(400, 401, 429) },
      },
    },
    async (request) => {
      const { limit } = request.query as Static<typeof ListQuery>;
      const items = await listChecks(temporal, { limit: limit ?? 20 });
      return { items: items.map((item) => ({ ...item, links: links(item.id) })) };
    },
  );

  app.get(
    '/v1/checks/:id/events',
    {
      schema: {
        operationId: 'getChecksEvents',
        summary: "A batch's progress as server-sent events",
        description:
          'One `check.finished` event per statement as it finishes (`index` is its position in the batch, `result` its result), then one of ' +
          "checks.completed (with a summary), checks.failed or checks.canceled, after which the stream ends. `id:` is the event's sequence " +
          'number: reconnect with Last-Event-ID (or ?after=) to continue.',
        tags: ['checks'],
        params: IdParams,
        querystring: EventsQuery,
        headers: EventsHeaders,
        response: {
          200: { description: 'An event stream', content: { 'text/event-stream': { schema: CheckSseSchema } } },
          ...problemResponses(400, 401, 404, 429),
        },
      },
    },
    async (request, reply) => {
      const { id } = request.params as Static<typeof IdParams>;
      const after = resumeAfter(request);
      const found = await describeIf(temporal, id, (type) => type === CHECK_WORKFLOW_TYPE);
      if (!found) throw new HttpProblem(404, `no batch of checks with id "${id}"`, { id });

      await send(
        request,
        reply,
        (signal) => followChecks(temporal, id, { after, signal }),
        { error: 'the event stream broke off; reconnect with Last-Event-ID' },
        { id },
      );
    },
  );
};
