// The HTTP API: Fastify with each group of routes a plugin, schemas beside the routes, an
// OpenAPI 3 document generated from them (/openapi.json, /docs), errors as problem+json, bearer
// API keys, per-key rate limits and load shedding.
import Fastify, { type FastifyError, type FastifyInstance } from 'fastify';
import type { SafetyPolicy } from '../engines/lean/statement-safety';
import { Ajv } from 'ajv';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import rateLimit from '@fastify/rate-limit';
import underPressure from '@fastify/under-pressure';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import type { ApiKey } from '../client/api-keys';
import { requireApiKey } from './auth';
import { parseJsonBody } from './json-body';
import type { LibraryCatalog } from '../client/library-catalog';
import { runLinker } from './links';
import { temporalUiOf } from '../client/runs';
import { describeValidation, HttpProblem, problem, sendProblem } from './problem';
import { eventRoutes } from './routes/events';
import { checkRoutes } from './routes/checks';
import { formalizationRoutes } from './routes/formalizations';
import { healthRoutes } from './routes/health';
import { libraryRoutes } from './routes/libraries';
import { methodNotAllowed } from './method-not-allowed';
import { frameworkResponses } from './framework-responses';
import { addOperationLinks, type OpenApiDocument } from './openapi-links';
import { webRoutes } from './web';
import { sweepRoutes, type SweepRoutesOptions } from './routes/sweeps';
import { mcpRoutes } from './mcp-route';
import { ID_RULE, type ReadinessReport } from './schemas';
import type { LlmCallPolicy } from '../common/llm-call-policy';

export type { ReadinessReport };

export interface ApiOptions {
  temporal: Client;
  libraries: string[];
  defaultLibrary: string;
  maxStatementChars: number;
  readiness: () => Promise<ReadinessReport>;
  taskQueue?: string;
  /** The workers' LLM timeout and re-asks, passed to every run (client/runs.ts). */
  llm?: LlmCallPolicy;
  /** The LLM providers configured (a run's `config.providers` may name only these). */
  providerNames?: string[];
  /** What the screen lets through to Lean (a refused `goldStatement` is a 400). */
  screenPolicy?: SafetyPolicy;
  logger?: Logger | boolean;
  /** Libraries and premise search; without it the libraries routes are absent. */
  catalog?: LibraryCatalog;
  /** Keys admitted to /v1; none: no authentication (the caller must listen on loopback only). */
  apiKeys?: readonly ApiKey[];
  /** Requests per key (or per address without keys) per window. */
  rateLimit?: { max: number; timeWindowMs: number };
  /** Base URL of the Temporal Web UI, for the links on every run. */
  temporalUiUrl?: string;
  namespace?: string;
  /** Load shedding thresholds (503 with Retry-After beyond them); 0 turns one off. */
  pressure?: { maxEventLoopDelayMs?: number; maxHeapUsedBytes?: number; sampleIntervalMs?: number };
  /** Keep-alive comment interval of event streams. */
  sseKeepAliveMs?: number;
  /** The built web page served at `/`; default web/dist. */
  webRoot?: string;
  /** Benchmark sweeps (the results database and where benchmarks are); without it the sweep
   * routes are absent. */
  sweeps?: Pick<SweepRoutesOptions, 'results' | 'dataDir' | 'currentIndexVersion' | 'leanTaskQueue' | 'llmQuota' | 'batches'>;
}

