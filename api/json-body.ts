// Parsing JSON request bodies strictly: bytes that are not UTF-8, strings with lone surrogates
// and prototype keys are refused with a reason, never quietly replaced or dropped.
import { HttpProblem } from './problem';

const utf8 = new TextDecoder('utf-8', { fatal: true });
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const wellFormed = (text: string) => !LONE_SURROGATE.test(text);

/** The first problem with a parsed value, or undefined: lone surrogates, `__proto__` keys. */
function unsafeValue(value: unknown, path: string): string | undefined {
  if (typeof value === 'string') {
    return wellFormed(value)
      ? undefined
      : `${path || 'the body'} contains a lone surrogate (such as "\\ud800"), which is not valid Unicode text`;
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = unsafeValue(value[i], `${path}[${i}]`);
      if (found) return found;
    }
    return undefined;
  }
  if (value && typeof value === 'object') {
    for (const key of Object.keys(value)) {
      const at = path ? `${path}.${key}` : key;
      const child = (value as Record<string, unknown>)[key];
      const prototypeHook = key === 'constructor' && child !== null && typeof child === 'object' && Object.hasOwn(child, 'prototype');
      if (key === '__proto__' || prototypeHook) {
        return `the body is valid JSON but has a "${key}" key (at "${at}"), which is refused for safety (prototype pollution)`;
      }
      if (!wellFormed(key)) return `a key in ${path || 'the body'} contains a lone surrogate, which is not valid Unicode text`;
      const found = unsafeValue(child, at);
      if (found) return found;
    }
  }
  return undefined;
}

/** Fastify content-type parser body for application/json (parseAs: 'buffer'). */
export function parseJsonBody(body: Buffer): unknown {
  let text: string;
  try {
    text = utf8.decode(body);
  } catch {
    throw new HttpProblem(400, 'the body is not valid UTF-8; send JSON encoded as UTF-8');
  }
  if (text.trim() === '') throw new HttpProblem(400, 'the body is empty; send a JSON object');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new HttpProblem(400, `the body is not valid JSON: ${(err as Error).message}`);
  }
  const unsafe = unsafeValue(value, '');
  if (unsafe) throw new HttpProblem(400, unsafe);
  return value;
}
