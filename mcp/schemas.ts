// The MCP tools' input and output schemas (zod, as the SDK wants them). The run configuration is
// derived from its one schema (common/run-config-schema.ts), so a tool accepts exactly what the
// API's `config` accepts; the rules across fields are checked by the tools with the API's words.
import * as z from 'zod';
import { RunConfigPatchSchema } from '../common/run-config-schema';
import type { Outcome } from '../common/outcomes';
import type { SweepStatus } from '../common/sweep';
import type { RunSummary } from '../client/runs';

/** Run ids: at most this long (the API's limit). */
export const RUN_ID_MAX = 200;
const SWEEP_ID_MAX = 100;

// Every outcome a run can end with; the type check below fails when common/outcomes.ts gains one.
const OUTCOME_VALUES = [
  'faithful',
  'unfaithful',
  'compiled',
  'not-compiled',
  'refused',
  'unchecked',
  'budget-exhausted',
] as const satisfies readonly Outcome[];
type MissingOutcome = Exclude<Outcome, (typeof OUTCOME_VALUES)[number]>;
const outcomesComplete: MissingOutcome extends never ? true : never = true;
void outcomesComplete;
const SWEEP_STATUSES = [
  'running',
  'paused',
  'completed',
  'cancelled',
  'failed',
  'budget-exhausted',
] as const satisfies readonly SweepStatus[];
type MissingSweepStatus = Exclude<SweepStatus, (typeof SWEEP_STATUSES)[number]>;
const sweepStatusesComplete: MissingSweepStatus extends never ? true : never = true;
void sweepStatusesComplete;

const RUN_STATUSES = ['running', 'completed', 'failed', 'canceled'] as const;

/** TypeBox's union of string literals, as JSON Schema's `enum` (zod then names the choices in
 * its message, instead of "Invalid input" for a union). */
function literalUnionsAsEnums(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(literalUnionsAsEnums);
  if (!schema || typeof schema !== 'object') return schema;
  const node = schema as Record<string, unknown>;
  const branches = node.anyOf;
  if (
    Array.isArray(branches) &&
    branches.length > 0 &&
    branches.every((b) => b && typeof b === 'object' && typeof (b as { const?: unknown }).const === 'string')
  ) {
    const { anyOf: _anyOf, ...rest } = node;
    return { ...rest, type: 'string', enum: branches.map((b) => (b as { const: string }).const) };
  }
  return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, literalUnionsAsEnums(value)]));
}

/** The API's `config` body (any subset of the run configuration's fields, nothing else). */
export const runConfigPatch = z.fromJSONSchema(
  literalUnionsAsEnums(JSON.parse(JSON.stringify(RunConfigPatchSchema))) as Parameters<typeof z.fromJSONSchema>[0],
);

/** A statement as the API takes it: not blank, at most `max` characters (counted as code points,
 * as the API's schema counts them). */
export function statementText(max: number, what: string) {
  return z
    .string()
    .regex(/\S/, 'must not be empty')
    .refine((s) => [...s].length <= max, `is longer than ${max} characters`)
    .describe(`${what} (at most ${max} characters)`);
}

// Input schemas are strict objects: an unknown argument is refused (as the API refuses an unknown
// field), never silently dropped.
export const formalizeInput = (maxStatementChars: number, libraries: readonly string[], defaultLibrary: string) =>
  z.strictObject({
    statement: statementText(maxStatementChars, 'The informal statement, in words and formulas'),
    library: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .describe(
        libraries.length
          ? `The library to retrieve premises from: ${libraries.join(', ')} (default ${defaultLibrary})`
          : 'No library is served yet',
      ),
    config: runConfigPatch
      .optional()
      .describe('Run configuration: any subset of its fields (retrieval, repairRounds, mode, …), as in POST /v1/formalizations'),
  });

export const getRunInput = z.strictObject({
  id: z.string().min(1).max(RUN_ID_MAX).describe('The run ID (as formalize or list_runs gave it)'),
});

export const listRunsInput = z.strictObject({
  status: z.enum(RUN_STATUSES).optional().describe('Only runs with this status'),
  outcome: z.enum(OUTCOME_VALUES).optional().describe('Only runs that ended with this outcome'),
  library: z
    .string()
    .min(1)
    .max(200)
    .regex(/^[A-Za-z0-9_.-]+$/)
    .optional()
    .describe('Only runs on this library'),
  sweep: z
    .string()
    .min(1)
    .max(RUN_ID_MAX)
    .regex(/^[A-Za-z0-9._:/-]+$/)
    .optional()
    .describe('Only runs of this sweep'),
  limit: z.number().int().min(1).max(200).optional().describe('Runs per page (default 20)'),
  pageToken: z
    .string()
    .min(1)
    .max(4096)
    .regex(/^[A-Za-z0-9_.-]+$/)
    .optional()
    .describe('The next page: nextPageToken of the previous answer, with the same filters'),
});

export const searchPremisesInput = z.strictObject({
  query: z.string().min(1).max(2000).regex(/\S/, 'must not be empty').describe('What to look for: words, Lean names or a formula'),
  library: z.string().min(1).max(200).optional().describe('The library to search (default: the first served)'),
  k: z.number().int().min(1).max(100).optional().describe('How many premises (default 10)'),
});

