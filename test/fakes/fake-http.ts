// The HTTP plumbing the fake OpenAI server and its batch endpoints share: JSON replies, errors in
// OpenAI's shape, and request bodies read with a size limit.
import type { IncomingMessage, ServerResponse } from 'node:http';

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.destroyed) return;
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

/** An error as OpenAI sends one: `{error: {message, type, param, code}}` (also the body of a
 * batch line that failed). */
export function errorBody(status: number, message: string, extra: { param?: string; code?: string } = {}) {
  const type = status === 429 ? 'rate_limit_exceeded' : status >= 500 ? 'server_error' : 'invalid_request_error';
  return { error: { message, type, param: extra.param ?? null, code: extra.code ?? null } };
}

export function sendError(
  res: ServerResponse,
  status: number,
  message: string,
  headers: Record<string, string> = {},
  extra: { param?: string; code?: string } = {},
): void {
  sendJson(res, status, errorBody(status, message, extra), headers);
}

/** A body larger than the fake takes. */
export class BodyTooLarge extends Error {}

/** The request body; over `maxBytes`, reading stops with BodyTooLarge. */
export async function readBodyBytes(req: IncomingMessage, maxBytes = 64 * 1024 * 1024): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > maxBytes) throw new BodyTooLarge(`request body over ${maxBytes} bytes`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

export async function readBody(req: IncomingMessage): Promise<string> {
  return (await readBodyBytes(req)).toString('utf8');
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
