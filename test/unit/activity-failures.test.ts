import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { activityFailure, mapEngineErrors, toTemporalFailure } from '../../activities/failures';
import {
  EMBEDDER_FAILURE,
  FAILURE_TYPES,
  INDEX_FAILURE,
  LEAN_FAILURE,
  LLM_FAILURE,
  NON_RETRYABLE_TYPES,
  rootCauseMessage,
} from '../../common/failures';
import { EngineError } from '../../engines/errors';

describe('engine errors become Temporal failures of the same type', () => {
  it('keeps type, message, cause, Retry-After and details; retryability follows the type', () => {
    const cause = new Error('HTTP 429');
    const f = toTemporalFailure(
      new EngineError(LLM_FAILURE.unavailable, 'rate-limited', { cause, retryAfterMs: 1500 }),
    ) as ApplicationFailure;
    expect(f).toBeInstanceOf(ApplicationFailure);
    expect(f).toMatchObject({ type: 'LlmUnavailable', message: 'rate-limited', nonRetryable: false, nextRetryDelay: 1500 });
    expect(f.cause?.message).toBe('HTTP 429');

    const crash = toTemporalFailure(
      new EngineError(LEAN_FAILURE.replCrashed, 'died', { details: { exitCode: 134, signal: null } }),
    ) as ApplicationFailure;
    expect(crash).toMatchObject({ type: 'LeanReplCrashed', nonRetryable: false, details: [{ exitCode: 134, signal: null }] });

    const bad = toTemporalFailure(new EngineError(LLM_FAILURE.badReply, 'no JSON')) as ApplicationFailure;
    expect(bad).toMatchObject({ type: 'LlmBadReply', nonRetryable: true });
    expect(bad.nextRetryDelay).toBeUndefined();
  });

  it('passes anything else through untouched (a cancellation must stay a cancellation)', async () => {
    const abort = new Error('aborted');
    expect(toTemporalFailure(abort)).toBe(abort);
    await expect(mapEngineErrors(Promise.reject(abort))).rejects.toBe(abort);
    await expect(mapEngineErrors(Promise.reject(new EngineError(EMBEDDER_FAILURE.notFound, 'no model')))).rejects.toBeInstanceOf(
      ApplicationFailure,
    );
  });

  it('makes activity failures retryable or not by the same table', () => {
    expect(activityFailure(INDEX_FAILURE.unknownLibrary, 'unknown library "x"')).toMatchObject({
      type: 'UnknownLibrary',
      nonRetryable: true,
    });
    expect(activityFailure(LEAN_FAILURE.headerTimeout, 'slow')).toMatchObject({ type: 'LeanHeaderTimeout', nonRetryable: false });
  });

  it('lists for the workflows every type no retry can fix, and none that a retry can', () => {
    for (const t of [
      'LlmNotConfigured',
      'LlmBadRequest',
      'LlmUnauthorized',
      'LlmNotFound',
      'LlmRejected',
      'LlmBadReply',
      'UnknownLibrary',
      'CorpusChanged',
      'IncompleteBuild',
      'BadIndexRequest',
      'BadCorpus',
    ]) {
      expect(NON_RETRYABLE_TYPES).toContain(t);
    }
    for (const t of ['LlmUnavailable', 'EmbedderUnavailable', 'LeanReplCrashed', 'LeanHeaderTimeout'])
      expect(NON_RETRYABLE_TYPES).not.toContain(t);
    expect(new Set(FAILURE_TYPES).size).toBe(FAILURE_TYPES.length);
  });
});

describe('rootCauseMessage', () => {
  it('says what went wrong: the innermost message, past causes without one', () => {
    const inner = ApplicationFailure.create({ type: LLM_FAILURE.badReply, message: 'the reply had no JSON object' });
    const silent = Object.assign(new Error(''), { cause: inner });
    const outer = Object.assign(new Error('Activity task failed'), { cause: silent });
    expect(rootCauseMessage(outer)).toBe('the reply had no JSON object');
    expect(rootCauseMessage(Object.assign(new Error('only this'), { cause: new Error('') }))).toBe('only this');
    expect(rootCauseMessage('plain text')).toBe('plain text');
  });
});
