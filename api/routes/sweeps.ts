// Benchmark sweeps over HTTP: start one from a sweep file's content, read its progress, pause,
// resume or cancel it, retry its failed runs, and get its report (HTML, Markdown, JSON or the per-run CSV).
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { Type, type Static, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { realpath, stat } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { getSweepProgress, signalSweep, startSweep, SweepEndedError, SweepRequestError } from '../../client/sweeps';
import { retrySweep, SweepRetryError } from '../../client/sweep-retry';
import { sweepReportInput } from '../../client/sweep-report';
import { temporalUiLink } from '../../client/runs';
import { LlmQuotaSchema, SweepBatchesSchema, SweepProgressProperties, type SweepBatchesView } from '../../common/wire';
import { HttpProblem, problemResponses } from '../problem';
import { BenchmarkError, contentFreeMessage } from '../../engines/benchmarks/load';
import { parseSweep, sweepFileJsonSchema, SweepFileError, type SweepSpec } from '../../engines/sweeps/sweep-file';
import { renderSweepReportAs, type ReportFormat } from '../../engines/report/write-report';
import type { ResultsDb } from '../../engines/results/results-db';
import { SWEEP_KEY } from '../../common/search-attributes';
import type { LlmCallPolicy } from '../../common/llm-call-policy';
import { registerRescoreRoute } from './sweep-rescore';
import { prepareSweep, sweepStartProblem } from '../../client/sweep-prepare';
import { servesBatchMode } from '../../client/stack-providers';

export interface SweepRoutesOptions {
  temporal: Client;
  results: ResultsDb;
  libraries: string[];
  /** Where benchmark paths point: a sweep started over HTTP reads benchmarks only from here. */
  dataDir: string;
  /** The library alias's current index version (pinned when the sweep file names none). */
  currentIndexVersion?: (library: string) => Promise<string | undefined>;
  taskQueue?: string;
  leanTaskQueue?: string;
  /** The workers' LLM settings, handed to every run of a sweep. */
  llm?: LlmCallPolicy;
  /** The LLM providers configured (a configuration's `providers` may name only these). */
  providerNames?: string[];
  temporalUiUrl: string;
  /** Each LLM provider's quota over the last minute, for the whole deployment (shown with the
   * sweeps still running; infra/llm-quota.ts). */
  llmQuota?: () => Promise<Static<typeof LlmQuotaSchema>[]>;
  /** A sweep's provider batches (batch mode): counts and the batches in flight; undefined for a
   * sweep that has none. */
  batches?: (sweepId: string) => Promise<SweepBatchesView | undefined>;
  namespace: string;
}

const SWEEP_ID_MAX = 100;
const SweepIdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: SWEEP_ID_MAX, description: 'The sweep ID' }) });
const StartQuery = Type.Object(
  {
    id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: SWEEP_ID_MAX,
        description: 'The sweep ID, as the body\'s "id" (give one or the same in both); default: generated',
      }),
    ),
    reuse: Type.Optional(
      Type.String({ minLength: 1, maxLength: SWEEP_ID_MAX, description: 'Re-use the finished, identical cells of this earlier sweep' }),
    ),
  },
  { additionalProperties: false },
);
const SweepListQuery = Type.Object(
  { limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: 'At most this many sweeps (default 20)' })) },
  { additionalProperties: false },
);
const FORMATS = ['html', 'md', 'json', 'csv'] as const;
const ReportQuery = Type.Object(
  {
    format: Type.Optional(
      Type.Union(
        FORMATS.map((f) => Type.Literal(f)),
        { description: 'Overrides the Accept header' },
      ),
    ),
  },
  { additionalProperties: false },
);

