// Sorts what can go wrong on an LLM call into engine errors with a failure type. Retrying is
// the caller's job (Temporal's, so each retry is visible in the UI); this module only says which
// kind of failure it was (and so whether a retry can help), and when the server wants a retry.
import { LLM_FAILURE } from '../../common/failures';
import { EngineError } from '../errors';
import { classifyApiError, retryHint, transientLabel } from './api-errors';

export function notConfiguredError(): EngineError {
  return new EngineError(
    LLM_FAILURE.notConfigured,
    'No LLM is configured. Set OPENAI_BASE_URL to an OpenAI-compatible endpoint ' +
      '(and OPENAI_API_KEY if it needs one; choose models with DRIFTLINE_MODEL_DECOMPOSER, ' +
      'DRIFTLINE_MODEL_FORMALIZER and DRIFTLINE_MODEL_JUDGE), or run a small model on this machine: ' +
      '`npm run setup:llm` once, then start with DRIFTLINE_LLM_PROVIDER=local.',
  );
}

/** A role (or the run) names a provider the configuration does not have. */
export function unknownProviderError(role: string, provider: string, known: string[]): EngineError {
  return new EngineError(
    LLM_FAILURE.notConfigured,
    `The ${role} is to use LLM provider "${provider}", which is not configured here (configured: ${known.map((k) => `"${k}"`).join(', ') || 'none'}). ` +
      'Define it in DRIFTLINE_PROVIDERS (or llm.providers in the config file), or name another provider.',
  );
}

/** What the failure message needs to say where the call went. */
export interface CallTarget {
  model: string;
  baseURL: string;
  timeoutMs: number;
  /** How messages name the call when it is not a model's (a Batch API request); default
   * `model "M" at URL`. */
  where?: string;
}

function unavailable(message: string, cause: Error, retryAfterMs?: number): EngineError {
  return new EngineError(LLM_FAILURE.unavailable, message, { cause, retryAfterMs });
}

function rejected(type: (typeof LLM_FAILURE)[keyof typeof LLM_FAILURE], message: string, cause: Error): EngineError {
  return new EngineError(type, message, { cause });
}

/**
 * Turns an error thrown by the `openai` client into an EngineError. Cancellation is passed
 * through untouched so Temporal sees the activity as cancelled, not failed.
 */
export function toLlmError(err: unknown, target: CallTarget, signal?: AbortSignal, onTimeout?: () => TimeoutNote): unknown {
  const where = target.where ?? `model "${target.model}" at ${target.baseURL}`;
  const e = classifyApiError(err, signal);
  switch (e.kind) {
    case 'cancelled':
    case 'other':
      return e.value;
    case 'timeout': {
      const note = onTimeout?.();
      const message = `LLM call to ${where} timed out after ${target.timeoutMs} ms${note ? timeoutNote(note) : ''}`;
      return unavailable(message, e.error, note?.backoffMs);
    }
    case 'unreachable':
      return unavailable(`Could not reach the LLM at ${target.baseURL}${e.cause}`, e.error);
    case 'transient':
      return unavailable(`LLM ${transientLabel(e.status)} for ${where}${retryHint(e.delayMs)}${e.detail}`, e.error, e.delayMs);
    case 'refused':
      return refusal(e.status, where, e.detail, e.error);
  }
}

/** What the provider's circuit says about a timeout (provider.ts). */
export interface TimeoutNote {
  backoffMs: number;
  /** An earlier request that timed out shortly before: the provider was likely still on it. */
  earlier?: { at: number; timeoutMs: number };
}

function timeoutNote(note: TimeoutNote): string {
  const earlier = note.earlier
    ? `; the provider was probably still busy with an earlier request that timed out at ${new Date(note.earlier.at).toISOString()}`
    : '';
  return `${earlier}; no more requests go to this provider for ${Math.round(note.backoffMs / 1000)} s, since a server usually keeps generating for a client that left`;
}

