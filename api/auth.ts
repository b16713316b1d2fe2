// Bearer API keys on the /v1 routes, checked against the configured hashes.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ApiKey } from '../client/api-keys';
import { sendProblem } from './problem';

declare module 'fastify' {
  interface FastifyRequest {
    /** The name of the API key the request presented (undefined when no keys are configured). */
    apiKeyName?: string;
  }
}

/** An onRequest hook admitting requests with one of the keys; with no keys, everything. */
export function requireApiKey(keys: readonly ApiKey[]) {
  const hashes = keys.map((k) => ({ name: k.name, digest: Buffer.from(k.sha256, 'hex') }));
  return async (request: FastifyRequest, reply: FastifyReply) => {
    if (hashes.length === 0) return;
    const header = request.headers.authorization;
    const match = typeof header === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
    if (!match) {
      reply.header('www-authenticate', 'Bearer');
      return sendProblem(reply, 401, 'an API key is required: send "Authorization: Bearer <key>"');
    }
    const digest = createHash('sha256').update(match[1]!, 'utf8').digest();
    const found = hashes.find((h) => timingSafeEqual(h.digest, digest));
    if (!found) {
      reply.header('www-authenticate', 'Bearer error="invalid_token"');
      return sendProblem(reply, 401, 'the API key is not valid');
    }
    request.apiKeyName = found.name;
  };
}
