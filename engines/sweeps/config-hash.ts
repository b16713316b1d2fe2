// The hash of everything in a configuration cell that affects its results: what `--reuse`
// matches a finished cell of an earlier sweep on.
import { createHash } from 'node:crypto';
import { resolveRunConfig } from '../../common/run-config';
import type { LeaveOutPolicy } from '../../common/sweep';
import type { RunConfig } from '../../common/run-config-schema';

/** JSON with object keys sorted at every level, so equal values hash equally. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

export interface CellIdentity {
  config: Partial<RunConfig>;
  library: string;
  indexVersion: string | undefined;
  leaveOut: LeaveOutPolicy;
  /** A predictions configuration: its file's sha256 and field map, so `--reuse` never matches a
   * cell read from another file (or read differently). */
  predictions?: { sha256: string; fields: Record<string, string | undefined> };
}

/** sha256 over the resolved run configuration (defaults filled in, so `{}` and the explicit
 * defaults hash alike), the library, the index version and the leave-out policy; 16 hex. A
 * predictions configuration hashes its file's content and field map in place of the index
 * version and leave-out policy, which nothing of it reads (a file's statements evaluated before
 * and after an index promotion are the same results). Generated cells hash exactly as before
 * predictions existed. */
export function configHash(cell: CellIdentity): string {
  const identity = cell.predictions
    ? { config: resolveRunConfig(cell.config), library: cell.library, predictions: cell.predictions }
    : {
        config: resolveRunConfig(cell.config),
        library: cell.library,
        indexVersion: cell.indexVersion ?? null,
        leaveOut: cell.leaveOut,
      };
  return createHash('sha256').update(canonicalJson(identity)).digest('hex').slice(0, 16);
}