export async function buildServer(options: ApiOptions): Promise<FastifyInstance> {
  const app = Fastify({
    logger: options.logger ?? false,
    // Large enough that an over-long statement reaches validation and gets a 400, not a 413.
    bodyLimit: Math.max(2 * 1024 * 1024, options.maxStatementChars * 4 + 65_536),
    // Ids with %2F-encoded slashes are up to three times as long in the URL as the id itself.
    routerOptions: { maxParamLength: 1000 },
    // The router's own refusals (a path parameter over maxParamLength: 414; a malformed %-escape:
    // 400) as problems too; Fastify's default is plain JSON that echoes the whole path back.
    frameworkErrors: (error, _request, reply) => {
      const status = error.statusCode ?? 400;
      sendProblem(
        reply,
        status,
        status === 414
          ? 'a path parameter is too long (at most 1000 characters)'
          : 'the URL path is not valid: a "%" must begin a %XX escape of UTF-8',
      );
    },
  }).withTypeProvider<TypeBoxTypeProvider>();
  // Before any route: it learns every route's path to answer 405 (not 404) to another method.
  methodNotAllowed(app);
  // …and documents on every route the problems the server around it can answer (503, 400, …).
  frameworkResponses(app);

  // Query strings are all text; let integer fields there be numbers without coercing bodies.
  app.setValidatorCompiler(defaultValidatorWithQueryCoercion());

  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) => {
    try {
      done(null, parseJsonBody(body as Buffer));
    } catch (err) {
      done(err as Error, undefined);
    }
  });

  const hints = { id: ID_RULE };
  app.setErrorHandler((error: FastifyError | HttpProblem, request, reply) => {
    if (error instanceof HttpProblem) return sendProblem(reply, error.status, error.message, error.extra);
    if ((error as FastifyError).validation) return sendProblem(reply, 400, describeValidation(error as FastifyError, hints));
    const status = (error as FastifyError).statusCode;
    if (status && status >= 400 && status < 500) {
      // Fastify's own 4xx errors; never echo a URL back (a 414's would be the whole of it).
      return sendProblem(reply, status, plainClientError(error as FastifyError));
    }
    request.log.error({ err: error }, 'request failed');
    return sendProblem(reply, 500, 'internal error; the server log has the details');
  });
  app.setNotFoundHandler((request, reply) => {
    const url = request.url.length > 200 ? `${request.url.slice(0, 200)}…` : request.url;
    return sendProblem(reply, 404, `no route ${request.method} ${url}; the routes are listed at /docs`);
  });

  await app.register(underPressure, {
    maxEventLoopDelay: options.pressure?.maxEventLoopDelayMs ?? 1000,
    maxHeapUsedBytes: options.pressure?.maxHeapUsedBytes ?? 0,
    ...(options.pressure?.sampleIntervalMs ? { sampleInterval: options.pressure.sampleIntervalMs } : {}),
    retryAfter: 10,
    pressureHandler: (_request, reply, type, value) => {
      reply.header('retry-after', '10');
      sendProblem(reply, 503, `the server is overloaded (${type}: ${Math.round(Number(value))}); retry in 10 s`);
    },
  });

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'driftline',
        version: '1',
        description:
          'Informal mathematics to Lean 4 statements (DRIFT), as durable Temporal runs. Errors are application/problem+json (RFC 9457).',
      },
      components: { securitySchemes: { apiKey: { type: 'http', scheme: 'bearer', description: 'An API key (`npx driftline keys new`)' } } },
    },
    // Operation links (start → read, cancel, events), so clients and fuzzers can follow a run.
    transformObject: (document) =>
      ('openapiObject' in document ? addOperationLinks(document.openapiObject as OpenApiDocument) : document.swaggerObject) as never,
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());

  await app.register(healthRoutes, { readiness: options.readiness });
  const ui = temporalUiOf(options.temporal, options);
  // The web page at `/` and its settings; public like /docs (the page asks for a key when /v1 needs one).
  await app.register(webRoutes, {
    ...(options.webRoot ? { root: options.webRoot } : {}),
    libraries: options.libraries,
    defaultLibrary: options.defaultLibrary,
    maxStatementChars: options.maxStatementChars,
    ...ui,
    apiKeysRequired: (options.apiKeys?.length ?? 0) > 0,
    sweeps: Boolean(options.sweeps),
  });

  const links = runLinker(ui.temporalUiUrl, ui.namespace);
  await app.register(async (v1) => {
    frameworkResponses(v1, [401, 429]);
    // Only /v1 needs a key (health, docs and the page are public): the document says so per operation.
    if (options.apiKeys?.length) {
      v1.addHook('onRoute', (route) => {
        if (route.schema) (route.schema as { security?: unknown }).security = [{ apiKey: [] }];
      });
    }
    v1.addHook('onRequest', requireApiKey(options.apiKeys ?? []));
    await v1.register(rateLimit, {
      max: options.rateLimit?.max ?? 600,
      timeWindow: options.rateLimit?.timeWindowMs ?? 60_000,
      keyGenerator: (request) => (request.apiKeyName ? `key:${request.apiKeyName}` : `ip:${request.ip}`),
      errorResponseBuilder: (_request, context) => {
        const error = problem(429, `too many requests: at most ${context.max} per ${context.after}; retry after ${context.after}`);
        return Object.assign(new HttpProblem(429, error.detail), { statusCode: 429 });
      },
    });
    await v1.register(formalizationRoutes, {
      temporal: options.temporal,
      libraries: options.libraries,
      defaultLibrary: options.defaultLibrary,
      maxStatementChars: options.maxStatementChars,
      taskQueue: options.taskQueue,
      links,
      ...(options.llm ? { llm: options.llm } : {}),
      ...(options.providerNames ? { providerNames: options.providerNames } : {}),
      ...(options.screenPolicy ? { screenPolicy: options.screenPolicy } : {}),
    });
    await v1.register(eventRoutes, { temporal: options.temporal, keepAliveMs: options.sseKeepAliveMs });
    await v1.register(checkRoutes, {
      temporal: options.temporal,
      maxStatementChars: options.maxStatementChars,
      ...(options.taskQueue ? { taskQueue: options.taskQueue } : {}),
      ...(options.sweeps?.leanTaskQueue ? { leanTaskQueue: options.sweeps.leanTaskQueue } : {}),
      ...(options.screenPolicy ? { screenPolicy: options.screenPolicy } : {}),
      ...ui,
      ...(options.sseKeepAliveMs !== undefined ? { keepAliveMs: options.sseKeepAliveMs } : {}),
    });
    if (options.catalog) await v1.register(libraryRoutes, { catalog: options.catalog });
    if (options.sweeps) {
      await v1.register(sweepRoutes, {
        ...options.sweeps,
        ...(options.llm ? { llm: options.llm } : {}),
        ...(options.providerNames ? { providerNames: options.providerNames } : {}),
        temporal: options.temporal,
        libraries: options.libraries,
        ...(options.taskQueue ? { taskQueue: options.taskQueue } : {}),
        ...ui,
      });
    }
    // The MCP server over streamable HTTP, behind the same keys and rate limits as /v1.
    await v1.register(mcpRoutes, {
      deps: {
        temporal: options.temporal,
        libraries: options.libraries,
        defaultLibrary: options.defaultLibrary,
        maxStatementChars: options.maxStatementChars,
        ...(options.taskQueue ? { taskQueue: options.taskQueue } : {}),
        ...(options.sweeps?.leanTaskQueue ? { leanTaskQueue: options.sweeps.leanTaskQueue } : {}),
        ...(options.llm ? { llm: options.llm } : {}),
        ...(options.providerNames ? { providerNames: options.providerNames } : {}),
        ...(options.screenPolicy ? { screenPolicy: options.screenPolicy } : {}),
        ...(options.catalog ? { search: options.catalog } : {}),
        ...(options.sweeps ? { results: options.sweeps.results } : {}),
        ...ui,
      },
    });
  });

  return app;
}

function plainClientError(error: FastifyError): string {
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return 'the body must be JSON: send "Content-Type: application/json"';
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return 'the body is too large';
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return 'the body is empty; send a JSON object';
    default:
      return error.statusCode === 414 ? 'the URL is too long' : error.message.replace(/https?:\/\/\S+|\/\S{200,}/g, '…');
  }
}

/** Bodies, params and headers are validated strictly; query strings are text, so their numbers
 * are converted (`?limit=5`). Two ajv instances, built on first use. */
function defaultValidatorWithQueryCoercion() {
  let strict: Ajv | undefined;
  let coercing: Ajv | undefined;
  return ({ schema, httpPart }: { schema: object; httpPart?: string }) => {
    const ajv = httpPart === 'querystring' ? (coercing ??= makeAjv(true)) : (strict ??= makeAjv(false));
    return ajv.compile(schema);
  };
}

function makeAjv(coerce: boolean): Ajv {
  return new Ajv({ coerceTypes: coerce, removeAdditional: false, useDefaults: true, allErrors: false, strict: false });
}
