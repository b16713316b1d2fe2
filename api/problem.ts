// Errors as RFC 9457 problem details (`application/problem+json`): a status, a short title and
// the reason in words, so a caller can show `detail` to a person as it is.
import type { FastifyError, FastifyReply } from 'fastify';
import { Type } from '@fastify/type-provider-typebox';

export const PROBLEM_TYPE = 'application/problem+json';

export const ProblemSchema = Type.Object(
  {
    type: Type.String({ description: 'A URI naming the kind of problem; about:blank for plain HTTP statuses' }),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String({ description: 'What was wrong, in words' }),
    instance: Type.Optional(Type.String()),
    /** The run or resource the problem is about, where there is one. */
    id: Type.Optional(Type.String()),
    /** Fields that differ from an existing run (409 on a re-used id). */
    differences: Type.Optional(Type.Array(Type.String())),
  },
  { additionalProperties: false },
);

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance?: string;
  id?: string;
  differences?: string[];
}

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  409: 'Conflict',
  413: 'Content Too Large',
  414: 'URI Too Long',
  415: 'Unsupported Media Type',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

export function problem(status: number, detail: string, extra: Partial<Problem> = {}): Problem {
  return { type: 'about:blank', title: TITLES[status] ?? 'Error', status, detail, ...extra };
}

/** Sends a problem with its media type; returns the reply so handlers can `return` it. */
export function sendProblem(reply: FastifyReply, status: number, detail: string, extra: Partial<Problem> = {}): FastifyReply {
  return reply
    .status(status)
    .type(PROBLEM_TYPE)
    .send(problem(status, detail, extra));
}

/** An error a handler throws to answer with a problem (caught by the error handler). */
export class HttpProblem extends Error {
  constructor(
    readonly status: number,
    detail: string,
    readonly extra: Partial<Problem> = {},
  ) {
    super(detail);
    this.name = 'HttpProblem';
  }
}

interface AjvIssue {
  keyword: string;
  instancePath: string;
  message?: string;
  params: Record<string, unknown>;
  schemaPath?: string;
}

/** Where a validation issue is, as a caller writes it: `config.retrieval`, `statement`. */
function fieldOf(issue: AjvIssue): string {
  return issue.instancePath.replace(/^\//, '').replace(/\//g, '.') || (issue.params.missingProperty as string | undefined) || '';
}

/** Per-field messages the schemas cannot say themselves (e.g. which characters an id may use). */
export type FieldHints = Record<string, string>;

/** Validation messages that say what was wrong in the user's terms, naming allowed values. */
export function describeValidation(error: FastifyError, hints: FieldHints = {}): string {
  const issues = (error.validation ?? []) as AjvIssue[];
  const issue = issues[0];
  if (!issue) return error.message;
  const where = (error as FastifyError & { validationContext?: string }).validationContext ?? 'body';
  const field = fieldOf(issue);
  const name = field ? `"${field}"` : `the ${where}`;
  if (field && hints[field] && ['pattern', 'minLength', 'maxLength', 'format'].includes(issue.keyword)) return hints[field]!;
  switch (issue.keyword) {
    case 'required':
      return `"${issue.params.missingProperty as string}" is required${where === 'body' ? '' : ` in the ${where}`}`;
    case 'maxLength':
      return `${name} is longer than ${issue.params.limit as number} characters`;
    case 'minLength':
      return `${name} must not be empty`;
    case 'pattern':
      return field === 'statement' || field === 'goldStatement'
        ? `${name} must not be empty`
        : `${name} does not have the expected form (${issue.params.pattern as string})`;
    case 'enum':
      return `${name} must be one of ${(issue.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    case 'const': {
      // A union of literals fails once per branch: gather them into one list.
      const allowed = issues
        .filter((i) => i.keyword === 'const' && i.instancePath === issue.instancePath)
        .map((i) => JSON.stringify(i.params.allowedValue));
      return `${name} must be one of ${allowed.join(', ')}`;
    }
    case 'type':
      return `${name} ${issue.message}`;
    case 'additionalProperties':
      return `unknown field "${issue.params.additionalProperty as string}"${field ? ` in ${name}` : where === 'body' ? '' : ` in the ${where}`}`;
    case 'minimum':
    case 'maximum':
      return `${name} ${issue.message}`;
    default:
      return `${name} ${issue.message ?? 'is not valid'}`;
  }
}

/** Response schemas for error statuses, documented with the problem media type. */
export function problemResponses(...statuses: number[]): Record<number, unknown> {
  return Object.fromEntries(
    statuses.map((status) => [status, { description: TITLES[status] ?? 'Error', content: { [PROBLEM_TYPE]: { schema: ProblemSchema } } }]),
  );
}
