// Every failure type name, once. Engines throw errors carrying these types (engines/errors.ts),
// activities turn them into Temporal failures of the same type (activities/failures.ts), and the
// workflows' retry policies list the non-retryable ones (NON_RETRYABLE_TYPES). Whether a type is
// worth retrying is decided here, per type, and nowhere else.

/** LLM calls (engines/llm). */
export const LLM_FAILURE = {
  notConfigured: 'LlmNotConfigured',
  unavailable: 'LlmUnavailable',
  badRequest: 'LlmBadRequest',
  unauthorized: 'LlmUnauthorized',
  notFound: 'LlmNotFound',
  rejected: 'LlmRejected',
  badReply: 'LlmBadReply',
  /** Every structured-output mode tried was refused. */
  structuredOutputRefused: 'LlmStructuredOutputRefused',
  /** The reply stopped at max_tokens (finish_reason "length") even with a larger limit. */
  truncated: 'LlmTruncated',
  /** The run's token or cost budget is spent: the run ends `budget-exhausted`. */
  budgetExhausted: 'LlmBudgetExhausted',
} as const;

/** Embedding calls (engines/retrieval/embedders). */
export const EMBEDDER_FAILURE = {
  unavailable: 'EmbedderUnavailable',
  rejected: 'EmbedderRejected',
  unauthorized: 'EmbedderUnauthorized',
  notFound: 'EmbedderNotFound',
  badReply: 'EmbedderBadReply',
} as const;

/** The Lean worker (engines/lean). */
export const LEAN_FAILURE = {
  /** The REPL died mid-check: a fresh process takes the retry. */
  replCrashed: 'LeanReplCrashed',
  /** Importing the header took too long: the machine may just be busy. */
  headerTimeout: 'LeanHeaderTimeout',
  /** The library header does not import: configuration. */
  headerFailed: 'LeanHeaderFailed',
  /** resolveName on a worker that was given no library names. */
  namesNotConfigured: 'NamesNotConfigured',
} as const;

/** Libraries, their indexes and durable index builds (engines/retrieval, workflow buildIndex). */
export const INDEX_FAILURE = {
  unknownLibrary: 'UnknownLibrary',
  badCorpus: 'BadCorpus',
  corpusChanged: 'CorpusChanged',
  incompleteBuild: 'IncompleteBuild',
  badIndexRequest: 'BadIndexRequest',
} as const;

/** Agent mode (engines/agent, workflow formalizeAgent). */
export const AGENT_FAILURE = {
  /** `draft` offered or called without a translator model configured. */
  translatorNotConfigured: 'TranslatorNotConfigured',
} as const;

type ValueOf<T> = T[keyof T];
export type FailureType =
  | ValueOf<typeof LLM_FAILURE>
  | ValueOf<typeof EMBEDDER_FAILURE>
  | ValueOf<typeof LEAN_FAILURE>
  | ValueOf<typeof INDEX_FAILURE>
  | ValueOf<typeof AGENT_FAILURE>;

/** The types a retry can help: a busy or unreachable service, a crashed process. */
const RETRYABLE: ReadonlySet<FailureType> = new Set<FailureType>([
  LLM_FAILURE.unavailable,
  EMBEDDER_FAILURE.unavailable,
  LEAN_FAILURE.replCrashed,
  LEAN_FAILURE.headerTimeout,
]);

export const FAILURE_TYPES: readonly FailureType[] = [
  ...Object.values(LLM_FAILURE),
  ...Object.values(EMBEDDER_FAILURE),
  ...Object.values(LEAN_FAILURE),
  ...Object.values(INDEX_FAILURE),
  ...Object.values(AGENT_FAILURE),
];

export function isRetryable(type: FailureType): boolean {
  return RETRYABLE.has(type);
}

/** For retry policies: failures that no retry can fix (bad input, configuration, exhausted re-asks). */
export const NON_RETRYABLE_TYPES: string[] = FAILURE_TYPES.filter((t) => !isRetryable(t));

/** The message that says what went wrong: the innermost cause's (Temporal wraps an activity's
 * failure, and a child's, in failures that only say where it happened). */
export function rootCauseMessage(err: unknown): string {
  let current = err as { message?: string; cause?: unknown } | undefined;
  let message = current?.message ?? String(err);
  while (current?.cause) {
    current = current.cause as { message?: string; cause?: unknown };
    if (current.message) message = current.message;
  }
  return message;
}
