// Liveness and readiness.
import type { FastifyPluginAsync } from 'fastify';
import { Type } from '@fastify/type-provider-typebox';
import { ReadinessSchema, type ReadinessReport } from '../schemas';

export const healthRoutes: FastifyPluginAsync<{ readiness: () => Promise<ReadinessReport> }> = async (app, { readiness }) => {
  app.get(
    '/healthz',
    { schema: { summary: 'The API process answers', tags: ['health'], response: { 200: Type.Object({ ok: Type.Boolean() }, { additionalProperties: false }) } } },
    async () => ({ ok: true }),
  );

  app.get(
    '/readyz',
    {
      schema: {
        summary: 'Temporal answers, workers poll both task queues, every index is built (503 until then)',
        tags: ['health'],
        response: { 200: ReadinessSchema, 503: ReadinessSchema },
      },
    },
    async (_request, reply) => {
      const report = await readiness();
      return reply.status(report.ready ? 200 : 503).send(report);
    },
  );
};
