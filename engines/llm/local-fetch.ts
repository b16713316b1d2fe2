// The local GGUF model behind the OpenAI chat-completions protocol, in process: a `fetch` that
// answers POST …/chat/completions from LocalGgufChat. The OpenAI client, the structured-output
// handling, the reply cache and the accounting then treat the local model like any provider,
// and no server or port is involved. `response_format` json_schema (or json_object with a
// schema) becomes a grammar, and so does llama.cpp's `grammar` field (GBNF) for free text; tools
// are refused (the small local models cannot call them).
import { randomUUID } from 'node:crypto';
import { LocalContextError, type LocalChatMessage, type LocalGgufChat } from './local-gguf';

/** The base URL the OpenAI client is given for the local provider (never contacted). */
export const LOCAL_BASE_URL = 'http://local-gguf.invalid/v1';

function error(status: number, message: string, type = 'invalid_request_error', code?: string): Response {
  return new Response(JSON.stringify({ error: { message, type, ...(code ? { code } : {}) } }), {
    status,
    headers: { 'content-type': 'application/json' },
  });
}

function text(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content))
    return content.map((p) => (p && typeof p === 'object' && 'text' in p ? String((p as { text: unknown }).text) : '')).join('');
  return '';
}

/** `json_object` without a schema: any JSON object. */
const ANY_OBJECT = { type: 'object', additionalProperties: true };

function schemaOf(format: unknown): Record<string, unknown> | undefined {
  if (!format || typeof format !== 'object') return undefined;
  const f = format as { type?: string; json_schema?: { schema?: Record<string, unknown> }; schema?: Record<string, unknown> };
  if (f.type === 'json_schema') return f.json_schema?.schema;
  if (f.type === 'json_object') return f.schema ?? ANY_OBJECT;
  return undefined;
}

export function localFetch(chat: LocalGgufChat, defaults: { maxTokens: number } = { maxTokens: 1024 }): typeof fetch {
  return async (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    if (!/\/chat\/completions$/.test(new URL(url).pathname))
      return error(404, `the local model serves only chat completions, not ${new URL(url).pathname}`, 'not_found_error');
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(String(init?.body ?? ''));
    } catch {
      return error(400, 'the request body is not JSON');
    }
    if (Array.isArray(body.tools) && body.tools.length > 0)
      return error(400, `the local model (${chat.id}) cannot call tools; use an endpoint that supports tool calling for agent mode`);
    const messages: LocalChatMessage[] = [];
    for (const m of (body.messages as { role: string; content: unknown }[]) ?? []) {
      const role = m.role === 'developer' ? 'system' : m.role;
      if (role !== 'system' && role !== 'user' && role !== 'assistant')
        return error(400, `messages of role "${m.role}" are not supported by the local model`);
      messages.push({ role, content: text(m.content) });
    }
    const schema = schemaOf(body.response_format);
    try {
      const reply = await chat.complete({
        messages,
        ...(schema ? { jsonSchema: schema } : typeof body.grammar === 'string' ? { grammar: body.grammar } : {}),
        maxTokens:
          typeof body.max_tokens === 'number'
            ? body.max_tokens
            : typeof body.max_completion_tokens === 'number'
              ? body.max_completion_tokens
              : defaults.maxTokens,
        ...(typeof body.temperature === 'number' ? { temperature: body.temperature } : {}),
        ...(typeof body.seed === 'number' ? { seed: body.seed } : {}),
        ...(init?.signal ? { signal: init.signal } : {}),
      });
      const usage = {
        prompt_tokens: reply.usage.promptTokens,
        completion_tokens: reply.usage.completionTokens,
        total_tokens: reply.usage.promptTokens + reply.usage.completionTokens,
      };
      return new Response(
        JSON.stringify({
          id: `chatcmpl-${randomUUID()}`,
          object: 'chat.completion',
          created: Math.floor(Date.now() / 1000),
          model: String(body.model ?? chat.id),
          choices: [
            { index: 0, message: { role: 'assistant', content: reply.content }, finish_reason: reply.finishReason, logprobs: null },
          ],
          usage,
        }),
        { status: 200, headers: { 'content-type': 'application/json' } },
      );
    } catch (err) {
      if (init?.signal?.aborted) throw err;
      if (err instanceof LocalContextError) return error(400, err.message, 'invalid_request_error', 'context_length_exceeded');
      return error(500, `the local model failed: ${(err as Error).message}`, 'server_error');
    }
  };
}
