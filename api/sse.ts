// Server-sent event streams of the API (a run's events, a batch of checks' events), written
// once: where a reader resumes (Last-Event-ID or ?after=), the stream's headers, keep-alive
// comments, an end when the client leaves or the server closes, and an `error` event when the
// source breaks off. Each event's SSE id is its sequence number.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type, type Static } from '@fastify/type-provider-typebox';

export const EventsQuery = Type.Object(
  { after: Type.Optional(Type.Integer({ minimum: 0, description: 'Send only events after this sequence number (as Last-Event-ID)' })) },
  { additionalProperties: false },
);
export const EventsHeaders = Type.Object({ 'last-event-id': Type.Optional(Type.String({ pattern: '^[0-9]{1,15}$' })) });

/** The sequence number a reader has seen: the later of Last-Event-ID and `?after=`. */
export function resumeAfter(request: FastifyRequest): number {
  const header = (request.headers as Static<typeof EventsHeaders>)['last-event-id'];
  return Math.max(Number(header ?? 0), (request.query as Static<typeof EventsQuery>).after ?? 0);
}

export interface StreamOptions {
  /** Comment lines sent while nothing happens, so proxies keep the connection open. */
  keepAliveMs?: number;
}

/**
 * Streams for one route plugin: `send` writes the events of `follow` to the response until they
 * end, the client leaves or the server closes (a shutting-down server ends every stream, so its
 * close is not held up; readers resume elsewhere with Last-Event-ID).
 */
export function eventStreams(app: FastifyInstance, options: StreamOptions) {
  const open = new Set<() => void>();
  app.addHook('preClose', async () => {
    for (const end of [...open]) end();
  });

  return async function send(
    request: FastifyRequest,
    reply: FastifyReply,
    follow: (signal: AbortSignal) => AsyncIterable<{ seq: number; type: string }>,
    brokenOff: Record<string, unknown>,
    logContext: Record<string, unknown>,
  ): Promise<void> {
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
      for await (const event of follow(abort.signal)) {
        if (ended) break;
        res.write(`id: ${event.seq}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
      }
    } catch (err) {
      if (!ended) {
        request.log.warn({ err: (err as Error).message, ...logContext }, 'event stream broken off');
        res.write(`event: error\ndata: ${JSON.stringify(brokenOff)}\n\n`);
      }
    } finally {
      end();
    }
  };
}
