// The HTTP API: start formalization runs and read them back; health and readiness.
import Fastify, { type FastifyError, type FastifyInstance } from 'fastify';
import { Type, type TypeBoxTypeProvider, type Static } from '@fastify/type-provider-typebox';
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { Logger } from 'pino';
import { getFormalization, startFormalization } from './runs';

export interface ReadinessReport {
  ready: boolean;
  checks: Record<string, { ok: boolean; detail?: string }>;
  /** Services that are not configured; the stack runs, but says what it cannot do. */
  missing: string[];
}

export interface ApiOptions {
  temporal: Client;
  libraries: string[];
  defaultLibrary: string;
  maxStatementChars: number;
  readiness: () => Promise<ReadinessReport>;
  taskQueue?: string;
  logger?: Logger | boolean;
}

const RunConfigBody = Type.Object(
  {
    decompose: Type.Optional(Type.Boolean()),
    retrieval: Type.Optional(Type.Union([Type.Literal('drift'), Type.Literal('monolithic'), Type.Literal('oracle'), Type.Literal('none')])),
    topK: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
    illustrate: Type.Optional(Type.Boolean()),
    examples: Type.Optional(Type.Integer({ minimum: 0, maximum: 20 })),
    repairRounds: Type.Optional(Type.Integer({ minimum: 0, maximum: 20 })),
    judge: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

function startBody(maxStatementChars: number) {
  return Type.Object(
    {
      statement: Type.String({ minLength: 1, maxLength: maxStatementChars, pattern: '\\S' }),
      library: Type.Optional(Type.String({ minLength: 1 })),
      config: Type.Optional(RunConfigBody),
      exclude: Type.Optional(Type.Array(Type.String(), { maxItems: 1000 })),
      goldPremises: Type.Optional(Type.Array(Type.String(), { maxItems: 1000 })),
      goldStatement: Type.Optional(Type.String({ minLength: 1, maxLength: maxStatementChars })),
      // A caller-chosen run ID makes a retried POST safe: the same ID never starts a second run.
      id: Type.Optional(Type.String({ minLength: 1, maxLength: 200, pattern: '^[A-Za-z0-9._:/-]+$' })),
    },
    { additionalProperties: false },
  );
}

const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 300 }) });

function badRequest(message: string) {
  return { error: 'BadRequest', message };
}

/** Validation messages that say what was wrong in the user's terms. */
function describeValidation(error: FastifyError, maxStatementChars: number): string {
  const issue = error.validation?.[0];
  if (!issue) return error.message;
  const field = issue.instancePath.replace(/^\//, '').replace(/\//g, '.') || (issue.params as { missingProperty?: string }).missingProperty || 'body';
  switch (issue.keyword) {
    case 'required':
      return `"${(issue.params as { missingProperty: string }).missingProperty}" is required`;
    case 'maxLength':
      return field === 'statement' ? `"statement" is longer than ${maxStatementChars} characters` : `"${field}" is too long`;
    case 'minLength':
    case 'pattern':
      return `"${field}" must not be empty`;
    case 'type':
      return `"${field}" ${issue.message}`;
    case 'additionalProperties':
      return `unknown field "${(issue.params as { additionalProperty: string }).additionalProperty}"${field !== 'body' ? ` in "${field}"` : ''}`;
    default:
      return `"${field}" ${issue.message}`;
  }
}

export async function buildServer(options: ApiOptions): Promise<FastifyInstance> {
  const app = Fastify({
    logger: options.logger ?? false,
    // Large enough that an over-long statement reaches validation and gets a 400, not a 413.
    bodyLimit: Math.max(2 * 1024 * 1024, options.maxStatementChars * 4 + 65_536),
    // Refuse what is wrong instead of quietly fixing it: no type coercion, no dropped fields.
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false } },
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error.validation) {
      return reply.status(400).send(badRequest(describeValidation(error, options.maxStatementChars)));
    }
    if (error.statusCode && error.statusCode < 500) {
      return reply.status(error.statusCode).send({ error: error.code ?? 'BadRequest', message: error.message });
    }
    request.log.error(error);
    return reply.status(500).send({ error: 'Internal', message: error.message });
  });

  app.get('/healthz', async () => ({ ok: true }));

  app.get('/readyz', async (_request, reply) => {
    const report = await options.readiness();
    return reply.status(report.ready ? 200 : 503).send(report);
  });

  const body = startBody(options.maxStatementChars);
  app.post('/v1/formalizations', { schema: { body } }, async (request, reply) => {
    const input = request.body as Static<typeof body>;
    const library = input.library ?? options.defaultLibrary;
    if (!options.libraries.includes(library)) {
      return reply.status(400).send(badRequest(`unknown library "${library}"; known: ${options.libraries.join(', ')}`));
    }
    if (input.config?.retrieval === 'oracle' && !input.goldPremises?.length) {
      return reply.status(400).send(badRequest('retrieval "oracle" needs "goldPremises"'));
    }
    let id: string;
    try {
      id = await startFormalization(
        options.temporal,
        {
          statement: input.statement,
          library,
          config: input.config,
          exclude: input.exclude,
          goldPremises: input.goldPremises,
          goldStatement: input.goldStatement,
          id: input.id,
        },
        options.taskQueue,
      );
    } catch (err) {
      if (err instanceof WorkflowExecutionAlreadyStartedError && input.id) {
        return reply.status(200).header('location', `/v1/formalizations/${encodeURIComponent(input.id)}`).send({ id: input.id, existing: true });
      }
      throw err;
    }
    return reply.status(202).header('location', `/v1/formalizations/${encodeURIComponent(id)}`).send({ id });
  });

  app.get('/v1/formalizations/:id', { schema: { params: IdParams } }, async (request, reply) => {
    const { id } = request.params as Static<typeof IdParams>;
    const view = await getFormalization(options.temporal, id);
    if (!view) return reply.status(404).send({ error: 'NotFound', message: `no formalization with id "${id}"` });
    return view;
  });

  return app;
}
