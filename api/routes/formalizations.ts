// Formalization runs: start (idempotent by id), read, cancel, list.
import { apiKeyDomain } from '../../common/trust-domain';
import type { FastifyPluginAsync } from 'fastify';
import type { SafetyPolicy } from '../../engines/lean/statement-safety';
import { describeRefusal, screenText } from '../../engines/lean/screen-text';
import { Type, type Static, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import {
  BadPageTokenError,
  cancelFormalization,
  getFormalization,
  isFormalization,
  listFormalizations,
  requestDifferences,
  RunClosedError,
  RunNotFoundError,
  runInput,
  startFormalization,
  type StartRequest,
} from '../../client/runs';
import { HttpProblem, problemResponses, sendProblem } from '../problem';
import {
  CancelSchema,
  ID_MAX,
  ID_PATTERN,
  idempotencyHeaders,
  OutcomeSchema,
  requestedId,
  RunListSchema,
  RunViewSchema,
  StartedSchema,
  StatusSchema,
} from '../schemas';
import type { RunLinker } from '../links';
import { startRequestProblem } from '../../client/start-request';
import type { LlmCallPolicy } from '../../common/llm-call-policy';
import { RunConfigPatchSchema } from '../../common/run-config-schema';
import { StartLimiter } from '../start-limiter';

export interface FormalizationRoutesOptions {
  temporal: import('@temporalio/client').Client;
  libraries: string[];
  defaultLibrary: string;
  maxStatementChars: number;
  taskQueue?: string;
  links: RunLinker;
  /** The workers' LLM timeout and re-asks: every run's LLM activity timeouts follow them. */
  llm?: LlmCallPolicy;
  /** The LLM providers configured (a run's `config.providers` may name only these). */
  providerNames?: string[];
  /** Run starts in flight with Temporal at once, and how many more may wait (then 503). */
  startConcurrency?: { inFlight: number; waiting: number };
  /** What the screen lets through to Lean: a gold statement it refuses is a 400. */
  screenPolicy?: SafetyPolicy;
}

const NameList = Type.Array(Type.String({ minLength: 1, maxLength: 500 }), { maxItems: 1000 });

function startBody(maxStatementChars: number, libraries: readonly string[]) {
  return Type.Object(
    {
      statement: Type.String({ minLength: 1, maxLength: maxStatementChars, pattern: '\\S', description: 'The informal statement' }),
      // The configured libraries, so the document names them and a caller never guesses.
      // None configured (the default library not pulled yet): any name, refused with 503 below.
      library: Type.Optional(
        libraries.length
          ? Type.Unsafe<string>({ type: 'string', enum: [...libraries], description: 'Default: the first configured library' })
          : Type.String({ minLength: 1, maxLength: 200, description: 'No library is configured on this server' }),
      ),
      config: Type.Optional(RunConfigPatchSchema),
      exclude: Type.Optional(NameList),
      leaveOut: Type.Optional(
        Type.Union([Type.Literal('item'), Type.Literal('file')], {
          description: 'item: hide only the names in exclude; file: also the theorems of their source files (definitions stay)',
        }),
      ),
      goldPremises: Type.Optional(NameList),
      goldStatement: Type.Optional(Type.String({ minLength: 1, maxLength: maxStatementChars, pattern: '\\S' })),
      // A caller-chosen run ID makes a retried POST safe: the same ID never starts a second run.
      id: Type.Optional(Type.String({ minLength: 1, maxLength: ID_MAX, pattern: ID_PATTERN })),
    },
    { additionalProperties: false },
  );
}

const StartHeaders = idempotencyHeaders('run');

export const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: ID_MAX }) });

const ListQuery = Type.Object(
  {
    status: Type.Optional(StatusSchema),
    outcome: Type.Optional(OutcomeSchema),
    library: Type.Optional(Type.String({ minLength: 1, maxLength: 200, pattern: '^[A-Za-z0-9_.-]+$' })),
    sweep: Type.Optional(Type.String({ minLength: 1, maxLength: ID_MAX, pattern: '^[A-Za-z0-9._:/-]+$' })),
    pageToken: Type.Optional(Type.String({ minLength: 1, maxLength: 4096, pattern: '^[A-Za-z0-9_.-]+$' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 20 })),
  },
  { additionalProperties: false },
);

