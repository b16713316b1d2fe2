// The leave-out policy reaches the stages through the formalize workflow: on the real Temporal
// dev server, with the real workers and activities over the fixture library, whose two theorems
// of Mathlib.FieldTheory.Finite.Basic share their premises.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { createStack, startTemporal, type TestStack } from '../helpers/stack';

const STATEMENT = 'If p is prime and a is a unit modulo p, the order of a divides p - 1.';
const ITEM = 'ZMod.pow_card_sub_one_eq_one';
const SIBLING = 'ZMod.orderOf_dvd_card_sub_one';

let env: TestWorkflowEnvironment;
let s: TestStack;

beforeAll(async () => {
  env = await startTemporal();
  s = await createStack(env);
});

afterAll(async () => {
  await s?.close();
  await env?.teardown();
});

async function illustrateInputs(id: string): Promise<unknown[]> {
  const history = await s.client.workflow.getHandle(id).fetchHistory();
  const { defaultPayloadConverter } = await import('@temporalio/common');
  return (history.events ?? [])
    .map((e) => e.activityTaskScheduledEventAttributes)
    .filter((a) => a?.activityType?.name === 'illustrate')
    .map((a) => defaultPayloadConverter.fromPayload(a!.input!.payloads![0]!));
}

describe('formalize workflow with a leave-out policy', () => {
  it("shows no theorem of the item's own file as an example under `file`, and does under `item`", async () => {
    const gold = { goldPremises: ['Fact', 'Nat.Prime', 'ZMod', 'orderOf'], exclude: [ITEM] };
    const byItem = await s.start(STATEMENT, { retrieval: 'oracle' }, gold);
    const byFile = await s.start(STATEMENT, { retrieval: 'oracle' }, { ...gold, leaveOut: 'file' });
    const [item, file] = await s.withWorkers(() => Promise.all([s.result(byItem), s.result(byFile)]));

    // The sibling covers all four premises, so greedy coverage picks it when it may.
    expect(item.examples.map((e) => e.name)).toContain(SIBLING);
    expect(file.examples.map((e) => e.name)).not.toContain(SIBLING);
    expect(file.examples.map((e) => e.name)).not.toContain(ITEM);
    // Definitions stay: the oracle's premises are the same under both policies.
    expect(file.premises.map((p) => p.name).sort()).toEqual(item.premises.map((p) => p.name).sort());

    expect(await illustrateInputs(byFile)).toEqual([expect.objectContaining({ exclude: [ITEM], leaveOut: 'file' })]);
    // Without a policy the activity input is what it always was (no leaveOut field).
    expect(Object.keys((await illustrateInputs(byItem))[0] as object)).not.toContain('leaveOut');
  });
});
