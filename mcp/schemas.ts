// The MCP tools' input and output schemas (zod, as the SDK wants them). The run configuration is
// derived from its one schema (common/run-config-schema.ts), so a tool accepts exactly what the
// API's `config` accepts; the rules across fields are checked by the tools with the API's words.
import * as z from 'zod';
import { RunConfigPatchSchema } from '../common/run-config-schema';
import { Type, type TSchema } from 'typebox';
import { OUTCOMES } from '../common/outcomes';
import {
  CheckResultProperties,
  OutcomeSchema,
  RUN_STATUSES,
  RunSummaryProperties,
  RunViewProperties,
  SweepProgressProperties,
} from '../common/wire';

/** Run ids: at most this long (the API's limit). */
export const RUN_ID_MAX = 200;
const SWEEP_ID_MAX = 100;

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
  outcome: z.enum(OUTCOMES).optional().describe('Only runs that ended with this outcome'),
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

// The outputs are the client's wire shapes (common/wire.ts) with the MCP server's one link,
// converted from their JSON Schema: one definition for the API, the tools and the web page.
// Open objects here (a field added to a shape never fails a tool call before this is rebuilt).
const McpLinks = Type.Object({ temporalUi: Type.String({ description: 'The page in the Temporal Web UI' }) });

function zodOf(schema: TSchema) {
  const open = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(open);
    if (!node || typeof node !== 'object') return node;
    return Object.fromEntries(
      Object.entries(node as Record<string, unknown>)
        .filter(([key, value]) => !(key === 'additionalProperties' && value === false))
        .map(([key, value]) => [key, open(value)]),
    );
  };
  return z.fromJSONSchema(open(literalUnionsAsEnums(JSON.parse(JSON.stringify(schema)))) as Parameters<typeof z.fromJSONSchema>[0]);
}

export const runOutput = zodOf(
  Type.Object({
    ...RunViewProperties,
    formalStatement: Type.Optional(Type.String({ description: 'The Lean statement, once the run has completed' })),
    outcome: Type.Optional(OutcomeSchema),
    links: McpLinks,
  }),
);

export const listRunsOutput = zodOf(
  Type.Object({
    items: Type.Array(Type.Object({ ...RunSummaryProperties, links: McpLinks })),
    nextPageToken: Type.Optional(Type.String()),
  }),
);

export const searchPremisesOutput = {
  library: z.string(),
  version: z.string().describe('The index version searched'),
  query: z.string(),
  items: z.array(z.object({ name: z.string(), kind: z.string(), signature: z.string(), module: z.string().optional(), score: z.number() })),
};

export const checkLeanOutput = zodOf(
  Type.Object({ id: Type.String({ description: 'The check (a workflow in Temporal)' }), ...CheckResultProperties, links: McpLinks }),
);

export const sweepStatusOutput = zodOf(Type.Object({ ...SweepProgressProperties, links: McpLinks }));
