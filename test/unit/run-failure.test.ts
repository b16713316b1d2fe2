// A failed run's message as the API and CLI show it: the stage, and our own failure with the
// model, endpoint and reason, rather than the deepest cause alone ("Request timed out.").
import { WorkflowFailedError } from '@temporalio/client';
import { ActivityFailure, ApplicationFailure, TimeoutFailure } from '@temporalio/common';
import { APIConnectionTimeoutError } from 'openai';
import { describe, expect, it } from 'vitest';
import { toTemporalFailure } from '../../activities/failures';
import { toLlmError } from '../../engines/llm/errors';
import { describeRunFailure } from '../../client/run-failure';
import { RETIRED_ACTIVITIES, stageOfActivity } from '../../common/stages';

const target = { model: 'gemma-3-270m', baseURL: 'http://127.0.0.1:8000/v1', timeoutMs: 120_000 };

function asFromTemporal(err: ApplicationFailure): ApplicationFailure {
  // What arrives at the client: the SDK error as a cause with its message and class name.
  const cause = err.cause ? ApplicationFailure.create({ message: err.cause.message, type: err.cause.constructor.name }) : undefined;
  return ApplicationFailure.create({
    message: err.message,
    type: err.type ?? undefined,
    nonRetryable: Boolean(err.nonRetryable),
    ...(cause ? { cause } : {}),
  });
}

describe('describeRunFailure', () => {
  it('shows the stage, the model, the endpoint and the reason of an LLM timeout, with the SDK cause after it', () => {
    const failure = toTemporalFailure(
      toLlmError(new APIConnectionTimeoutError(), target, undefined, () => ({ backoffMs: 60_000 })),
    ) as ApplicationFailure;
    const activity = new ActivityFailure(
      'Activity task failed',
      'decompose',
      '1',
      'MAXIMUM_ATTEMPTS_REACHED',
      'worker@host',
      asFromTemporal(failure),
    );
    const described = describeRunFailure(new WorkflowFailedError('Workflow execution failed', activity, 'NON_RETRYABLE_FAILURE'));
    expect(described.stage).toBe('decompose');
    expect(described.type).toBe('LlmUnavailable');
    expect(described.message).toMatch(
      /^stage decompose failed: LLM call to model "gemma-3-270m" at http:\/\/127\.0\.0\.1:8000\/v1 timed out after 120000 ms/,
    );
    expect(described.message).toContain('(cause: Request timed out.)');
    expect(described.message).toContain('gave up after the last retry');
  });

  it('does not repeat a cause the message already carries', () => {
    const inner = ApplicationFailure.create({ message: '500 out of memory', type: 'InternalServerError' });
    const outer = ApplicationFailure.create({
      message: 'LLM answered HTTP 500 for model "m" at u (500 out of memory)',
      type: 'LlmUnavailable',
      cause: inner,
    });
    const activity = new ActivityFailure('Activity task failed', 'judge', '9', 'MAXIMUM_ATTEMPTS_REACHED', 'w', outer);
    expect(describeRunFailure(new WorkflowFailedError('Workflow execution failed', activity, 'MAXIMUM_ATTEMPTS_REACHED')).message).toBe(
      'stage judge failed: LLM answered HTTP 500 for model "m" at u (500 out of memory); gave up after the last retry',
    );
  });

  it.each([
    ['formalize', 'formalize'],
    ['repair', 'repair'],
    // Runs started before a patch retired their activity (draftStatement): named by its stage.
    ...RETIRED_ACTIVITIES.map((r) => [r.activity, stageOfActivity(r.activity)!] as [string, string]),
  ])('says when Temporal itself stopped an activity (%s: stage %s)', (activityType, stage) => {
    const activity = new ActivityFailure(
      'Activity task timed out',
      activityType,
      '5',
      'TIMEOUT',
      'w',
      new TimeoutFailure('activity StartToClose timeout', undefined, 'START_TO_CLOSE'),
    );
    const described = describeRunFailure(new WorkflowFailedError('Workflow execution failed', activity, 'TIMEOUT'));
    expect(described.message).toBe(`stage ${stage} failed: Temporal stopped the activity: its start-to-close timeout passed`);
  });

  it('keeps a failure raised by the workflow itself as it is', () => {
    const own = ApplicationFailure.create({ message: 'unknown library "x"', type: 'UnknownLibrary', nonRetryable: true });
    expect(describeRunFailure(new WorkflowFailedError('Workflow execution failed', own, 'NON_RETRYABLE_FAILURE'))).toEqual({
      type: 'UnknownLibrary',
      message: 'unknown library "x"',
    });
  });
});
