// How a configuration field names its environment variable: in the schema, beside the field's
// type and default. `setting(...)` attaches the variable and its description to a field;
// `envSettings(schema)` walks a schema and lists every declared variable with its config path,
// type and default, which is what `ENV_KEYS` and the configuration reference
// (docs/configuration.md, infra/config-reference.ts) are derived from.
import { z } from 'zod';

export interface EnvDoc {
  /** The variable; for a record with one variable per key, the prefix and the keys
   * (`DRIFTLINE_ROLE_` + `JUDGE` for the key `judge`). */
  env: string | { prefix: string; keys: readonly string[] };
  /** For a record with one variable per key, a function of the key. */
  description: string | ((key: string) => string);
  /** What applies when the variable is unset and the schema has no default of its own (for a
   * record with one variable per key, it may be a function of the key). */
  unset?: string | ((key: string) => string);
  /** The type in words, where the schema's own would say it badly. */
  type?: string;
}

const envRegistry = z.registry<EnvDoc, z.ZodType>();

/** The field `schema`, read from the environment variable `env`. */
export function setting<T extends z.ZodType>(
  env: string,
  schema: T,
  description: string,
  more: Omit<EnvDoc, 'env' | 'description'> = {},
): T {
  envRegistry.add(schema, { env, description, ...more });
  return schema;
}

/** A record whose entries each come from their own variable, `prefix` + the key in capitals. */
export function settingPerKey<T extends z.ZodType>(
  prefix: string,
  keys: readonly string[],
  schema: T,
  description: (key: string) => string,
  more: Omit<EnvDoc, 'env' | 'description'> = {},
): T {
  envRegistry.add(schema, { env: { prefix, keys }, description, ...more });
  return schema;
}

/** The variable of a record's key: `DRIFTLINE_ROLE_` + `judge2` → `DRIFTLINE_ROLE_JUDGE2`. */
export function envForKey(prefix: string, key: string): string {
  return prefix + key.replace(/[^A-Za-z0-9]+/g, '_').toUpperCase();
}

export interface EnvSetting {
  env: string;
  /** Dotted config path, as in `driftline.config.json`. */
  path: string;
  type: string;
  /** The schema's default, as one would write it in the variable. */
  default?: string;
  /** What applies when unset and there is no default, in words. */
  unset?: string;
  description: string;
}

