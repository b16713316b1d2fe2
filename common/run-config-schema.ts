// The run configuration, defined once: each field's type, range, default and description. The
// `RunConfig` type, `DEFAULT_RUN_CONFIG`, the API's request body (`RunConfigPatchSchema`) and the
// CLI's options (bin/run-config-options.ts) are all derived from this schema, so adding a field
// is one property here (plus the code that uses it). Optional `cli` hints: a short flag and the
// name of the option's argument; without them the flag is the field's name in kebab case.
import { Type, type Static, type TSchema } from 'typebox';
import { LLM_ROLES, type LlmRole } from './llm-roles';

/** `pipeline`: the DRIFT stages in a fixed order (workflow `formalize`); `agent`: an LLM
 * orchestrator chooses tools step by step (workflow `formalizeAgent`). */
export type RunMode = 'pipeline' | 'agent';

/** The agent's tools, under the function names the model sees. */
export const AGENT_TOOL_NAMES = ['write_file', 'run_lean', 'inspect_name', 'resolve_name', 'search_premises', 'draft'] as const;
export type AgentToolName = (typeof AGENT_TOOL_NAMES)[number];

/** A provider's name: what `DRIFTLINE_PROVIDERS` keys and `DRIFTLINE_ROLE_<ROLE>` values use,
 * and the suffix of its task queue (`llm-<name>`). */
export const PROVIDER_NAME_PATTERN = '^[A-Za-z0-9_-]{1,64}$';

/** The task queue of a provider's LLM activities: one per provider, so its rate limit
 * (`maxTaskQueueActivitiesPerSecond`, enforced by the Temporal server) holds for every worker. */
export function llmTaskQueue(provider: string): string {
  return `llm-${provider}`;
}

/** The longest step budget a run may ask for: the workflow's history stays bounded there. */
export const MAX_AGENT_STEPS = 50;

/** CLI hints for a field (read by bin/run-config-options.ts). */
export interface CliHint {
  /** A one-letter alias, e.g. `-r`. */
  short?: string;
  /** The argument's name in the help text, e.g. `mode`. */
  arg?: string;
}

function field<T extends TSchema>(schema: T, cli?: CliHint): T {
  return (cli ? { ...schema, cli } : schema) as T;
}

