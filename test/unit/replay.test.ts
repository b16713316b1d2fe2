// Workflow code must stay deterministic: recorded histories replay against today's code.
// Re-record after an intended, versioned change with: RECORD_HISTORIES=1 npx vitest run test/integration/workflow-formalize.test.ts test/integration/workflow-lean-tools.test.ts test/integration/index-build.test.ts test/integration/workflow-agent.test.ts test/integration/workflow-sweep.test.ts test/integration/sweep-predictions.test.ts test/integration/sweep-rescore.test.ts
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import { quietRuntime, workflowBundle } from '../helpers/stack';

// Replay workers would otherwise log each state change of each replay (hundreds of lines in CI).
quietRuntime();

const DIR = fileURLToPath(new URL('../fixtures/histories/', import.meta.url));
const files = readdirSync(DIR).filter((f) => f.endsWith('.json'));

describe('replay of recorded histories', () => {
  it('has recorded histories of every path that matters to replay', () => {
    // A completed run, repair rounds (with name resolution), an equivalence check, a skipped
    // compile, an index build, an agent run (formalizeAgent), a sweep, a sweep's retry round
    // (`driftline sweep retry`), a sweep with a predictions configuration and one of its
    // evaluateStatement children, a batch of Lean checks (checkStatements), a rescore's unit
    // judged again and one carried over (rejudge); and runs recorded
    // before the ledger read became a local activity (the 'llm-usage-local' patch), which
    // still replay on the old path.
    expect(files.sort()).toEqual([
      'build-index.json',
      'check-statements.json',
      'evaluate-statement.json',
      'formalize-agent-before-usage-local.json',
      'formalize-agent-completed.json',
      'formalize-compile-skipped.json',
      'formalize-completed-before-usage-local.json',
      'formalize-completed.json',
      'formalize-equivalence.json',
      'formalize-name-resolution.json',
      'formalize-repairs-exhausted.json',
      'rejudge-carried.json',
      'rejudge-completed.json',
      'sweep-completed.json',
      'sweep-predictions.json',
      'sweep-retry.json',
    ]);
  });

  for (const file of files) {
    it(`replays ${file} without a determinism error`, async () => {
      const history = historyFromJSON(JSON.parse(readFileSync(join(DIR, file), 'utf8')));
      await expect(Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, history)).resolves.toBeUndefined();
    });
  }

  it('notices when the workflow code no longer matches a history', async () => {
    // The same history against a workflow that schedules different activities must fail,
    // or the test above could not catch anything.
    const history = historyFromJSON(JSON.parse(readFileSync(join(DIR, 'formalize-completed.json'), 'utf8')));
    const events = history.events ?? [];
    const scheduled = events.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'retrieve');
    scheduled!.activityTaskScheduledEventAttributes!.activityType!.name = 'somethingElse';
    await expect(Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, history)).rejects.toBeInstanceOf(
      DeterminismViolationError,
    );
  });

  it('notices when the agent workflow no longer matches its history', async () => {
    const history = historyFromJSON(JSON.parse(readFileSync(join(DIR, 'formalize-agent-completed.json'), 'utf8')));
    const scheduled = (history.events ?? []).find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'resolveName');
    scheduled!.activityTaskScheduledEventAttributes!.activityType!.name = 'inspectName';
    await expect(Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, history)).rejects.toBeInstanceOf(
      DeterminismViolationError,
    );
  });
});
