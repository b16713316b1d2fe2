// Liveness and readiness.
import type { FastifyPluginAsync } from 'fastify';
import { Type } from '@fastify/type-provider-typebox';
import { ReadinessSchema, type ReadinessReport } from '../schemas';
import { PROBLEM_TYPE, ProblemSchema } from '../problem';

export const healthRoutes: FastifyPluginAsync<{ readiness: () => Promise<ReadinessReport> }> = async (app, { readiness }) => {
  app.get(
    '/healthz',
    {
      schema: {
        operationId: 'healthz',
        summary: 'The API process answers',
        tags: ['health'],
        response: { 200: Type.Object({ ok: Type.Boolean() }, { additionalProperties: false }) },
      },
    },
    async () => ({ ok: true }),
  );

  app.get(
    '/readyz',
    {
      schema: {
        operationId: 'readyz',
        summary: 'Temporal answers, workers poll both task queues, every index is built (503 until then)',
        tags: ['health'],
        response: {
          200: ReadinessSchema,
          // Not ready: the report; overloaded (load shedding, before the route runs): a problem.
          503: {
            description: 'Not ready (the report says why), or overloaded (a problem, with Retry-After)',
            content: { 'application/json': { schema: ReadinessSchema }, [PROBLEM_TYPE]: { schema: ProblemSchema } },
          },
        },
      },
    },
    async (_request, reply) => {
      const report = await readiness();
      return reply.status(report.ready ? 200 : 503).send(report);
    },
  );
};
