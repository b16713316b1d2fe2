// The web page at `/` (built by vite into web/dist) and the little it needs to know about this
// server (`/web/config.json`). Files are served as they are on disk; the hashed assets are cached
// for good, the page itself never.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
import { DEFAULT_RUN_CONFIG } from '../common/run-config-schema';

export const DEFAULT_WEB_ROOT = fileURLToPath(new URL('../web/dist', import.meta.url));

export interface WebOptions {
  /** The built page; default web/dist. */
  root?: string;
  libraries: string[];
  defaultLibrary: string;
  maxStatementChars: number;
  temporalUiUrl?: string;
  namespace: string;
  /** /v1 needs `Authorization: Bearer <key>`: the page asks for a key. */
  apiKeysRequired?: boolean;
  /** The server has the sweep routes (a results database): the page shows the sweeps. */
  sweeps?: boolean;
}

// The page sends only what it needs; strict CSP since it never loads anything from elsewhere.
const PAGE_HEADERS = {
  'cache-control': 'no-cache',
  'content-security-policy':
    "default-src 'self'; style-src 'self'; script-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
};

export async function webRoutes(app: FastifyInstance, options: WebOptions): Promise<void> {
  const root = options.root ?? DEFAULT_WEB_ROOT;
  // Agent mode is offered once the run configuration has a `mode`.
  const modes = 'mode' in DEFAULT_RUN_CONFIG ? ['pipeline', 'agent'] : ['pipeline'];
  app.get('/web/config.json', { schema: { hide: true } }, async () => ({
    libraries: options.libraries,
    defaultLibrary: options.defaultLibrary,
    ...(options.temporalUiUrl ? { temporalUiUrl: options.temporalUiUrl } : {}),
    namespace: options.namespace,
    maxStatementChars: options.maxStatementChars,
    modes,
    apiKeysRequired: options.apiKeysRequired ?? false,
    sweeps: options.sweeps ?? false,
  }));

  if (!existsSync(join(root, 'index.html'))) {
    app.get('/', { schema: { hide: true } }, async (_request, reply) =>
      reply
        .status(503)
        .type('text/html; charset=utf-8')
        .send(
          '<!doctype html><html lang="en"><meta charset="utf-8"><title>driftline</title><h1>driftline</h1><p>The web page is not built yet: run <code>npm run build:web</code> (part of <code>npm run setup</code>). The API is at <a href="/docs">/docs</a>.</p></html>',
        ),
    );
    return;
  }
  await app.register(fastifyStatic, {
    root,
    prefix: '/',
    // Only the files that exist, no catch-all route over the API's paths.
    wildcard: false,
    index: ['index.html'],
    setHeaders: (res, path) => {
      if (path.endsWith('index.html')) for (const [name, value] of Object.entries(PAGE_HEADERS)) res.setHeader(name, value);
      else if (path.includes(`${join('dist', 'assets')}`)) res.setHeader('cache-control', 'public, max-age=31536000, immutable');
    },
  });
}
