// Every route's OpenAPI responses include what the server around it can answer, not only what
// its handler does: load shedding (503) anywhere, the router's 414 for an over-long path
// parameter, 400 for a request that fails its schema (or a malformed %-escape in the path),
// 413/415 for a body too large or not JSON, and on /v1 the key check (401) and the rate limit
// (429). A route's own declaration of a status wins. Found by Schemathesis (test/api-schemathesis).
import type { FastifyInstance, RouteOptions } from 'fastify';
import { problemResponses } from './problem';

type Responses = Record<string, unknown>;

function statusesFor(route: RouteOptions, extra: readonly number[]): number[] {
  const schema = route.schema as Record<string, unknown>;
  const methods = ([] as string[]).concat(route.method as string | string[]).map((m) => m.toUpperCase());
  const statuses = [503, ...extra];
  if (schema.params || schema.querystring || schema.headers || schema.body) statuses.push(400);
  if (schema.params) statuses.push(414);
  // Any request with a body is parsed before its route sees it, declared body or not.
  if (methods.some((m) => m === 'POST' || m === 'PUT' || m === 'PATCH')) statuses.push(400, 413, 415);
  return statuses;
}

/** Adds the problem responses to every documented route registered after it in this scope. */
export function frameworkResponses(app: FastifyInstance, extra: readonly number[] = []): void {
  app.addHook('onRoute', (route: RouteOptions) => {
    const schema = route.schema as Record<string, unknown> | undefined;
    if (!schema || schema.hide) return;
    const declared = (schema.response ?? {}) as Responses;
    const added = problemResponses(...statusesFor(route, extra).filter((s) => !(String(s) in declared) && !(s in declared)));
    schema.response = { ...declared, ...added };
  });
}