export const RunConfigSchema = Type.Object(
  {
    decompose: field(
      Type.Boolean({
        default: true,
        description: 'decompose the statement into sub-queries (off: the whole statement is the only sub-query)',
      }),
    ),
    retrieval: field(
      Type.Union([Type.Literal('drift'), Type.Literal('monolithic'), Type.Literal('oracle'), Type.Literal('none')], {
        default: 'drift',
        description:
          'premise retrieval: drift (top-1 per sub-query), monolithic (top-k for the whole statement), oracle (the gold premises), none',
      }),
      { short: '-r', arg: 'mode' },
    ),
    topK: field(Type.Integer({ minimum: 1, maximum: 100, default: 5, description: 'k for monolithic retrieval' }), { arg: 'k' }),
    illustrate: field(Type.Boolean({ default: true, description: 'show the formalizer example theorems that use the premises' })),
    examples: field(Type.Integer({ minimum: 0, maximum: 20, default: 3, description: 'at most m example theorems (greedy coverage)' }), {
      short: '-m',
      arg: 'm',
    }),
    repairRounds: field(
      Type.Integer({ minimum: 0, maximum: 20, default: 3, description: 'repair rounds after a failed compile (0: no repair)' }),
      { arg: 'n' },
    ),
    judge: field(Type.Boolean({ default: true, description: 'grade faithfulness with the LLM judge' })),
    // The agent (mode `agent`); the fields below apply to it only.
    mode: field(
      Type.Union([Type.Literal('pipeline'), Type.Literal('agent')], {
        default: 'pipeline',
        description: 'pipeline (DRIFT stages, the default) or agent (tool-calling loop)',
      }),
      { arg: 'mode' },
    ),
    tools: field(
      Type.Array(Type.Enum(AGENT_TOOL_NAMES), {
        uniqueItems: true,
        maxItems: AGENT_TOOL_NAMES.length,
        default: ['write_file', 'run_lean', 'inspect_name', 'resolve_name', 'search_premises'],
        description: 'agent: the tools offered (write_file is always needed: it holds the answer; draft needs a translator model)',
      }),
      { arg: 'names' },
    ),
    maxSteps: field(
      Type.Integer({
        minimum: 1,
        maximum: MAX_AGENT_STEPS,
        default: 24,
        description: 'agent: step budget T_max (LLM steps before the run ends budget-exhausted)',
      }),
      { arg: 'n' },
    ),
    tokenBudget: field(
      Type.Integer({ minimum: 1, default: 400_000, description: 'agent: tokens (prompt + completion) the run may spend' }),
      { arg: 'n' },
    ),
    wallClockSeconds: field(Type.Integer({ minimum: 1, maximum: 86_400, default: 1800, description: 'agent: seconds the loop may take' }), {
      arg: 'n',
    }),
    driftContext: field(
      Type.Boolean({ default: false, description: "agent: put DRIFT premises and examples (the configured stages') in the first message" }),
    ),
    // The LLM layer: the reply cache, sampling, models per role, and money.
    cache: field(Type.Boolean({ default: true, description: 'read and write the LLM reply cache (off: every call goes to the provider)' })),
    temperature: Type.Optional(
      field(Type.Number({ minimum: 0, maximum: 2, description: 'sampling temperature of every LLM call (default: the configured one)' }), {
        arg: 't',
      }),
    ),
    models: Type.Optional(
      field(
        Type.Object(
          Object.fromEntries(LLM_ROLES.map((r) => [r, Type.Optional(Type.String({ minLength: 1, maxLength: 200 }))])) as Record<
            LlmRole,
            ReturnType<typeof Type.Optional<ReturnType<typeof Type.String>>>
          >,
          {
            additionalProperties: false,
            description: 'models per role for this run, e.g. formalizer=gpt-4.1,judge=o3 (default: the configured ones)',
          },
        ),
        { arg: 'role=model,…' },
      ),
    ),
    providers: Type.Optional(
      field(
        Type.Object(
          Object.fromEntries(
            LLM_ROLES.map((r) => [r, Type.Optional(Type.String({ pattern: PROVIDER_NAME_PATTERN, maxLength: 64 }))]),
          ) as Record<LlmRole, ReturnType<typeof Type.Optional<ReturnType<typeof Type.String>>>>,
          {
            additionalProperties: false,
            description:
              'LLM providers per role for this run, by their configured names, e.g. formalizer=local,judge=openai (default: the configured ones)',
          },
        ),
        { arg: 'role=provider,…' },
      ),
    ),
    costBudgetUsd: Type.Optional(
      field(
        Type.Number({
          exclusiveMinimum: 0,
          description: 'end the run budget-exhausted once its LLM calls cost this many US dollars (prices: DRIFTLINE_LLM_PRICES)',
        }),
        { arg: 'usd' },
      ),
    ),
  },
  { additionalProperties: false },
);

/** Per-run switches. Ablations and baselines are configurations, never separate code paths. */
export type RunConfig = Static<typeof RunConfigSchema>;

/** A request's configuration: any subset of the fields, nothing else (the API body). Defaults
 * and CLI hints are left out: defaults are applied once, by `resolveRunConfig`, not by the
 * validator. */
export const RunConfigPatchSchema = withoutHints(Type.Partial(RunConfigSchema, { additionalProperties: false }));

function withoutHints<T extends { properties: Record<string, unknown> }>(schema: T): T {
  const properties = Object.fromEntries(
    Object.entries(schema.properties).map(([key, property]) => {
      const { default: _default, cli: _cli, ...rest } = property as Record<string, unknown>;
      return [key, rest];
    }),
  );
  return { ...schema, properties };
}

/** Every field's default, read from the schema. */
export const DEFAULT_RUN_CONFIG: RunConfig = Object.freeze(
  // Optional fields without a default (temperature, models, …) stay absent.
  Object.fromEntries(
    Object.entries(RunConfigSchema.properties).flatMap(([key, schema]) => {
      const value = (schema as { default?: unknown }).default;
      return value === undefined ? [] : [[key, value]];
    }),
  ),
) as RunConfig;
