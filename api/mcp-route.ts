// POST /mcp: the MCP server (mcp/server.ts) over streamable HTTP, for assistants that reach the
// API instead of starting `driftline mcp`. Mounted beside /v1, so the same API keys and rate
// limits apply (and none where /v1 is open). Stateless: each POST gets a server and transport of
// its own, answered as one JSON-RPC response or, when the tool sends progress notifications, as
// an event stream that ends with the response. When the client goes away mid-call, the tool
// stops waiting (the run it started goes on).
import { apiKeyDomain } from '../common/trust-domain';
import type { FastifyPluginAsync } from 'fastify';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createMcpServer, type McpDeps } from '../mcp/server';

export interface McpRouteOptions {
  deps: Omit<McpDeps, 'log'>;
}

export const mcpRoutes: FastifyPluginAsync<McpRouteOptions> = async (app, { deps }) => {
  app.post(
    '/mcp',
    // Not in the OpenAPI document: its body and answers are MCP's JSON-RPC (docs/mcp.md).
    { schema: { hide: true } },
    async (request, reply) => {
      const server = createMcpServer({
        ...deps,
        trustDomain: apiKeyDomain(request.apiKeyName),
        log: (message, fields) => request.log.info(fields ?? {}, message),
      });
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      reply.hijack();
      reply.raw.on('close', () => {
        void transport.close();
        void server.close();
      });
      try {
        await server.connect(transport);
        await transport.handleRequest(request.raw, reply.raw, request.body);
      } catch (err) {
        request.log.error({ err }, 'MCP request failed');
        if (!reply.raw.headersSent) {
          reply.raw.writeHead(500, { 'content-type': 'application/json' });
          reply.raw.end(
            JSON.stringify({
              jsonrpc: '2.0',
              error: { code: -32603, message: 'internal error; the server log has the details' },
              id: null,
            }),
          );
        }
      }
    },
  );
};