export const formalizationRoutes: FastifyPluginAsync<FormalizationRoutesOptions> = async (fastify, options) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { temporal, links } = options;
  const body = startBody(options.maxStatementChars, options.libraries);
  const limiter = new StartLimiter(options.startConcurrency?.inFlight ?? 8, options.startConcurrency?.waiting ?? 1000);

  app.post(
    '/v1/formalizations',
    {
      schema: {
        operationId: 'startFormalization',
        summary: 'Start a formalization run',
        description:
          'Starts a run and answers 202 with its id. With an `id` (or an Idempotency-Key header) a repeated request never starts a second run: ' +
          'the same request again answers 200 with `existing: true`; a different request with that id answers 409. ' +
          'Rules across fields (400 when broken): `id` and Idempotency-Key, when both are sent, must be equal; retrieval "oracle" needs ' +
          '`goldPremises`; in agent mode `tools` must include "write_file".',
        tags: ['formalizations'],
        body,
        headers: StartHeaders,
        response: { 202: StartedSchema, 200: StartedSchema, ...problemResponses(400, 401, 409, 413, 415, 429, 503) },
      },
    },
    async (request, reply) => {
      const input = request.body as Static<typeof body>;
      const chosenId = requestedId(request.headers, input.id);
      // The rules across fields, shared with the MCP tool `formalize`.
      const refused = startRequestProblem(input, options);
      if (refused) throw new HttpProblem(refused.status, refused.message);
      const library = input.library ?? options.defaultLibrary;
      // A gold statement is raw Lean from the caller: it never reaches Lean unless the screen
      // accepts it, and a refusal is the caller's to fix.
      if (input.goldStatement !== undefined) {
        const gold = screenText({ statement: input.goldStatement, as: 'gold' }, options.screenPolicy);
        if (!gold.accepted) throw new HttpProblem(400, describeRefusal(gold, 'goldStatement'));
      }
      const startRequest: StartRequest = {
        statement: input.statement,
        library,
        config: input.config,
        exclude: input.exclude,
        ...(input.leaveOut ? { leaveOut: input.leaveOut } : {}),
        goldPremises: input.goldPremises,
        goldStatement: input.goldStatement,
        id: chosenId,
        ...(options.llm ? { llm: options.llm } : {}),
        // The key's own REPLs: its gold statement and what its statement makes the formalizer write.
        trustDomain: apiKeyDomain(request.apiKeyName),
      };
      try {
        const started = await limiter.run(() => startFormalization(temporal, startRequest, options.taskQueue));
        if (!started) {
          reply.header('retry-after', '5');
          throw new HttpProblem(503, 'too many runs are being started at once; retry in 5 s');
        }
        const id = started.value;
        return reply
          .status(202)
          .header('location', links.self(id))
          .send({ id, links: links.run(id) });
      } catch (err) {
        if (!(err instanceof WorkflowExecutionAlreadyStartedError) || !chosenId) throw err;
      }
      // The id is taken: the same request again is a harmless retry; a different one is refused.
      const takenBy = (await temporal.workflow.getHandle(chosenId).describe()).type;
      if (!isFormalization(takenBy)) {
        throw new HttpProblem(409, `id "${chosenId}" belongs to a ${takenBy} workflow, not a formalization run; choose another id`, {
          id: chosenId,
        });
      }
      const existing = await runInput(temporal, chosenId);
      const differences = existing ? requestDifferences(existing, startRequest) : [];
      if (differences.length > 0) {
        throw new HttpProblem(
          409,
          `a run with id "${chosenId}" already exists with a different ${differences.join(', ')}; choose another id to start a new run`,
          {
            id: chosenId,
            differences,
          },
        );
      }
      return reply
        .status(200)
        .header('location', links.self(chosenId))
        .send({ id: chosenId, existing: true, links: links.run(chosenId) });
    },
  );

  app.get(
    '/v1/formalizations/:id',
    {
      schema: {
        operationId: 'getFormalization',
        summary: 'Read a run: its status, progress and, once completed, its result',
        description: 'Write "/" inside an id as %2F.',
        tags: ['formalizations'],
        params: IdParams,
        response: { 200: RunViewSchema, ...problemResponses(400, 401, 404, 429) },
      },
    },
    async (request) => {
      const { id } = request.params as Static<typeof IdParams>;
      const view = await getFormalization(temporal, id);
      if (!view) throw new HttpProblem(404, `no formalization with id "${id}"`, { id });
      return { ...view, links: links.run(id) };
    },
  );

  app.post(
    '/v1/formalizations/:id/cancel',
    {
      schema: {
        operationId: 'cancelFormalization',
        summary: 'Cancel a running run',
        description:
          'Asks the run to stop; its stage in progress is canceled and the run ends as `canceled`. 409 when it has already ended.',
        tags: ['formalizations'],
        params: IdParams,
        response: { 202: CancelSchema, ...problemResponses(400, 401, 404, 409, 429) },
      },
    },
    async (request, reply) => {
      const { id } = request.params as Static<typeof IdParams>;
      try {
        await cancelFormalization(temporal, id);
      } catch (err) {
        if (err instanceof RunNotFoundError) throw new HttpProblem(404, err.message, { id });
        if (err instanceof RunClosedError) throw new HttpProblem(409, err.message, { id });
        throw err;
      }
      return reply.status(202).send({ id, status: 'canceling' as const, links: links.run(id) });
    },
  );

  app.get(
    '/v1/formalizations',
    {
      schema: {
        operationId: 'listFormalizations',
        summary: "List runs, newest first, from Temporal's visibility store",
        tags: ['formalizations'],
        querystring: ListQuery,
        response: { 200: RunListSchema, ...problemResponses(400, 401, 429) },
      },
    },
    async (request) => {
      const query = request.query as Static<typeof ListQuery>;
      try {
        const page = await listFormalizations(temporal, query);
        return { ...page, items: page.items.map((item) => ({ ...item, links: links.run(item.id) })) };
      } catch (err) {
        if (err instanceof BadPageTokenError) throw new HttpProblem(400, err.message);
        throw err;
      }
    },
  );

  // Ids with "/" (sweep items) written unencoded: `/v1/formalizations/a/b` reads run "a/b".
  // Not counted in a 405's Allow header: on `/v1/formalizations/x/cancel` it only explains the %2F.
  app.get('/v1/formalizations/*', { schema: { hide: true }, config: { inAllow: false } }, async (request, reply) => {
    const rest = (request.params as { '*': string })['*'];
    if (rest.length > ID_MAX * 3) return sendProblem(reply, 414, 'the run id in the URL is too long');
    if (rest === '') throw new HttpProblem(404, 'no run id in the URL');
    if (/\/(events|cancel)$/.test(rest)) {
      throw new HttpProblem(
        404,
        `write "/" inside a run id as %2F here: ${links.self(rest.replace(/\/(events|cancel)$/, ''))}/${rest.split('/').pop()}`,
      );
    }
    const view = await getFormalization(temporal, rest);
    if (!view) throw new HttpProblem(404, `no formalization with id "${rest.slice(0, ID_MAX)}"`);
    return reply.send({ ...view, links: links.run(rest) });
  });
};