const SweepLinks = Type.Object(
  {
    self: Type.String(),
    report: Type.String({ description: 'The report (HTML; Markdown, JSON or CSV with Accept or ?format=)' }),
    temporalUi: Type.String({ description: "The sweep workflow's page in the Temporal Web UI" }),
    temporalUiRuns: Type.String({ description: "The sweep's runs in the Temporal Web UI (search attribute DriftlineSweep)" }),
  },
  { additionalProperties: false },
);
// A sweep's status is defined once (common/wire.ts); the API adds its links, its provider batches
// (batch mode) and, while the sweep is going, the deployment's LLM quota.
const SweepViewSchema = Type.Object(
  {
    ...SweepProgressProperties,
    llmQuota: Type.Optional(
      Type.Array(LlmQuotaSchema, {
        description: "each LLM provider's quota over the last minute, for the whole deployment (a sweep that is running or paused)",
      }),
    ),
    batches: Type.Optional(
      Type.Unsafe<SweepBatchesView>({
        ...SweepBatchesSchema,
        description: "batch mode: the sweep's provider batches, counted, and the batches in flight (absent for a sweep without any)",
      }),
    ),
    links: SweepLinks,
  },
  { additionalProperties: false },
);
const StartedSchema = Type.Object(
  {
    id: Type.String(),
    existing: Type.Boolean({ description: 'true: a sweep with this ID and the same sweep file existed; nothing new was started' }),
    total: Type.Integer(),
    configurations: Type.Array(Type.String()),
    reused: Type.Array(Type.String({ description: 'configurations whose results were copied from the `reuse` sweep' })),
    notes: Type.Optional(
      Type.Array(Type.String(), { description: "e.g. predictions files' lines naming items outside the sweep's selection (ignored)" }),
    ),
    links: SweepLinks,
  },
  { additionalProperties: false },
);
const RetriedSchema = Type.Object(
  {
    id: Type.String(),
    round: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], {
      description: 'the retry round started (1 for the first); null when no run had failed and nothing started',
    }),
    retried: Type.Integer({ description: 'failed runs started again (0: nothing started)' }),
    perConfig: Type.Record(Type.String(), Type.Integer(), { description: 'the same per configuration' }),
    total: Type.Integer({ description: 'runs of the sweep' }),
    links: SweepLinks,
  },
  { additionalProperties: false },
);
const SignalSchema = Type.Object(
  { id: Type.String(), signal: Type.Union([Type.Literal('pause'), Type.Literal('resume'), Type.Literal('cancel')]), links: SweepLinks },
  { additionalProperties: false },
);

const REPORT_TYPES: Record<ReportFormat, string> = {
  html: 'text/html; charset=utf-8',
  md: 'text/markdown; charset=utf-8',
  json: 'application/json; charset=utf-8',
  csv: 'text/csv; charset=utf-8',
};

/** The report format asked for: `?format=`, else the first Accept type we serve, else HTML. */
function reportFormat(request: FastifyRequest, query?: ReportFormat): ReportFormat {
  if (query) return query;
  const accept = String(request.headers.accept ?? '');
  const wanted = accept
    .split(',')
    .map((part, i) => {
      const [type, ...params] = part.trim().toLowerCase().split(';');
      const q = Number(
        params
          .map((p) => p.trim())
          .find((p) => p.startsWith('q='))
          ?.slice(2) ?? 1,
      );
      return { type: type!.trim(), q: Number.isFinite(q) ? q : 0, i };
    })
    .filter((t) => t.q > 0)
    .sort((a, b) => b.q - a.q || a.i - b.i);
  const byType: Record<string, ReportFormat> = {
    'text/html': 'html',
    'text/markdown': 'md',
    'application/json': 'json',
    'text/csv': 'csv',
  };
  for (const { type } of wanted) if (byType[type]) return byType[type]!;
  return 'html';
}

/** The benchmark paths of a sweep started over HTTP, each as the client wrote it, by index. */
function givenPaths(raw: object): string[] {
  const b = (raw as { benchmark?: unknown }).benchmark;
  // A named benchmark (engines/benchmarks/named.ts) by its name and split.
  return (Array.isArray(b) ? b : [b]).map((x) => {
    const given = x as { path?: unknown; name?: unknown; split?: unknown } | undefined;
    return String(
      given?.path ??
        (given?.name !== undefined ? `${String(given.name)}${given.split !== undefined ? ` ${String(given.split)}` : ''}` : ''),
    );
  });
}

/** The predictions paths of a sweep started over HTTP, each as the client wrote it, by
 * configuration name. */
