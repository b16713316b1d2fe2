// `POST /v1/sweeps/:id/rescore`: a finished sweep judged again by another judge, as a sweep of
// its own (the HTTP side of `driftline sweep rescore`; client/sweep-rescore.ts does the work).
import type { FastifyInstance } from 'fastify';
import { Type, type Static, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Client } from '@temporalio/client';
import { HttpProblem, problemResponses } from '../problem';
import { MAX_RUBRIC_CHARS, RescoreRequestError, startRescore } from '../../client/sweep-rescore';
import { parseJudgeChoice } from '../../common/rescore';
import type { LlmCallPolicy } from '../../common/llm-call-policy';
import type { ResultsDb } from '../../engines/results/results-db';
import { FAITHFUL_GRADE } from '../../engines/llm/judge-prompt';

const RescoreParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100, description: 'The sweep to judge again' }) });
const RescoreBody = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 100, description: 'The new sweep ID (an existing one answers with that sweep)' }),
    judge: Type.String({
      minLength: 1,
      maxLength: 265,
      description: 'A configured LLM provider, and optionally a model there: `provider[:model]`',
    }),
    threshold: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 10, description: `faithful = compiled and grade ≥ this (default ${FAITHFUL_GRADE})` }),
    ),
    rubric: Type.Optional(
      Type.String({ minLength: 1, maxLength: MAX_RUBRIC_CHARS, description: "A text replacing the judge's instructions" }),
    ),
    equivalence: Type.Optional(Type.Boolean({ description: 'Also run the BEq+ equivalence check against the gold again' })),
    window: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, description: "Units in flight at once (default: the source's)" })),
  },
  { additionalProperties: false },
);

export interface RescoreRouteOptions {
  temporal: Client;
  results: ResultsDb;
  providerNames?: string[];
  taskQueue?: string;
  leanTaskQueue?: string;
  llm?: LlmCallPolicy;
}

/** Registers the route on the sweeps plugin's instance; `started` is its 202/200 body schema and
 * `links` the sweep's links. */
export function registerRescoreRoute(
  fastify: FastifyInstance,
  options: RescoreRouteOptions,
  started: ReturnType<typeof Type.Object>,
  links: (id: string) => Record<string, string>,
): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.post(
    '/v1/sweeps/:id/rescore',
    {
      schema: {
        operationId: 'rescoreSweep',
        summary: "Judge a finished sweep's statements again with another judge, as a new sweep",
        description:
          'Runs only the judge (and, with `equivalence`, the BEq+ check) over the recorded statements of sweep `id`, nothing formalized or compiled again. ' +
          'Answers 202 with the new sweep; an existing new ID asked the same answers 200, asked differently 409. 404: no such sweep; 409: it has not finished.',
        tags: ['sweeps'],
        params: RescoreParams,
        body: RescoreBody,
        response: { 202: started, 200: started, ...problemResponses(400, 401, 404, 409, 413, 415, 429) },
      },
    },
    async (request, reply) => {
      const { id: source } = request.params as Static<typeof RescoreParams>;
      const body = request.body as Static<typeof RescoreBody>;
      // An unknown source is a 404 whatever the body says.
      if (!(await options.results.getSweep(source))) throw new HttpProblem(404, `no sweep "${source}"`, { id: source });
      const judge = parseJudgeChoice(body.judge);
      if (!judge) throw new HttpProblem(400, 'judge: expected PROVIDER or PROVIDER:MODEL (a provider name: letters, digits, "_" or "-")');
      let result;
      try {
        result = await startRescore(options.temporal, options.results, source, {
          id: body.id,
          judge,
          threshold: body.threshold ?? FAITHFUL_GRADE,
          equivalence: body.equivalence ?? false,
          ...(body.rubric !== undefined ? { rubric: { file: 'the request', text: body.rubric } } : {}),
          providerNames: options.providerNames ?? [],
          ...(body.window ? { window: body.window } : {}),
          ...(options.taskQueue ? { taskQueue: options.taskQueue } : {}),
          ...(options.leanTaskQueue ? { leanTaskQueue: options.leanTaskQueue } : {}),
          ...(options.llm ? { llm: options.llm } : {}),
        });
      } catch (err) {
        if (err instanceof RescoreRequestError) throw new HttpProblem(err.status, err.message, err.status === 404 ? { id: source } : {});
        throw err;
      }
      if (result.existing && result.differences?.length)
        throw new HttpProblem(409, `a sweep with id "${result.id}" already exists with a different ${result.differences.join(', ')}`, {
          id: result.id,
          differences: result.differences,
        });
      return reply
        .status(result.existing ? 200 : 202)
        .header('location', links(result.id).self!)
        .send({
          id: result.id,
          existing: result.existing,
          total: result.total,
          configurations: result.cells.map((c) => c.name),
          reused: [],
          links: links(result.id),
        });
    },
  );
}
