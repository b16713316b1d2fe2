// Benchmark sweeps over HTTP: start one from a sweep file's object, read its progress, pause,
// resume or cancel it, and get its report (HTML, Markdown, JSON or the per-run CSV).
import type { FastifyPluginAsync } from 'fastify';
import { Type, type Static, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Client } from '@temporalio/client';
import { getSweepProgress, signalSweep, startSweep, SweepRequestError } from '../sweeps';
import { sweepReportInput } from '../sweep-report';
import { HttpProblem, problemResponses } from '../problem';
import { loadBenchmarks } from '../../engines/benchmarks/load';
import { parseSweep, SweepFileError } from '../../engines/sweeps/sweep-file';
import { renderSweepReport } from '../../engines/report/write-report';
import type { ResultsDb } from '../../engines/results/results-db';
import { join } from 'node:path';
import type { LlmBudget } from '../../common/types';

export interface SweepRoutesOptions {
  temporal: Client;
  results: ResultsDb;
  libraries: string[];
  /** Where `$DATA/…` and relative benchmark paths point. */
  dataDir: string;
  /** The library alias's current index version (pinned when the sweep file names none). */
  currentIndexVersion?: (library: string) => Promise<string | undefined>;
  taskQueue?: string;
  /** The workers' LLM settings, handed to every run of a sweep. */
  llm?: LlmBudget;
  temporalUiUrl?: string;
  namespace?: string;
}

const SweepId = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9][A-Za-z0-9._+=,-]*$' }) });
const StartQuery = Type.Object(
  {
    id: Type.Optional(Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9][A-Za-z0-9._+=,-]*$', description: 'The sweep ID (default: the body\'s "id", else generated)' })),
    reuse: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Re-use finished identical cells of this earlier sweep' })),
  },
  { additionalProperties: false },
);
const ReportQuery = Type.Object({ format: Type.Optional(Type.Union([Type.Literal('html'), Type.Literal('md'), Type.Literal('json'), Type.Literal('csv')], { default: 'html' })) }, { additionalProperties: false });
const Counts = Type.Object({ total: Type.Integer(), done: Type.Integer(), failed: Type.Integer(), running: Type.Integer() });
const ProgressSchema = Type.Object({
  sweepId: Type.String(),
  status: Type.Union([Type.Literal('running'), Type.Literal('paused'), Type.Literal('completed'), Type.Literal('cancelled'), Type.Literal('failed')]),
  total: Type.Integer(),
  done: Type.Integer(),
  failed: Type.Integer(),
  running: Type.Integer(),
  perConfig: Type.Record(Type.String(), Counts),
  retries: Type.Integer(),
  rate: Type.Number({ description: 'finished runs per unpaused second' }),
  etaSeconds: Type.Union([Type.Number(), Type.Null()]),
  generation: Type.Integer({ description: 'times the sweep workflow continued as new' }),
  startedAt: Type.String(),
});
const StartedSchema = Type.Object({ id: Type.String(), existing: Type.Boolean(), total: Type.Integer(), configurations: Type.Array(Type.String()), reused: Type.Array(Type.String()) });

