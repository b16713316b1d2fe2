// JSON Schema for OpenAI's strict structured outputs, derived from a zod schema. Strict mode
// wants every object closed and every property required, and it rejects some keywords; zod
// still validates those constraints after the reply arrives.
import { z } from 'zod';

/** Keywords strict mode refuses; the zod schema keeps checking them on our side. */
const UNSUPPORTED = new Set([
  '$schema',
  'minLength',
  'maxLength',
  'minProperties',
  'maxProperties',
  'uniqueItems',
  'propertyNames',
  'patternProperties',
  'unevaluatedProperties',
  'default',
]);

export function toStrictJsonSchema(schema: z.ZodType): Record<string, unknown> {
  const json = z.toJSONSchema(schema) as Record<string, unknown>;
  if (json.type !== 'object') {
    throw new Error('A structured LLM reply must be a JSON object at the top level');
  }
  return tighten(json, '$') as Record<string, unknown>;
}

function tighten(node: unknown, path: string): unknown {
  if (Array.isArray(node)) return node.map((n, i) => tighten(n, `${path}[${i}]`));
  if (node === null || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (UNSUPPORTED.has(key)) continue;
    // Property names are data, not keywords: recurse into their schemas without filtering names.
    if (key === 'properties' && value && typeof value === 'object') {
      out[key] = Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, tighten(sub, `${path}.${name}`)]));
    } else {
      out[key] = tighten(value, path);
    }
  }
  if (out.type === 'object' || out.properties) {
    const properties = (out.properties ?? {}) as Record<string, unknown>;
    const required = new Set((out.required as string[] | undefined) ?? []);
    const optional = Object.keys(properties).filter((k) => !required.has(k));
    if (optional.length > 0) {
      // Making them required would change what zod accepts; say how to model it instead.
      throw new Error(
        `Strict structured output needs every property required; ${path} has optional ` +
          `${optional.join(', ')} (use .nullable() instead of .optional())`,
      );
    }
    out.required = Object.keys(properties);
    out.additionalProperties = false;
  }
  return out;
}
