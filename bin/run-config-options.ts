// The CLI's run-configuration options, derived from the one schema (common/run-config-schema.ts):
// a field becomes a flag named after it in kebab case (`topK` → `--top-k`), booleans that default
// to true become `--no-…`, integers are checked against the schema's range, unions of literals
// (or enums) become choices (lists of them: comma-separated). A new field needs no change here.
import { InvalidArgumentError, Option, type Command } from 'commander';
import { RunConfigSchema, type CliHint, type RunConfig } from '../common/run-config-schema';

interface FieldSchema {
  type?: string;
  anyOf?: { const?: unknown }[];
  enum?: unknown[];
  items?: FieldSchema;
  properties?: Record<string, unknown>;
  minimum?: number;
  maximum?: number;
  default?: unknown;
  description?: string;
  cli?: CliHint;
}

const kebab = (key: string) => key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

function literals(schema: FieldSchema | undefined): string[] | undefined {
  const values = schema?.enum ?? schema?.anyOf?.map((s) => s.const);
  return values && values.length > 0 && values.every((v) => typeof v === 'string') ? (values as string[]) : undefined;
}

function numberParser(schema: FieldSchema, integer: boolean): (value: string) => number {
  const { minimum = -Infinity, maximum = Infinity } = schema;
  const range = `${Number.isFinite(minimum) ? `from ${minimum} ` : ''}${Number.isFinite(maximum) ? `to ${maximum}` : ''}`.trim();
  return (value) => {
    const n = Number(value);
    if (value.trim() === '' || !Number.isFinite(n) || (integer && !Number.isInteger(n)) || n < minimum || n > maximum) {
      throw new InvalidArgumentError(`expected ${integer ? 'a whole number' : 'a number'}${range ? ` ${range}` : ''}`);
    }
    return n;
  };
}

/** A `--no-…` flag's words from the field's (which say what it does when on): "do not …", the
 * field's "(off: …)" note as what happens instead. */
export function offDescription(description: string): string {
  const off = /\s*\(off: ([^)]*)\)\s*$/.exec(description);
  const on = off ? description.slice(0, off.index) : description;
  return `do not ${on}${off ? `: ${off[1]}` : ''}`;
}

function option(key: string, schema: FieldSchema): Option {
  const flag = kebab(key);
  const short = schema.cli?.short ? `${schema.cli.short}, ` : '';
  const arg = schema.cli?.arg ?? 'value';
  const description = schema.description ?? key;
  if (schema.type === 'boolean') {
    return schema.default === true
      ? new Option(`${short}--no-${flag}`, offDescription(description))
      : new Option(`${short}--${flag}`, description);
  }
  const opt = new Option(`${short}--${flag} <${arg}>`, description);
  if (schema.default !== undefined) opt.default(schema.default);
  const choices = literals(schema);
  if (choices) return opt.choices(choices);
  if (schema.type === 'integer' || schema.type === 'number') return opt.argParser(numberParser(schema, schema.type === 'integer'));
  if (schema.type === 'object') {
    // `key=value,key=value`, keys from the object's properties (e.g. --models formalizer=gpt-4.1).
    const keys = Object.keys(schema.properties ?? {});
    return opt.argParser((value: string) => {
      const out: Record<string, string> = {};
      for (const pair of value
        .split(',')
        .map((p) => p.trim())
        .filter(Boolean)) {
        const eq = pair.indexOf('=');
        const k = pair.slice(0, eq).trim();
        if (eq < 1 || !pair.slice(eq + 1).trim()) throw new InvalidArgumentError(`expected key=value pairs, got "${pair}"`);
        if (keys.length && !keys.includes(k)) throw new InvalidArgumentError(`unknown ${k}; allowed: ${keys.join(', ')}`);
        out[k] = pair.slice(eq + 1).trim();
      }
      return out;
    });
  }
  const itemChoices = schema.type === 'array' ? literals(schema.items) : undefined;
  if (schema.type === 'array') {
    return opt.argParser((value: string) => {
      const list = [
        ...new Set(
          value
            .split(',')
            .map((v) => v.trim())
            .filter(Boolean),
        ),
      ];
      const bad = itemChoices ? list.filter((v) => !itemChoices.includes(v)) : [];
      if (bad.length) throw new InvalidArgumentError(`unknown ${bad.join(', ')}; allowed: ${itemChoices!.join(', ')}`);
      return list;
    });
  }
  return opt;
}

/** Adds one option per run-configuration field to `command`. */
export function addRunConfigOptions(command: Command): Command {
  for (const [key, schema] of Object.entries(RunConfigSchema.properties)) command.addOption(option(key, schema as FieldSchema));
  return command;
}

/** The run configuration the parsed options ask for (fields the user could not have set are left out). */
export function runConfigFromOptions(opts: Record<string, unknown>): Partial<RunConfig> {
  const config: Record<string, unknown> = {};
  for (const key of Object.keys(RunConfigSchema.properties)) if (opts[key] !== undefined) config[key] = opts[key];
  return config as Partial<RunConfig>;
}
