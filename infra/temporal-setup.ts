// `driftline setup-temporal`: registers driftline's search attributes on a Temporal cluster (the
// dev server gets them at start), and with --create-namespace the namespace first. The `formalize` workflow sets them, so it cannot run on a
// namespace that lacks them. Waits for Temporal and the namespace to answer; adds only what is
// missing, so running it again is harmless.
import type { Connection } from '@temporalio/client';
import proto from '@temporalio/proto';
import { msToTs } from '@temporalio/common/lib/time';
import { ALL_SEARCH_ATTRIBUTE_KEYS } from '../common/search-attributes';

const { IndexedValueType } = proto.temporal.api.enums.v1;

export interface SetupResult {
  added: string[];
  present: string[];
}

export async function registerSearchAttributes(
  connection: Connection,
  namespace: string,
  opts: { timeoutMs?: number; log?: (message: string) => void } = {},
): Promise<SetupResult> {
  const deadline = Date.now() + (opts.timeoutMs ?? 120_000);
  let lastError: unknown;
  for (;;) {
    try {
      const existing = await connection.operatorService.listSearchAttributes({ namespace });
      const known = new Set([...Object.keys(existing.customAttributes ?? {}), ...Object.keys(existing.systemAttributes ?? {})]);
      const missing = ALL_SEARCH_ATTRIBUTE_KEYS.filter((key) => !known.has(key.name));
      const present = ALL_SEARCH_ATTRIBUTE_KEYS.filter((key) => known.has(key.name)).map((key) => key.name);
      if (missing.length > 0) {
        await connection.operatorService.addSearchAttributes({
          namespace,
          searchAttributes: Object.fromEntries(missing.map((key) => [key.name, IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD])),
        });
      }
      return { added: missing.map((key) => key.name), present };
    } catch (err) {
      // Temporal still starting, or the namespace not created yet: try again until the deadline.
      lastError = err;
      if (Date.now() > deadline) break;
      opts.log?.(`waiting for Temporal namespace "${namespace}": ${(err as Error).message}`);
      await new Promise((r) => setTimeout(r, 2000));
    }
  }
  throw new Error(`cannot register search attributes in namespace "${namespace}": ${(lastError as Error)?.message}`);
}

/** Registers the namespace when the cluster does not know it (a new cluster has only
 * `temporal-system`), with one day of retention as the dev server's, then waits until the
 * frontend serves it (its namespace cache refreshes every few seconds). Returns whether it was
 * registered here. Not for Temporal Cloud, where namespaces are made in its console. */
export async function ensureNamespace(
  connection: Connection,
  namespace: string,
  opts: { timeoutMs?: number; log?: (message: string) => void } = {},
): Promise<boolean> {
  const deadline = Date.now() + (opts.timeoutMs ?? 120_000);
  let registered = false;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      await connection.workflowService.describeNamespace({ namespace });
      // Served by the frontend's cache and by visibility, not only stored.
      await connection.workflowService.listWorkflowExecutions({ namespace, pageSize: 1 });
      return registered;
    } catch (err) {
      lastError = err;
      if ((err as { code?: number }).code === 5 /* NOT_FOUND */ && !registered) {
        opts.log?.(`registering namespace "${namespace}"`);
        try {
          await connection.workflowService.registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs('1 day') });
          registered = true;
        } catch (e) {
          if ((e as { code?: number }).code === 6 /* ALREADY_EXISTS */) registered = true;
          else lastError = e;
        }
      }
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
  throw new Error(`namespace "${namespace}" is not served: ${(lastError as Error)?.message}`);
}