function givenPredictionPaths(raw: object): Map<string, string> {
  const configurations = (raw as { configurations?: unknown }).configurations;
  const out = new Map<string, string>();
  if (!configurations || typeof configurations !== 'object') return out;
  for (const [name, c] of Object.entries(configurations as Record<string, unknown>)) {
    const path = (c as { predictions?: { path?: unknown } } | undefined)?.predictions?.path;
    if (path !== undefined) out.set(name, String(path));
  }
  return out;
}

/** A file a sweep started over HTTP names (a benchmark, a predictions file) must stay inside
 * the data directory: the API reads no other file of the server. The path is checked as
 * written and again with every symbolic link resolved (realpath), against the data directory's
 * own real path, so a link inside it leads nowhere else. Returns the real path to read. Errors
 * name the file as the client gave it (`name`), never an absolute server path, never a line. */
async function fileInsideDataDir(path: string, where: string, name: string, dataDir: string, what: string): Promise<string> {
  const root = resolve(dataDir);
  const realRoot = await realpath(root);
  const outside = (rel: string) => rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel);
  if (outside(relative(root, resolve(path)))) {
    throw new HttpProblem(
      400,
      `${where}: over HTTP ${what} is read from the data directory only: give a path relative to it (or "$DATA/…")`,
    );
  }
  let real: string;
  try {
    real = await realpath(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new HttpProblem(
      400,
      `${where}: ${code === 'ENOENT' || code === 'ENOTDIR' ? 'no such file in the data directory' : 'cannot read'}: ${name}`,
    );
  }
  if (outside(relative(realRoot, real))) {
    throw new HttpProblem(
      400,
      `${where}: ${name} leads outside the data directory (through a symbolic link); over HTTP ${what} is read from the data directory only`,
    );
  }
  if (!(await stat(real)).isFile()) throw new HttpProblem(400, `${where}: ${name} is not a regular file`);
  return real;
}

/** The benchmarks of a sweep started over HTTP, each checked by fileInsideDataDir. Returns the
 * sources to load (real paths) and, by real path, the name the client gave. */
async function insideDataDir(
  spec: SweepSpec,
  given: string[],
  dataDir: string,
): Promise<{ sources: SweepSpec['benchmarks']; names: Map<string, string> }> {
  const names = new Map<string, string>();
  const sources: SweepSpec['benchmarks'] = [];
  for (const [i, b] of spec.benchmarks.entries()) {
    const where = spec.benchmarks.length > 1 ? `benchmark[${i}].path` : 'benchmark.path';
    const name = JSON.stringify(given[i] ?? '');
    const real = await fileInsideDataDir(b.path, where, name, dataDir, 'a benchmark');
    names.set(real, name);
    sources.push({ ...b, path: real });
  }
  return { sources, names };
}