export const sweepRoutes: FastifyPluginAsync<SweepRoutesOptions> = async (fastify, options) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { temporal, results } = options;

  app.post(
    '/v1/sweeps',
    {
      schema: {
        summary: 'Start a benchmark sweep',
        description:
          'The body is a sweep file as JSON (`benchmark`, `library`, `samples`, `window`, `retry`, `leaveOut`, `configurations` or `factorial`; see README). ' +
          'Benchmark paths are `$DATA/…`, absolute, or relative to the shared data directory. Every benchmark line is checked before anything starts. ' +
          'Answers 202 with the sweep ID; an ID that exists answers 200 with `existing: true`.',
        tags: ['sweeps'],
        querystring: StartQuery,
        body: Type.Object({}, { additionalProperties: true, description: 'a sweep file' }),
        response: { 202: StartedSchema, 200: StartedSchema, ...problemResponses(400, 401, 413, 415, 429, 503) },
      },
    },
    async (request, reply) => {
      const query = request.query as Static<typeof StartQuery>;
      let spec;
      try {
        spec = parseSweep(request.body, join(options.dataDir, 'request'), { dataDir: options.dataDir });
      } catch (err) {
        if (err instanceof SweepFileError) throw new HttpProblem(400, err.message.replace(/^.*?request: /, ''));
        throw err;
      }
      if (!options.libraries.includes(spec.library)) throw new HttpProblem(400, `library: "${spec.library}" is not configured; known: ${options.libraries.join(', ')}`);
      const items = await loadBenchmarks(spec.benchmarks).catch((err: Error) => {
        throw new HttpProblem(400, err.message);
      });
      const current = spec.indexVersion ? undefined : await options.currentIndexVersion?.(spec.library).catch(() => undefined);
      let started;
      try {
        started = await startSweep(temporal, results, spec, items, {
          ...(query.id ? { id: query.id } : {}),
          ...(query.reuse ? { reuse: query.reuse } : {}),
          ...(current ? { currentIndexVersion: current } : {}),
          ...(options.taskQueue ? { taskQueue: options.taskQueue } : {}),
          ...(options.llm ? { llm: options.llm } : {}),
        });
      } catch (err) {
        if (err instanceof SweepRequestError) throw new HttpProblem(400, err.message);
        throw err;
      }
      return reply
        .status(started.existing ? 200 : 202)
        .header('location', `/v1/sweeps/${encodeURIComponent(started.id)}`)
        .send({ id: started.id, existing: started.existing, total: started.total, configurations: started.cells.map((c) => c.name), reused: started.reused });
    },
  );

  app.get(
    '/v1/sweeps/:id',
    { schema: { summary: "A sweep's progress", tags: ['sweeps'], params: SweepId, response: { 200: ProgressSchema, ...problemResponses(401, 404, 429) } } },
    async (request) => {
      const { id } = request.params as Static<typeof SweepId>;
      const progress = await getSweepProgress(temporal, results, id);
      if (!progress) throw new HttpProblem(404, `no sweep "${id}"`, { id });
      return progress;
    },
  );

  for (const signal of ['pause', 'resume', 'cancel'] as const) {
    app.post(
      `/v1/sweeps/:id/${signal}`,
      {
        schema: {
          summary: { pause: 'Pause a sweep (running runs finish)', resume: 'Resume a paused sweep', cancel: 'Cancel a sweep (running runs are cancelled)' }[signal],
          tags: ['sweeps'],
          params: SweepId,
          response: { 202: Type.Object({ id: Type.String(), signal: Type.String() }), ...problemResponses(401, 404, 409, 429) },
        },
      },
      async (request, reply) => {
        const { id } = request.params as Static<typeof SweepId>;
        const progress = await getSweepProgress(temporal, results, id);
        if (!progress) throw new HttpProblem(404, `no sweep "${id}"`, { id });
        if (['completed', 'cancelled', 'failed'].includes(progress.status)) throw new HttpProblem(409, `sweep ${id} is ${progress.status}; it cannot ${signal}`, { id });
        await signalSweep(temporal, id, signal);
        return reply.status(202).send({ id, signal });
      },
    );
  }

  app.get(
    '/v1/sweeps/:id/report',
    {
      schema: {
        summary: "A sweep's report",
        description: '`format=html` (default; one self-contained page with the charts), `md`, `json` (the computed metrics), or `csv` (one row per run).',
        tags: ['sweeps'],
        params: SweepId,
        querystring: ReportQuery,
        response: problemResponses(401, 404, 409, 429),
      },
    },
    async (request, reply) => {
      const { id } = request.params as Static<typeof SweepId>;
      const { format = 'html' } = request.query as Static<typeof ReportQuery>;
      const progress = await getSweepProgress(temporal, results, id).catch(() => null);
      const input = await sweepReportInput(results, id, { ...(progress ? { status: progress.status } : {}), ...(options.temporalUiUrl ? { temporalUiUrl: options.temporalUiUrl } : {}), ...(options.namespace ? { namespace: options.namespace } : {}) });
      if (!input) throw new HttpProblem(404, `no sweep "${id}"`, { id });
      if (input.records.length === 0) throw new HttpProblem(409, `sweep ${id} has no finished runs yet; nothing to report`, { id });
      const report = await renderSweepReport(input);
      switch (format) {
        case 'md':
          return reply.type('text/markdown; charset=utf-8').send(report.markdown);
        case 'json':
          return reply.type('application/json; charset=utf-8').send(report.json);
        case 'csv':
          return reply.type('text/csv; charset=utf-8').send(report.runsCsv);
        default:
          return reply.type('text/html; charset=utf-8').send(report.html);
      }
    },
  );
};