/** The provider is backing off after a timeout: fail now and retry when the pause is over. */
export function busyError(target: CallTarget, waitMs: number, earlier: { at: number; timeoutMs: number } | undefined): EngineError {
  const since = earlier ? ` (it timed out at ${new Date(earlier.at).toISOString()} after ${earlier.timeoutMs} ms)` : '';
  return new EngineError(
    LLM_FAILURE.unavailable,
    `Not calling model "${target.model}" at ${target.baseURL} for another ${Math.ceil(waitMs / 1000)} s: the provider was ` +
      `still busy with an earlier request${since}, and a request sent now would only queue behind it`,
    { retryAfterMs: waitMs },
  );
}

/** One structured-output mode that was refused, for the failure message. */
export interface ModeRefusal {
  mode: string;
  reason: string;
}

/** No structured-output mode works with this provider: retrying cannot help. */
export function structuredOutputError(target: CallTarget, tried: ModeRefusal[], cause?: Error): EngineError {
  return new EngineError(
    LLM_FAILURE.structuredOutputRefused,
    `LLM at ${target.baseURL} (model "${target.model}") refused the request in every structured-output mode tried: ` +
      tried.map((t) => `${t.mode}: ${t.reason}`).join('; ') +
      '. Check the server and the model, or set DRIFTLINE_LLM_STRUCTURED_OUTPUT.',
    cause ? { cause } : {},
  );
}

/** A configured mode that the provider refuses: say which setting to change. */
export function configuredModeError(target: CallTarget, mode: string, reason: string, cause: Error): EngineError {
  return new EngineError(
    LLM_FAILURE.structuredOutputRefused,
    `LLM at ${target.baseURL} (model "${target.model}") refused response_format ${mode}, which DRIFTLINE_LLM_STRUCTURED_OUTPUT ` +
      `sets: ${reason}. Set it to auto (driftline then finds a mode that works), or to json_object or prompt.`,
    { cause },
  );
}

/** What an HTTP refusal said, for messages: "HTTP 500 (text)". */
export function refusalReason(err: unknown): { status: number; message: string } | undefined {
  const e = classifyApiError(err);
  return e.kind === 'refused' || e.kind === 'transient' ? { status: e.status, message: e.error.message } : undefined;
}

/** The reply stopped at its token limit: it is incomplete and is never used. */
export function truncatedError(role: string, target: CallTarget, maxTokens: number, enlarged: boolean): EngineError {
  return new EngineError(
    LLM_FAILURE.truncated,
    `The ${role}'s reply from model "${target.model}" at ${target.baseURL} stopped at max_tokens=${maxTokens} ` +
      `(finish_reason "length")${enlarged ? ', after a first reply cut off at half that limit' : ''}; an incomplete reply is ` +
      `never used. The model may not stop by itself (a base model, or a chat template without its end token), or it ` +
      `needs more room: raise DRIFTLINE_MAX_TOKENS_${role.toUpperCase()}.`,
  );
}

function refusal(status: number, where: string, detail: string, cause: Error): EngineError {
  switch (status) {
    case 400:
      return rejected(LLM_FAILURE.badRequest, `LLM rejected the request (HTTP 400) for ${where}${detail}`, cause);
    case 401:
      return rejected(
        LLM_FAILURE.unauthorized,
        `LLM refused the credentials (HTTP 401) for ${where}: check OPENAI_API_KEY${detail}`,
        cause,
      );
    case 403:
      return rejected(
        LLM_FAILURE.unauthorized,
        `LLM denied access (HTTP 403) for ${where}: check that the key may use this model${detail}`,
        cause,
      );
    case 404:
      return rejected(
        LLM_FAILURE.notFound,
        `LLM endpoint or model not found (HTTP 404) for ${where}: check OPENAI_BASE_URL (it usually ends in /v1) and the DRIFTLINE_MODEL_* names${detail}`,
        cause,
      );
    default:
      return rejected(LLM_FAILURE.rejected, `LLM rejected the request (HTTP ${status}) for ${where}${detail}`, cause);
  }
}
