// GET /v1/formalizations/:id/events: a run's progress as server-sent events, read from its
// Temporal history (client/run-events.ts). Each event's id is its sequence number, so a client that
// reconnects with Last-Event-ID (EventSource does this by itself) continues without a gap or a
// repeat. The stream ends after the run's last event; a server shutting down ends it cleanly.
import type { FastifyPluginAsync } from 'fastify';
import { Type, type Static, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { followRunEvents } from '../../client/run-events';
import { isFormalization } from '../../client/runs';
import { HttpProblem, problemResponses } from '../problem';
import { IdParams } from './formalizations';
import { SseEventSchema } from '../schemas';

export interface EventRoutesOptions {
  temporal: Client;
  /** Comment lines sent while nothing happens, so proxies keep the connection open. */
  keepAliveMs?: number;
}

const EventsQuery = Type.Object(
  { after: Type.Optional(Type.Integer({ minimum: 0, description: 'Send only events after this sequence number (as Last-Event-ID)' })) },
  { additionalProperties: false },
);
const EventsHeaders = Type.Object({ 'last-event-id': Type.Optional(Type.String({ pattern: '^[0-9]{1,15}$' })) });

export const eventRoutes: FastifyPluginAsync<EventRoutesOptions> = async (fastify, options) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const open = new Set<() => void>();
  // Shutting down: end every stream (clients reconnect with Last-Event-ID elsewhere), so the
  // server's close is not held up by connections that would otherwise last as long as a run.
  app.addHook('preClose', async () => {
    for (const end of [...open]) end();
  });

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
      const header = (request.headers as Static<typeof EventsHeaders>)['last-event-id'];
      const after = Math.max(Number(header ?? 0), (request.query as Static<typeof EventsQuery>).after ?? 0);
      let description;
      try {
        description = await options.temporal.workflow.getHandle(id).describe();
      } catch (err) {
        if (err instanceof WorkflowNotFoundError) throw new HttpProblem(404, `no formalization with id "${id}"`, { id });
        throw err;
      }
      // A sweep's ID is no run's: its history is not a run's story.
      if (!isFormalization(description.type)) throw new HttpProblem(404, `no formalization with id "${id}"`, { id });
      const runId = description.runId;

      const abort = new AbortController();
      const res = reply.raw;
      reply.hijack();
      res.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache, no-transform',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
      });
      // Tells EventSource how long to wait before reconnecting.
      res.write('retry: 2000\n\n');
      const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), options.keepAliveMs ?? 15_000);
      let ended = false;
      const end = () => {
        if (ended) return;
        ended = true;
        clearInterval(keepAlive);
        open.delete(end);
        abort.abort();
        res.end();
      };
      open.add(end);
      request.raw.on('close', end);
      res.on('close', end);
      try {
        for await (const event of followRunEvents(options.temporal, id, { after, runId, signal: abort.signal })) {
          if (ended) break;
          res.write(`id: ${event.seq}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
        }
      } catch (err) {
        if (!ended) {
          request.log.warn({ err: (err as Error).message, id }, 'event stream broken off');
          res.write(
            `event: error\ndata: ${JSON.stringify({ stage: 'error', error: 'the event stream broke off; reconnect with Last-Event-ID' })}\n\n`,
          );
        }
      } finally {
        end();
      }
    },
  );
};
