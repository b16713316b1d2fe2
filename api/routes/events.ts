// GET /v1/formalizations/:id/events: a run's progress as server-sent events, read from its
// Temporal history (client/run-events.ts). Each event's id is its sequence number, so a client that
// reconnects with Last-Event-ID (EventSource does this by itself) continues without a gap or a
// repeat. The stream ends after the run's last event; a server shutting down ends it cleanly.
import type { FastifyPluginAsync } from 'fastify';
import { type Static, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Client } from '@temporalio/client';
import { followRunEvents } from '../../client/run-events';
import { describeIf, isFormalization } from '../../client/runs';
import { HttpProblem, problemResponses } from '../problem';
import { IdParams } from './formalizations';
import { SseEventSchema } from '../schemas';
import { EventsHeaders, EventsQuery, eventStreams, resumeAfter } from '../sse';

export interface EventRoutesOptions {
  temporal: Client;
  /** Comment lines sent while nothing happens, so proxies keep the connection open. */
  keepAliveMs?: number;
}

export const eventRoutes: FastifyPluginAsync<EventRoutesOptions> = async (fastify, options) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const send = eventStreams(app, options);

  app.get(
    '/v1/formalizations/:id/events',
    {
      schema: {
        operationId: 'getFormalizationEvents',
        summary: "A run's progress as server-sent events",
        description:
          'Every stage as it starts and ends (stage.started / stage.completed / stage.failed), every compile round, then one of run.completed, ' +
          "run.failed or run.canceled, after which the stream ends. `id:` is the event's sequence number: reconnect with Last-Event-ID " +
          '(or ?after=) to continue where you left off. Each `data:` is a JSON object with at least `seq`, `type` and `stage`.',
        tags: ['formalizations'],
        params: IdParams,
        querystring: EventsQuery,
        headers: EventsHeaders,
        response: {
          200: {
            description: 'An event stream; each event as an object of its SSE fields',
            content: { 'text/event-stream': { schema: SseEventSchema } },
          },
          ...problemResponses(400, 401, 404, 429),
        },
      },
    },
    async (request, reply) => {
      const { id } = request.params as Static<typeof IdParams>;
      const after = resumeAfter(request);
      // A sweep's ID is no run's: its history is not a run's story.
      const found = await describeIf(options.temporal, id, isFormalization);
      if (!found) throw new HttpProblem(404, `no formalization with id "${id}"`, { id });
      const runId = found.description.runId;

      await send(
        request,
        reply,
        (signal) => followRunEvents(options.temporal, id, { after, runId, signal }),
        { stage: 'error', error: 'the event stream broke off; reconnect with Last-Event-ID' },
        { id },
      );
    },
  );
};
