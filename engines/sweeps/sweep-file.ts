// The sweep file (YAML or JSON): benchmark(s) and selection, library, samples, window, retry
// policy, leave-out policy, and named configurations or a factorial design. Validated against
// one schema; an error names the path of the bad field (`configurations.drift.topK`).
import { readFile } from 'node:fs/promises';
import { dirname, isAbsolute, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { AGENT_TOOL_NAMES, MAX_AGENT_STEPS, type RunConfig } from '../../common/run-config-schema';
import { PROVIDER_NAME_PATTERN } from '../../common/run-config-schema';
import { LLM_ROLES } from '../../common/llm-roles';
import { agentConfigProblem } from '../../common/run-config';
import type { LeaveOutPolicy, SweepBudget } from '../../common/sweep';
import type { BenchmarkSource } from '../benchmarks/load';
import { resolveNamedBenchmark } from '../benchmarks/named';

/** The run configuration a cell may set: the API's `config` object (every field optional). */
export const RunConfigFields = z
  .object({
    decompose: z.boolean(),
    retrieval: z.enum(['drift', 'monolithic', 'oracle', 'none']),
    topK: z.number().int().min(1).max(100),
    illustrate: z.boolean(),
    examples: z.number().int().min(0).max(20),
    repairRounds: z.number().int().min(0).max(20),
    judge: z.boolean(),
    mode: z.enum(['pipeline', 'agent']),
    tools: z
      .array(z.enum(AGENT_TOOL_NAMES))
      .max(AGENT_TOOL_NAMES.length)
      .refine((t) => new Set(t).size === t.length, 'a tool is named twice'),
    maxSteps: z.number().int().min(1).max(MAX_AGENT_STEPS),
    tokenBudget: z.number().int().min(1),
    wallClockSeconds: z.number().int().min(1).max(86_400),
    driftContext: z.boolean(),
    cache: z.boolean(),
    temperature: z.number().min(0).max(2),
    models: z
      .object(Object.fromEntries(LLM_ROLES.map((r) => [r, z.string().min(1).max(200)])))
      .partial()
      .strict(),
    providers: z
      .object(
        Object.fromEntries(
          LLM_ROLES.map((r) => [
            r,
            z.string().regex(new RegExp(PROVIDER_NAME_PATTERN), 'a provider name uses letters, digits, "_" or "-"').max(64),
          ]),
        ),
      )
      .partial()
      .strict(),
    costBudgetUsd: z.number().positive(),
  })
  .partial()
  .strict();

/** A cell's run configuration, with the API's own check of agent settings. */
export const RunConfigPatch = RunConfigFields.superRefine((config, ctx) => {
  const problem = agentConfigProblem(config);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});

/** A predictions configuration's file: which field of a line is the item id, the statement and
 * (optionally) the sample index. */
export const PredictionsSchema = z
  .object({
    path: z.string().min(1),
    format: z.literal('jsonl'),
    fields: z.object({ id: z.string().min(1), statement: z.string().min(1), sample: z.string().min(1).optional() }).strict(),
  })
  .strict();

/** What a predictions configuration may set besides its file: the judge's settings. */
export const PREDICTIONS_CONFIG_FIELDS = ['judge', 'models', 'providers', 'cache', 'temperature', 'tokenBudget', 'costBudgetUsd'] as const;

/** A named configuration: a run configuration, or a predictions file with judge settings. */
const ConfigurationSchema = RunConfigFields.extend({ predictions: PredictionsSchema.optional() }).superRefine((c, ctx) => {
  const { predictions, ...config } = c;
  if (!predictions) {
    const problem = agentConfigProblem(config);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
    return;
  }
  for (const key of Object.keys(config)) {
    if (!(PREDICTIONS_CONFIG_FIELDS as readonly string[]).includes(key))
      ctx.addIssue({
        code: 'custom',
        path: [key],
        message: `does not apply to a predictions configuration (its statements come from the file); it may set ${PREDICTIONS_CONFIG_FIELDS.join(', ')}`,
      });
  }
  for (const key of ['models', 'providers'] as const) {
    for (const role of Object.keys(config[key] ?? {}))
      if (role !== 'judge')
        ctx.addIssue({ code: 'custom', path: [key, role], message: 'a predictions configuration calls only the judge' });
  }
});

const FieldMapSchema = z
  .object({
    id: z.string().min(1),
    informal: z.string().min(1),
    goldStatement: z.string().min(1).optional(),
    goldPremises: z.string().min(1).optional(),
    header: z.string().min(1).optional(),
    tags: z.record(z.string(), z.string().min(1)).optional(),
  })
  .strict();

const BenchmarkSchema = z
  .object({
    /** A benchmark of the public data by name (engines/benchmarks/named.ts), resolved in the data directory. */
    name: z.string().min(1).optional(),
    /** With `name`: one of its splits (ConNF: `dev`), the same items from the full file or the split's own. */
    split: z.string().min(1).optional(),
    path: z.string().min(1).optional(),
    format: z.enum(['rautoformalizer', 'deepseek', 'jsonl']).optional(),
    limit: z.number().int().min(1).optional(),
    offset: z.number().int().min(0).optional(),
    seed: z.number().int().optional(),
    ids: z.array(z.string().min(1)).min(1).optional(),
    fields: FieldMapSchema.optional(),
    tags: z.record(z.string(), z.string()).optional(),
  })
  .strict()
  .refine((b) => (b.name === undefined) !== (b.path === undefined), {
    message:
      'name a benchmark of the data directory ("name", e.g. connf, with "split": dev) or give its file ("path" and "format"), one of the two',
    path: ['name'],
  })
  .refine((b) => b.path === undefined || b.format !== undefined, {
    message: 'a benchmark file needs "format" (rautoformalizer, deepseek or jsonl)',
    path: ['format'],
  })
  .refine((b) => b.split === undefined || b.name !== undefined, {
    message: '"split" goes with "name" (a file is already one split)',
    path: ['split'],
  })
  .refine((b) => b.format !== 'jsonl' || b.fields !== undefined, {
    message: 'the jsonl format needs "fields" (which field is id, informal, …)',
    path: ['fields'],
  })
  .refine((b) => b.seed === undefined || b.limit !== undefined, {
    message: 'a seeded sample needs "limit" (how many items to draw)',
    path: ['seed'],
  })
  .refine((b) => b.ids === undefined || (b.limit === undefined && b.offset === undefined && b.seed === undefined), {
    message: '"ids" selects exactly those items; do not combine it with limit, offset or seed',
    path: ['ids'],
  });

/** A name usable inside a workflow ID (`<sweep>/<config>/<item>/<sample>`). */
const NAME = /^[A-Za-z0-9][A-Za-z0-9._+=,-]*$/;
const nameMessage = 'use letters, digits and . _ + = , - (no "/" or spaces)';

/** A factor's levels: named patches, or a list of values of one run-config field. */
const LevelsSchema = z.union([
  z.record(z.string().regex(NAME, nameMessage), RunConfigPatch),
  z.array(z.union([z.boolean(), z.number(), z.string()])).min(2),
]);

const FactorialSchema = z
  .object({
    /** What every cell starts from. */
    base: RunConfigPatch.optional(),
    factors: z.record(z.string().regex(NAME, nameMessage), LevelsSchema),
  })
  .strict();

export const SweepFileSchema = z
  .object({
    id: z.string().regex(NAME, nameMessage).max(100).optional(),
    // One benchmark or several; parseSweep wraps a single one in a list first.
    benchmark: z.array(BenchmarkSchema).min(1),
    library: z.string().min(1),
    /** The index version to pin; default: the library alias's current version (recorded). */
    indexVersion: z.string().min(1).optional(),
    samples: z.number().int().min(1).max(100).default(1),
    window: z.number().int().min(1).max(1000).default(4),
    retry: z
      .object({ maxAttempts: z.number().int().min(1).max(20).default(2) })
      .strict()
      .prefault({}),
    leaveOut: z.enum(['item', 'file']).default('item'),
    /** Stop starting runs once the sweep's LLM calls used this many tokens or US dollars. */
    budget: z
      .object({ tokens: z.number().int().min(1).optional(), costUsd: z.number().positive().optional() })
      .strict()
      .refine((b) => b.tokens !== undefined || b.costUsd !== undefined, { message: 'a budget names "tokens", "costUsd" or both' })
      .optional(),
    /** Batch mode: the runs' calls to batch-capable providers go in provider batches (common/llm-batch.ts). */
    llm: z
      .object({
        batch: z.boolean().default(false),
        /** Times a failed line is sent in a new batch before it is sent one at a time. */
        resubmits: z.number().int().min(0).max(10).optional(),
      })
      .strict()
      .optional(),
    configurations: z.record(z.string().regex(NAME, nameMessage), ConfigurationSchema).optional(),
    factorial: FactorialSchema.optional(),
  })
  .strict()
  .refine((f) => f.configurations !== undefined || f.factorial !== undefined, {
    message: 'declare "configurations" (named run configurations) or a "factorial" design',
    path: ['configurations'],
  });

export type SweepFile = z.infer<typeof SweepFileSchema>;

/** The sweep file as a JSON Schema (draft 2020-12), for the API's OpenAPI document: the fields,
 * types and bounds the schema above checks (its cross-field rules are described in words).
 * `benchmark` is one object or a list of them, as parseSweep accepts. */
export function sweepFileJsonSchema(): Record<string, unknown> {
  const { $schema: _, ...schema } = z.toJSONSchema(SweepFileSchema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown> & {
    properties: Record<string, { items?: unknown }>;
  };
  const list = schema.properties.benchmark!;
  schema.properties.benchmark = { anyOf: [list.items, list], description: 'one benchmark, or several' } as never;
  return {
    ...schema,
    description:
      'A sweep file. Also checked: "configurations" or "factorial" is present; the jsonl format has "fields"; "seed" comes with "limit"; ' +
      '"ids" is not combined with limit, offset or seed; agent settings are consistent (as for a run\'s config); ' +
      'a configuration with "predictions" (statements read from a JSONL file) sets only judge, models.judge, providers.judge, cache, temperature, tokenBudget and costBudgetUsd.',
  };
}

/** A predictions configuration's file, its path resolved as benchmark paths are. */
export type PredictionsSource = z.infer<typeof PredictionsSchema>;

export interface NamedConfig {
  name: string;
  config: Partial<RunConfig>;
  /** For factorial cells: factor → level. */
  factors?: Record<string, string>;
  /** Statements read from this file instead of generated (engines/sweeps/predictions.ts). */
  predictions?: PredictionsSource;
}

/** A validated sweep: what `sweep start` needs, with paths resolved. */
export interface SweepSpec {
  id?: string;
  benchmarks: BenchmarkSource[];
  library: string;
  indexVersion?: string;
  samples: number;
  window: number;
  maxAttempts: number;
  leaveOut: LeaveOutPolicy;
  configurations: NamedConfig[];
  /** The sweep's LLM budget (tokens and/or USD over all its runs). */
  budget?: SweepBudget;
  /** Batch mode (the sweep file's `llm`, or `sweep start --batch`). */
  llm?: SweepLlmMode;
}

export interface SweepLlmMode {
  batch: boolean;
  resubmits?: number;
}

export class SweepFileError extends Error {
  override name = 'SweepFileError';
}

function describeIssues(file: string, error: z.ZodError, singleBenchmark: boolean): string {
  const lines = error.issues.map((issue) => {
    // A single benchmark object was wrapped in a list: report its fields without `[0]`.
    const at = singleBenchmark && issue.path[0] === 'benchmark' && issue.path[1] === 0 ? ['benchmark', ...issue.path.slice(2)] : issue.path;
    const path = at
      .map((p) => (typeof p === 'number' ? `[${p}]` : String(p)))
      .join('.')
      .replace(/\.\[/g, '[');
    if (issue.code === 'unrecognized_keys') {
      const keys = (issue as { keys: string[] }).keys;
      return `- ${path ? `${path}: ` : ''}unknown field${keys.length > 1 ? 's' : ''} ${keys.map((k) => `"${k}"`).join(', ')}`;
    }
    if (issue.code === 'invalid_key') return `- ${path}: not a usable name: ${nameMessage}`;
    return `- ${path || '(top level)'}: ${issue.message}`;
  });
  return `${file}: invalid sweep file\n${lines.join('\n')}`;
}

/** Expands a factorial design into cells, the first factor varying slowest. Cell names join
 * `factor=level` with `,` (e.g. `decompose=on,illustrate=off,repair=on`). */
export function expandFactorial(design: NonNullable<SweepFile['factorial']>): NamedConfig[] {
  const factors = Object.entries(design.factors).map(([factor, levels]) => {
    if (Array.isArray(levels)) {
      // A list of values of the run-config field named like the factor.
      const entries = levels.map((value) => {
        const patch = RunConfigPatch.safeParse({ [factor]: value });
        if (!patch.success)
          throw new SweepFileError(
            `factorial.factors.${factor}: "${String(value)}" is not a value of the run-config field "${factor}" (or give named levels)`,
          );
        return [String(value), patch.data] as const;
      });
      return { factor, levels: entries };
    }
    if (Object.keys(levels).length < 2) throw new SweepFileError(`factorial.factors.${factor}: a factor needs at least two levels`);
    return { factor, levels: Object.entries(levels) };
  });
  if (factors.length === 0) throw new SweepFileError('factorial.factors: declare at least one factor');
  let cells: NamedConfig[] = [{ name: '', config: { ...(design.base ?? {}) }, factors: {} }];
  for (const { factor, levels } of factors) {
    cells = cells.flatMap((cell) =>
      levels.map(([level, patch]) => ({
        name: cell.name ? `${cell.name},${factor}=${level}` : `${factor}=${level}`,
        config: { ...cell.config, ...patch },
        factors: { ...cell.factors, [factor]: level },
      })),
    );
  }
  return cells;
}

export interface ParseOptions {
  /** Where `$DATA/…` benchmark paths point (the public data directory: infra/config.ts publicDataDir). */
  dataDir: string;
}

/** A path a sweep file names (a benchmark's, a predictions file's): `$DATA/…` inside the public
 * data directory, an absolute path as it is, anything else relative to the sweep file. */
export function resolveSweepPath(p: string, sweepFile: string, dataDir: string): string {
  return p.startsWith('$DATA/') ? resolve(dataDir, p.slice('$DATA/'.length)) : isAbsolute(p) ? p : resolve(dirname(resolve(sweepFile)), p);
}

/** Validates a parsed sweep object. `file` names it in errors and anchors relative paths. */
export function parseSweep(raw: unknown, file: string, options: ParseOptions): SweepSpec {
  const single = Boolean(
    raw &&
    typeof raw === 'object' &&
    !Array.isArray(raw) &&
    (raw as { benchmark?: unknown }).benchmark &&
    !Array.isArray((raw as { benchmark?: unknown }).benchmark),
  );
  const wrapped = single ? { ...(raw as object), benchmark: [(raw as { benchmark: unknown }).benchmark] } : raw;
  const r = SweepFileSchema.safeParse(wrapped);
  if (!r.success) throw new SweepFileError(describeIssues(file, r.error, single));
  const f = r.data;
  const configurations: NamedConfig[] = [];
  for (const [name, { predictions, ...config }] of Object.entries(f.configurations ?? {}))
    configurations.push({ name, config, ...(predictions ? { predictions } : {}) });
  if (f.factorial) {
    for (const cell of expandFactorial(f.factorial)) {
      if (configurations.some((c) => c.name === cell.name))
        throw new SweepFileError(`${file}: configuration "${cell.name}" is declared twice`);
      configurations.push(cell);
    }
  }
  if (configurations.length === 0) throw new SweepFileError(`${file}: configurations: declare at least one configuration`);
  const resolvePath = (p: string) => resolveSweepPath(p, file, options.dataDir);
  const benchmarks = f.benchmark.map((b, i): BenchmarkSource => {
    if (b.path !== undefined) return { ...b, path: resolvePath(b.path), format: b.format! };
    // A named benchmark: its file in the data directory, by what the directory has.
    let named;
    try {
      named = resolveNamedBenchmark(b.name!, b.split, options.dataDir);
    } catch (err) {
      throw new SweepFileError(`${file}: ${f.benchmark.length > 1 ? `benchmark[${i}]` : 'benchmark'}: ${(err as Error).message}`);
    }
    return {
      ...b,
      path: named.path,
      format: b.format ?? named.format,
      ...(named.only ? { only: named.only } : {}),
      ...(named.tags || b.tags ? { tags: { ...named.tags, ...b.tags } } : {}),
    };
  });
  for (const c of configurations) if (c.predictions) c.predictions = { ...c.predictions, path: resolvePath(c.predictions.path) };
  for (const c of configurations) {
    if (c.config.retrieval === 'oracle' && benchmarks.length === 0)
      throw new SweepFileError(`${file}: configurations.${c.name}: oracle retrieval needs gold premises`);
  }
  return {
    ...(f.id ? { id: f.id } : {}),
    benchmarks,
    library: f.library,
    ...(f.indexVersion ? { indexVersion: f.indexVersion } : {}),
    samples: f.samples,
    window: f.window,
    maxAttempts: f.retry.maxAttempts,
    leaveOut: f.leaveOut,
    ...(f.budget ? { budget: f.budget } : {}),
    ...(f.llm?.batch ? { llm: { batch: true, ...(f.llm.resubmits !== undefined ? { resubmits: f.llm.resubmits } : {}) } } : {}),
    configurations,
  };
}

/** Reads a sweep file: `.yaml`/`.yml` as YAML, anything else as JSON (YAML is tried when JSON
 * fails, since YAML is a superset). */
export async function readSweepFile(file: string, options: ParseOptions): Promise<SweepSpec> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new SweepFileError(
      `cannot read sweep file ${file}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message}`,
    );
  }
  let raw: unknown;
  if (/\.ya?ml$/i.test(file)) {
    try {
      raw = parseYaml(text);
    } catch (err) {
      throw new SweepFileError(`${file}: not valid YAML: ${(err as Error).message}`);
    }
  } else {
    try {
      raw = JSON.parse(text);
    } catch (jsonErr) {
      try {
        raw = parseYaml(text);
      } catch {
        throw new SweepFileError(`${file}: not valid JSON: ${(jsonErr as Error).message}`);
      }
    }
  }
  return parseSweep(raw, file, options);
}