export const sweepRoutes: FastifyPluginAsync<SweepRoutesOptions> = async (fastify, options) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { temporal, results } = options;
  const links = (id: string) => {
    const self = `/v1/sweeps/${encodeURIComponent(id)}`;
    const query = encodeURIComponent(`${SWEEP_KEY.name}="${id}"`);
    return {
      self,
      report: `${self}/report`,
      temporalUi: temporalUiLink(options.temporalUiUrl, options.namespace, id),
      temporalUiRuns: `${options.temporalUiUrl.replace(/\/$/, '')}/namespaces/${encodeURIComponent(options.namespace)}/workflows?query=${query}`,
    };
  };
  // The providers' quota, read once per answer, on the views of sweeps still going.
  const withQuota = async (views: ({ status: string; llmQuota?: Static<typeof LlmQuotaSchema>[] } | null)[]): Promise<void> => {
    const going = views.filter((v) => v && (v.status === 'running' || v.status === 'paused'));
    if (!options.llmQuota || going.length === 0) return;
    const quota = await options.llmQuota().catch(() => []);
    if (quota.length > 0) for (const v of going) v!.llmQuota = quota;
  };
  // Each sweep's provider batches (batch mode), read per sweep; a view without them is still an answer.
  const withBatches = async (views: ({ sweepId: string; batches?: SweepBatchesView } | null)[]): Promise<void> => {
    const read = options.batches;
    if (!read) return;
    await Promise.all(
      views.map(async (v) => {
        const b = v ? await read(v.sweepId).catch(() => undefined) : undefined;
        if (b) v!.batches = b;
      }),
    );
  };
  // The sweep file itself says what is wrong with it (the same messages as `driftline sweep
  // start`); its JSON Schema is in the body's schema for the OpenAPI document only.
  const bodyFile = join(options.dataDir, 'request');

  app.post(
    '/v1/sweeps',
    {
      schema: {
        operationId: 'startSweep',
        summary: 'Start a benchmark sweep',
        description:
          'The body is a sweep file as JSON (the same schema as `driftline sweep start FILE`). Benchmark and predictions paths are relative to the data directory (or `$DATA/…`); ' +
          'every benchmark and predictions line is checked before anything starts. Answers 202 with the sweep ID. With an ID that exists, the same sweep file answers 200 with ' +
          '`existing: true`; a different one answers 409 naming the fields that differ.',
        tags: ['sweeps'],
        querystring: StartQuery,
        body: sweepFileJsonSchema(),
        response: { 202: StartedSchema, 200: StartedSchema, ...problemResponses(400, 401, 409, 413, 415, 429, 503) },
      },
      validatorCompiler: ({ schema, httpPart, method, url }) =>
        httpPart === 'body'
          ? (data: unknown) => ({ value: data })
          : fastify.validatorCompiler!({ schema, httpPart: httpPart!, method, url }),
    },
    async (request, reply) => {
      const query = request.query as Static<typeof StartQuery>;
      const raw: unknown = request.body;
      if (!raw || typeof raw !== 'object' || Array.isArray(raw))
        throw new HttpProblem(400, 'the body must be a sweep file as a JSON object (Content-Type: application/json)');
      let spec: SweepSpec;
      try {
        spec = parseSweep(raw, bodyFile, { dataDir: options.dataDir });
      } catch (err) {
        if (err instanceof SweepFileError) throw new HttpProblem(400, err.message.split(`${bodyFile}: `).join(''));
        throw err;
      }
      if (query.id && spec.id && query.id !== spec.id)
        throw new HttpProblem(
          400,
          `the query's id ("${query.id}") and the body's "id" ("${spec.id}") differ; send one, or the same in both`,
        );
      // The rules every door applies (client/sweep-prepare.ts); without provider names (tests'
      // servers), any provider is taken.
      const problem = sweepStartProblem(spec, {
        libraries: options.libraries,
        providerNames: options.providerNames ?? spec.configurations.flatMap((c) => Object.values(c.config.providers ?? {})),
        ...(spec.llm?.batch ? { batchMode: await servesBatchMode(temporal) } : {}),
      });
      if (problem) throw new HttpProblem(400, problem);
      const { sources, names } = await insideDataDir(spec, givenPaths(raw), options.dataDir);
      const given = givenPredictionPaths(raw);
      const predictionsName = (configuration: string) => JSON.stringify(given.get(configuration) ?? '');
      // Over HTTP files are read from the data directory only, and an error names a file as
      // the client gave it and quotes nothing of it.
      let prepared;
      try {
        prepared = await prepareSweep(spec, {
          benchmarks: sources,
          predictionsPath: (configuration, path) =>
            fileInsideDataDir(
              path,
              `configurations.${configuration}.predictions.path`,
              predictionsName(configuration),
              options.dataDir,
              'a predictions file',
            ),
          predictionsName,
          ...(options.currentIndexVersion ? { currentIndexVersion: options.currentIndexVersion } : {}),
        });
      } catch (err) {
        if (err instanceof BenchmarkError)
          throw new HttpProblem(
            400,
            contentFreeMessage(err, (path) => names.get(path) ?? 'benchmark'),
          );
        if (err instanceof SweepRequestError) throw new HttpProblem(400, err.message);
        throw err;
      }
      const { items } = prepared;
      const current = prepared.currentIndexVersion;
      const predictions = { sets: prepared.predictions, notes: prepared.notes };
      let started;
      try {
        started = await startSweep(temporal, results, spec, items, {
          ...(query.id ? { id: query.id } : {}),
          ...(query.reuse ? { reuse: query.reuse } : {}),
          ...(current ? { currentIndexVersion: current } : {}),
          ...(options.taskQueue ? { taskQueue: options.taskQueue } : {}),
          ...(options.leanTaskQueue ? { leanTaskQueue: options.leanTaskQueue } : {}),
          ...(options.llm ? { llm: options.llm } : {}),
          predictions: predictions.sets,
        });
      } catch (err) {
        if (err instanceof SweepRequestError) throw new HttpProblem(400, err.message);
        throw err;
      }
      if (started.existing && started.differences?.length) {
        throw new HttpProblem(
          409,
          `a sweep with id "${started.id}" already exists with a different ${started.differences.join(', ')}; choose another id to start a new sweep`,
          { id: started.id, differences: started.differences },
        );
      }
      return reply
        .status(started.existing ? 200 : 202)
        .header('location', links(started.id).self)
        .send({
          id: started.id,
          existing: started.existing,
          total: started.total,
          configurations: started.cells.map((c) => c.name),
          reused: started.reused,
          ...(predictions.notes.length ? { notes: predictions.notes } : {}),
          links: links(started.id),
        });
    },
  );

  app.get(
    '/v1/sweeps',
    {
      schema: {
        operationId: 'listSweeps',
        summary: 'The sweeps in the results database, newest first, each with its progress',
        tags: ['sweeps'],
        querystring: SweepListQuery,
        response: {
          200: Type.Object({ items: Type.Array(SweepViewSchema) }, { additionalProperties: false }),
          ...problemResponses(400, 401, 429),
        },
      },
    },
    async (request) => {
      const { limit } = request.query as Static<typeof SweepListQuery>;
      const rows = (await results.listSweeps()).slice(0, limit ?? 20);
      // Progress per sweep: a query of the running ones, the stored result of the finished ones.
      const views = await Promise.all(
        rows.map(async (row) => {
          const progress = await getSweepProgress(temporal, results, row.id);
          return progress ? { ...progress, links: links(row.id) } : null;
        }),
      );
      await Promise.all([withQuota(views), withBatches(views)]);
      return { items: views.filter((v) => v !== null) };
    },
  );

  app.get(
    '/v1/sweeps/:id',
    {
      schema: {
        operationId: 'getSweep',
        summary: "A sweep's progress: done, running and failed runs per configuration, rate and ETA",
        tags: ['sweeps'],
        params: SweepIdParams,
        response: { 200: SweepViewSchema, ...problemResponses(400, 401, 404, 429) },
      },
    },
    async (request) => {
      const { id } = request.params as Static<typeof SweepIdParams>;
      // Every sweep has its row in the results database before its workflow starts: without
      // one, Temporal is not asked (it may refuse odd IDs outright).
      const progress = (await results.getSweep(id)) ? await getSweepProgress(temporal, results, id) : null;
      if (!progress) throw new HttpProblem(404, `no sweep "${id}"`, { id });
      const view = { ...progress, links: links(id) };
      await Promise.all([withQuota([view]), withBatches([view])]);
      return view;
    },
  );

  registerRescoreRoute(fastify, options, StartedSchema, links);

  const signalSummaries = {
    pause: 'Pause a sweep: no new runs start; running runs finish',
    resume: 'Resume a paused sweep',
    cancel: 'Cancel a sweep: running runs are cancelled, no new ones start',
  } as const;
  for (const signal of ['pause', 'resume', 'cancel'] as const) {
    app.post(
      `/v1/sweeps/:id/${signal}`,
      {
        schema: {
          operationId: `${signal}Sweep`,
          summary: signalSummaries[signal],
          description: 'Answers 202 once the sweep has the request; 409 when the sweep has ended.',
          tags: ['sweeps'],
          params: SweepIdParams,
          response: { 202: SignalSchema, ...problemResponses(400, 401, 404, 409, 429) },
        },
      },
      async (request, reply) => {
        const { id } = request.params as Static<typeof SweepIdParams>;
        // A sweep is a workflow with a row in the results database; any other workflow is not one.
        if (!(await results.getSweep(id))) throw new HttpProblem(404, `no sweep "${id}"`, { id });
        let status: string;
        try {
          status = (await temporal.workflow.getHandle(id).describe()).status.name;
        } catch (err) {
          if (err instanceof WorkflowNotFoundError)
            throw new HttpProblem(409, `sweep "${id}" has no workflow (it never started); start it again with the same id`, { id });
          throw err;
        }
        if (status !== 'RUNNING') {
          const progress = await getSweepProgress(temporal, results, id);
          throw new HttpProblem(409, `sweep "${id}" has ended (${progress?.status ?? status.toLowerCase()}); it cannot ${signal}`, { id });
        }
        try {
          await signalSweep(temporal, id, signal);
        } catch (err) {
          if (err instanceof SweepEndedError) throw new HttpProblem(409, err.message, { id });
          throw err;
        }
        return reply.status(202).send({ id, signal, links: links(id) });
      },
    );
  }

  app.post(
    '/v1/sweeps/:id/retry',
    {
      schema: {
        operationId: 'retrySweep',
        summary: 'Start the failed runs of an ended sweep again',
        description:
          "Runs that failed (errors after the sweep's attempts, not unfaithful outcomes) start again under their own workflow IDs; " +
          "each one's new record replaces its failed one. Answers 202 once started, 200 when no run had failed (nothing started), " +
          '409 while the sweep runs, when its workflow failed, or when its LLM budget is spent.',
        tags: ['sweeps'],
        params: SweepIdParams,
        response: { 200: RetriedSchema, 202: RetriedSchema, ...problemResponses(400, 401, 404, 409, 429) },
      },
    },
    async (request, reply) => {
      const { id } = request.params as Static<typeof SweepIdParams>;
      if (!(await results.getSweep(id))) throw new HttpProblem(404, `no sweep "${id}"`, { id });
      let retried;
      try {
        retried = await retrySweep(temporal, results, id);
      } catch (err) {
        if (err instanceof SweepRetryError) throw new HttpProblem(err.notFound ? 404 : 409, err.message, { id });
        throw err;
      }
      return reply.status(retried.round === null ? 200 : 202).send({ ...retried, links: links(id) });
    },
  );

  app.get(
    '/v1/sweeps/:id/report',
    {
      schema: {
        operationId: 'getSweepReport',
        summary: "A sweep's report",
        description:
          'One self-contained HTML page with the charts (default), or Markdown, JSON (the computed metrics) or CSV (one row per run): ' +
          'ask with `Accept: text/markdown | application/json | text/csv`, or `?format=md|json|csv`. 409 until a run has finished.',
        tags: ['sweeps'],
        params: SweepIdParams,
        querystring: ReportQuery,
        response: {
          200: {
            description: 'The report',
            content: {
              'text/html': { schema: { type: 'string' } },
              'text/markdown': { schema: { type: 'string' } },
              'application/json': {
                schema: { type: 'object', description: 'metrics per configuration and tag, comparisons, factorial effects, budget curves' },
              },
              'text/csv': { schema: { type: 'string' } },
            },
          },
          ...problemResponses(400, 401, 404, 409, 429),
        },
      },
    },
    async (request, reply) => {
      const { id } = request.params as Static<typeof SweepIdParams>;
      const format = reportFormat(request, (request.query as Static<typeof ReportQuery>).format);
      const row = await results.getSweep(id);
      if (!row) throw new HttpProblem(404, `no sweep "${id}"`, { id });
      const progress = await getSweepProgress(temporal, results, id).catch(() => null);
      const input = await sweepReportInput(results, id, {
        ...(progress ? { status: progress.status } : {}),
        temporalUi: { base: options.temporalUiUrl, namespace: options.namespace },
      });
      if (!input) throw new HttpProblem(404, `no sweep "${id}"`, { id });
      if (input.records.length === 0) throw new HttpProblem(409, `sweep "${id}" has no finished runs yet; nothing to report`, { id });
      const body = await renderSweepReportAs(input, format);
      return reply.header('vary', 'accept').type(REPORT_TYPES[format]).send(body);
    },
  );
};
