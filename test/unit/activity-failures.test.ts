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
import { createActivities } from '../../activities';
import { createLlmClient } from '../../engines/llm/client';
import { IndexRegistry } from '../../engines/retrieval/index-registry';
import type { IndexStore } from '../../engines/retrieval/stores/store';

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

describe('opening an index keeps the failure type (activities/index.ts)', () => {
  const input = (library: string, indexVersion?: string) => ({
    library,
    statement: 'p is prime',
    subqueries: [],
    mode: 'monolithic' as const,
    topK: 3,
    exclude: [],
    gold: [],
    ...(indexVersion ? { indexVersion } : {}),
  });
  // A store that is down: every call fails as a client's would while Qdrant restarts.
  const down = new Proxy({ kind: 'qdrant' } as unknown as IndexStore, {
    get: (target, key) =>
      key === 'kind' ? 'qdrant' : key === 'then' ? undefined : () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:6333')),
  });
  const activities = createActivities({
    llm: createLlmClient(null),
    indexes: new IndexRegistry({ libraries: [{ name: 'mini', corpusPath: '/nonexistent/mini.jsonl' }], store: down }),
  });

  it('names only an unknown library UnknownLibrary (not retried)', async () => {
    await expect(activities.retrieve(input('nope'))).rejects.toMatchObject({ type: 'UnknownLibrary', nonRetryable: true });
    await expect(activities.retrieve(input('nope', 'nope-v1'))).rejects.toMatchObject({ type: 'UnknownLibrary', nonRetryable: true });
  });

  it('lets a store outage through as itself, which the retry policy retries', async () => {
    for (const pinned of [undefined, 'mini-v1']) {
      const err = await activities.retrieve(input('mini', pinned)).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(Error);
      expect(err).not.toBeInstanceOf(ApplicationFailure);
      expect((err as Error).message).toMatch(/ECONNREFUSED/);
    }
    const illustrated = await activities
      .illustrate({ library: 'mini', statement: 's', premises: ['Nat.Prime'], m: 2, exclude: [] })
      .catch((e: unknown) => e);
    expect(illustrated).not.toBeInstanceOf(ApplicationFailure);
  });

  it('keeps an engine error its own type (an embedder that is down is retried)', async () => {
    const embedderDown = new Proxy({} as IndexStore, {
      get: (_t, key) =>
        key === 'kind'
          ? 'qdrant'
          : key === 'then'
            ? undefined
            : () => Promise.reject(new EngineError(EMBEDDER_FAILURE.unavailable, 'embedder 503')),
    });
    const a = createActivities({
      llm: createLlmClient(null),
      indexes: new IndexRegistry({ libraries: [{ name: 'mini', corpusPath: '/nonexistent/mini.jsonl' }], store: embedderDown }),
    });
    await expect(a.retrieve(input('mini'))).rejects.toMatchObject({ type: 'EmbedderUnavailable', nonRetryable: false });
  });
});
