// `driftline setup-temporal` on a Temporal server that has never heard of driftline: the search
// attributes the workflow sets get registered, and a second run changes nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Connection } from '@temporalio/client';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { ALL_SEARCH_ATTRIBUTE_KEYS } from '../../common/search-attributes';
import { requireTemporalCli } from '../../infra/temporal-cli';
import { registerSearchAttributes } from '../../infra/temporal-setup';

let env: TestWorkflowEnvironment;
let connection: Connection;

beforeAll(async () => {
  // No search attributes registered at start, as on a fresh cluster.
  env = await TestWorkflowEnvironment.createLocal({
    server: { executable: { type: 'existing-path', path: requireTemporalCli() }, ip: '127.0.0.1', ui: false },
  });
  connection = env.connection as Connection;
});

afterAll(async () => {
  await env?.teardown();
});

describe('setup-temporal', () => {
  it('registers every driftline search attribute once', async () => {
    const namespace = env.namespace ?? 'default';
    const before = await connection.operatorService.listSearchAttributes({ namespace });
    expect(Object.keys(before.customAttributes ?? {})).not.toContain('DriftlineOutcome');

    const first = await registerSearchAttributes(connection, namespace, { timeoutMs: 20_000 });
    expect(first.added.sort()).toEqual(ALL_SEARCH_ATTRIBUTE_KEYS.map((k) => k.name).sort());

    const after = await connection.operatorService.listSearchAttributes({ namespace });
    for (const key of ALL_SEARCH_ATTRIBUTE_KEYS) expect(Object.keys(after.customAttributes ?? {})).toContain(key.name);

    const second = await registerSearchAttributes(connection, namespace, { timeoutMs: 20_000 });
    expect(second.added).toEqual([]);
    expect(second.present).toHaveLength(ALL_SEARCH_ATTRIBUTE_KEYS.length);
  });

  it('says which namespace it could not reach', async () => {
    await expect(registerSearchAttributes(connection, 'no-such-namespace', { timeoutMs: 100 })).rejects.toThrow(/no-such-namespace/);
  });
});