type Def = { type: string; [key: string]: unknown };
const defOf = (schema: z.ZodType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def;

/** Every declared variable of an object schema, in the schema's order. */
export function envSettings(schema: z.ZodType, path: string[] = []): EnvSetting[] {
  const out: EnvSetting[] = [];
  const doc = envRegistry.get(schema);
  if (doc) {
    const dotted = path.join('.');
    const describe = (key: string) => (typeof doc.description === 'string' ? doc.description : doc.description(key));
    const unsetOf = (key: string) => (typeof doc.unset === 'function' ? doc.unset(key) : doc.unset);
    if (typeof doc.env === 'string') {
      const value = defaultOf(schema);
      // An empty list as the default reads as "none", not as an empty value.
      const shownDefault = value === NO_DEFAULT || (Array.isArray(value) && value.length === 0) ? undefined : shown(value);
      const unset = unsetOf('') ?? (Array.isArray(value) ? 'none' : undefined);
      out.push({
        env: doc.env,
        path: dotted,
        type: doc.type ?? typeOf(schema),
        ...(shownDefault !== undefined ? { default: shownDefault } : {}),
        ...(unset ? { unset } : {}),
        description: describe(''),
      });
    } else {
      const valueType = doc.type ?? typeOf(recordValue(schema) ?? schema);
      for (const key of doc.env.keys) {
        out.push({
          env: envForKey(doc.env.prefix, key),
          path: `${dotted}.${key}`,
          type: valueType,
          ...(unsetOf(key) ? { unset: unsetOf(key) } : {}),
          description: describe(key),
        });
      }
    }
    return out;
  }
  const object = objectOf(schema);
  if (object) {
    for (const [key, field] of Object.entries(object)) out.push(...envSettings(field, [...path, key]));
  }
  return out;
}

/** The shape of an object schema behind defaults, prefaults and refinements. */
function objectOf(schema: z.ZodType): Record<string, z.ZodType> | undefined {
  const def = defOf(schema);
  if (def.type === 'object') return def.shape as Record<string, z.ZodType>;
  if (def.type === 'default' || def.type === 'prefault' || def.type === 'optional') return objectOf(def.innerType as z.ZodType);
  return undefined;
}

function recordValue(schema: z.ZodType): z.ZodType | undefined {
  const def = defOf(schema);
  if (def.type === 'record') return def.valueType as z.ZodType;
  if (def.type === 'default' || def.type === 'prefault' || def.type === 'optional') return recordValue(def.innerType as z.ZodType);
  if (def.type === 'pipe') return recordValue(def.out as z.ZodType);
  return undefined;
}

const NO_DEFAULT = Symbol('no default');

function defaultOf(schema: z.ZodType): unknown {
  const def = defOf(schema);
  if (def.type === 'default' || def.type === 'prefault') return def.defaultValue;
  if (def.type === 'optional' || def.type === 'nullable') return defaultOf(def.innerType as z.ZodType);
  if (def.type === 'pipe') {
    const before = defaultOf(def.in as z.ZodType);
    return before !== NO_DEFAULT ? before : defaultOf(def.out as z.ZodType);
  }
  return NO_DEFAULT;
}

function shown(value: unknown): string {
  if (Array.isArray(value)) return value.join(',');
  if (value && typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** The type as written in the environment. */
export function typeOf(schema: z.ZodType): string {
  const def = defOf(schema);
  switch (def.type) {
    case 'default':
    case 'prefault':
    case 'optional':
    case 'nullable':
      return typeOf(def.innerType as z.ZodType);
    case 'pipe': {
      // z.preprocess(fn, schema) is a pipe from a transform: the schema after it says the type.
      const input = def.in as z.ZodType;
      return defOf(input).type === 'transform' ? typeOf(def.out as z.ZodType) : typeOf(input);
    }
    case 'string':
      return checksOf(def).some((c) => c.format === 'url') ? 'URL' : 'string';
    case 'number': {
      const checks = checksOf(def);
      const integer = checks.some((c) => c.format === 'safeint' || c.format === 'int32');
      return (integer ? 'integer' : 'number') + range(checks);
    }
    case 'boolean':
      return 'boolean';
    case 'enum':
      return `one of ${Object.values(def.entries as Record<string, string>)
        .map((v) => `\`${v}\``)
        .join(', ')}`;
    case 'union': {
      const options = def.options as z.ZodType[];
      if (options.some((o) => defOf(o).type === 'boolean')) return 'boolean (`true`, `false`, `1`, `0`)';
      if (options.some((o) => defOf(o).type === 'array')) return 'list, comma separated';
      return options.map(typeOf).join(' or ');
    }
    case 'record':
      return 'JSON object';
    case 'array':
      return 'list, comma separated';
    case 'object':
      return 'JSON object';
    default:
      return def.type;
  }
}

interface Check {
  check: string;
  format?: string;
  value?: number;
  inclusive?: boolean;
}

function checksOf(def: Def): Check[] {
  return ((def.checks as { _zod: { def: Check } }[] | undefined) ?? []).map((c) => c._zod.def);
}

function range(checks: Check[]): string {
  const low = checks.find((c) => c.check === 'greater_than');
  const high = checks.find((c) => c.check === 'less_than');
  if (low && high) return `, ${low.value}${low.inclusive ? '' : ' (exclusive)'} to ${high.value}${high.inclusive ? '' : ' (exclusive)'}`;
  if (low) return low.inclusive ? ` ≥ ${low.value}` : ` > ${low.value}`;
  if (high) return high.inclusive ? ` ≤ ${high.value}` : ` < ${high.value}`;
  return '';
}