export const checkLeanInput = (maxStatementChars: number) =>
  z.strictObject({
    statement: statementText(
      maxStatementChars,
      'One Lean 4 theorem statement, after the definitions it needs if any, e.g. `theorem t (p : ℕ) (hp : p.Prime) : 2 ≤ p := by sorry`',
    ),
    gold: statementText(
      maxStatementChars,
      'A reference statement: when the statement compiles, Lean checks that each proves the other',
    ).optional(),
  });

export const sweepStatusInput = z.strictObject({
  id: z.string().min(1).max(SWEEP_ID_MAX).describe('The sweep ID'),
});

const links = z.object({ temporalUi: z.string().describe('The page in the Temporal Web UI') });

const progress = z.object({
  stage: z.string(),
  round: z.number().int(),
  completed: z.array(z.string()),
  step: z.number().int().optional(),
  lastTool: z.string().nullable().optional(),
});

/** The run's result: the main fields typed, the rest (premises, attempts, …) passed through. */
const result = z
  .object({
    statement: z.string(),
    library: z.string(),
    formalStatement: z.string().describe('The Lean statement'),
    compiled: z.boolean(),
    checked: z.boolean(),
    outcome: z.string(),
    judge: z.object({ grade: z.number(), faithful: z.boolean(), explanation: z.string() }).loose().nullable(),
  })
  .loose();

export const runOutput = {
  id: z.string(),
  status: z.enum(RUN_STATUSES),
  progress: progress.nullable(),
  formalStatement: z.string().optional().describe('The Lean statement, once the run has completed'),
  outcome: z.string().optional().describe('faithful, unfaithful, compiled, not-compiled, refused, unchecked or budget-exhausted'),
  result: result.optional(),
  error: z.string().optional().describe('Why the run failed'),
  failure: z.object({ stage: z.string().optional(), type: z.string().optional(), message: z.string() }).optional(),
  links,
};

export const listRunsOutput = {
  items: z.array(
    z.object({
      id: z.string(),
      status: z.enum(RUN_STATUSES),
      startedAt: z.string(),
      closedAt: z.string().optional(),
      library: z.string().optional(),
      config: z.string().optional(),
      stage: z.string().optional(),
      outcome: z.string().optional(),
      sweep: z.string().optional(),
      statement: z.string().optional().describe("The statement's first words"),
      item: z.string().optional().describe("The benchmark item (a sweep's runs)"),
      links,
    }),
  ),
  nextPageToken: z.string().optional(),
};
// Every field of a run summary is in the tool's output (the output is checked against it, so a
// field the client adds and this schema lacks would fail every list_runs call).
type RunSummaryFieldsCovered = Exclude<keyof RunSummary, keyof z.infer<(typeof listRunsOutput.items)['element']>>;
const runSummaryCovered: RunSummaryFieldsCovered extends never ? true : never = true;
void runSummaryCovered;

export const searchPremisesOutput = {
  library: z.string(),
  version: z.string().describe('The index version searched'),
  query: z.string(),
  items: z.array(z.object({ name: z.string(), kind: z.string(), signature: z.string(), module: z.string().optional(), score: z.number() })),
};

const leanMessage = z.object({
  severity: z.enum(['error', 'warning', 'info']),
  line: z.number().int(),
  column: z.number().int(),
  endLine: z.number().int().optional(),
  endColumn: z.number().int().optional(),
  text: z.string(),
});

export const checkLeanOutput = {
  id: z.string().describe('The check (a workflow in Temporal)'),
  compiled: z.boolean(),
  status: z
    .enum(['ok', 'error', 'refused', 'skipped', 'timeout', 'failed'])
    .describe(
      'ok/error/timeout: Lean decided; refused: the screen, before Lean; skipped: no Lean configured; failed: the check itself failed',
    ),
  messages: z.array(leanMessage),
  reason: z.string().optional(),
  durationMs: z.number(),
  peakRssMb: z.number().optional().describe('Peak resident memory (MB) of the Lean REPL while it checked the statement'),
  equivalent: z.boolean().optional().describe('With gold: whether Lean proved both directions'),
  equivalence: z.object({ equivalent: z.boolean() }).loose().optional(),
  error: z.string().optional(),
  links,
};

const counts = z.object({
  total: z.number().int(),
  done: z.number().int(),
  failed: z.number().int(),
  running: z.number().int(),
  retried: z.number().int().optional(),
});

export const sweepStatusOutput = {
  sweepId: z.string(),
  status: z.enum(SWEEP_STATUSES),
  total: z.number().int(),
  done: z.number().int(),
  failed: z.number().int(),
  running: z.number().int(),
  perConfig: z.record(z.string(), counts),
  retries: z.number().int(),
  /** Units started again by `driftline sweep retry` (once the sweep has been retried). */
  retried: z.number().int().optional(),
  rate: z.number(),
  etaSeconds: z.number().nullable(),
  generation: z.number().int(),
  startedAt: z.string(),
  budget: z.object({}).loose().optional(),
  links,
};
