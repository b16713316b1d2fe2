// The trust domain travels from an activity's input to the Lean runner (decision 0017): the
// compile, equivalence and name-lookup activities hand it on; absent, the runner's default holds.
import { MockActivityEnvironment } from '@temporalio/testing';
import { describe, expect, it } from 'vitest';
import { createLeanActivities } from '../../activities';
import type { CompileResult } from '../../common/lean-types';
import { apiKeyDomain, checksDomain, predictionsDomain } from '../../common/trust-domain';
import type { CheckOptions, LeanRunner } from '../../engines/lean/runner-contract';

class RecordingRunner implements LeanRunner {
  readonly domains: (string | undefined)[] = [];
  async check(_code: string, opts: CheckOptions = {}): Promise<CompileResult> {
    this.domains.push(opts.domain);
    return { status: 'ok', messages: [{ severity: 'info', line: 1, column: 0, text: 'Nat.Prime : ℕ → Prop' }], durationMs: 1 };
  }
  async close(): Promise<void> {}
  ready(): boolean {
    return true;
  }
}

describe('trust domains through the Lean activities', () => {
  it('hands the domain of each activity input to the runner, and nothing when none is given', async () => {
    const runner = new RecordingRunner();
    const activities = createLeanActivities({ lean: runner });
    const env = new MockActivityEnvironment();
    await env.run(activities.compile, { code: 'theorem t : True := by sorry', domain: 'key:alice' });
    await env.run(activities.compile, { code: 'theorem t : True := by sorry' });
    await env.run(activities.inspectName, { name: 'Nat.Prime', domain: 'predictions:s/c' });
    await env.run(activities.equivalence, {
      candidate: 'theorem c : True := by sorry',
      gold: 'theorem g : True := by sorry',
      domain: 'key:bob',
    });
    expect(runner.domains.slice(0, 3)).toEqual(['key:alice', undefined, 'predictions:s/c']);
    expect(new Set(runner.domains.slice(3))).toEqual(new Set(['key:bob']));
  });

  it('names domains so that different sources never coincide', () => {
    const names = [apiKeyDomain('a'), apiKeyDomain(undefined), predictionsDomain('s', 'a'), checksDomain('a'), 'driftline'];
    expect(new Set(names).size).toBe(names.length);
  });
});
