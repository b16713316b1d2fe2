// 405 Method Not Allowed (RFC 9110 §15.5.6) for a path that exists under other methods, with an
// Allow header naming them; only paths no route has are 404. Answered in onRequest, before any
// body is parsed, so e.g. a QUERY without a Content-Type is a 405 and not a 400 about its body.
import type { FastifyInstance, onRequestHookHandler, RouteOptions } from 'fastify';
import { sendProblem } from './problem';

interface RoutePattern {
  methods: string[];
  regex: RegExp;
}

/** `/v1/formalizations/:id/events` → a regex over a raw (still %-encoded) path; `*` matches the rest. */
function patternOf(url: string): RegExp {
  const source = url
    .split(/(:[A-Za-z0-9_]+|\*)/)
    .map((part) => (part === '*' ? '.*' : part.startsWith(':') ? '[^/]+' : part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${source}/?$`);
}

/** Collects every route as it is added; call before any route is registered. */
export function methodNotAllowed(app: FastifyInstance): void {
  const routes: RoutePattern[] = [];
  app.addHook('onRoute', (route: RouteOptions) => {
    // A catch-all that only explains a mistake (`config: { inAllow: false }`) allows nothing.
    if ((route.config as { inAllow?: boolean } | undefined)?.inAllow === false) return;
    const methods = ([] as string[]).concat(route.method as string | string[]).map((m) => m.toUpperCase());
    routes.push({ methods, regex: patternOf(route.url) });
  });

  const hook: onRequestHookHandler = (request, reply, done) => {
    if (!request.is404) return done();
    const path = request.url.split('?')[0] ?? '';
    const allowed = new Set<string>();
    for (const route of routes) if (route.regex.test(path)) for (const m of route.methods) allowed.add(m);
    if (allowed.size === 0 || allowed.has(request.method)) return done();
    const allow = [...allowed].sort().join(', ');
    reply.header('allow', allow);
    sendProblem(
      reply,
      405,
      `${request.method} is not allowed on ${path.length > 200 ? `${path.slice(0, 200)}…` : path}; allowed: ${allow}`,
    );
  };
  app.addHook('onRequest', hook);
}
