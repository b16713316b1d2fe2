// The Lean workers' integrity events (decision 0017) as a small JSON file in the data directory:
// each worker process adds to its own entry (keyed `<pid>@<host>`, so two workers sharing the
// directory never lose each other's counts), and the API sums them for /readyz. Worker and API
// are separate processes; the Prometheus counter is the worker's alone. Only kinds, counts and
// times go here: the detail and the trust domain (an API key's name) stay in the worker's log.
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { IntegrityEvent } from './repl-pool';
import { writeJsonAtomic } from '../status-file';

export interface LeanIntegrityCounts {
  tampering: number;
  disagreement: number;
  /** When the latest event was recorded (ISO), and its kind. */
  lastAt?: string;
  lastKind?: IntegrityEvent['kind'];
}

/** The file in a data directory: Lean workers write it, the API reads it. */
export function leanIntegrityFile(dataDir: string): string {
  return join(dataDir, 'lean-integrity.json');
}

function readAll(file: string): Record<string, LeanIntegrityCounts> {
  try {
    const value = JSON.parse(readFileSync(file, 'utf8')) as unknown;
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, LeanIntegrityCounts>) : {};
  } catch {
    return {};
  }
}

const count = (n: unknown): number => (typeof n === 'number' && Number.isFinite(n) && n >= 0 ? n : 0);

/** Every worker's events summed (zeros when none were recorded). */
export function readLeanIntegrity(file: string): LeanIntegrityCounts {
  const sum: LeanIntegrityCounts = { tampering: 0, disagreement: 0 };
  for (const entry of Object.values(readAll(file))) {
    if (!entry || typeof entry !== 'object') continue;
    sum.tampering += count(entry.tampering);
    sum.disagreement += count(entry.disagreement);
    if (typeof entry.lastAt === 'string' && (sum.lastAt === undefined || entry.lastAt > sum.lastAt)) {
      sum.lastAt = entry.lastAt;
      if (entry.lastKind === 'tampering' || entry.lastKind === 'disagreement') sum.lastKind = entry.lastKind;
    }
  }
  return sum;
}

/** Adds one event to this process's entry; written by rename so a reader never sees half a file. */
export function recordLeanIntegrity(
  file: string,
  kind: IntegrityEvent['kind'],
  at: Date = new Date(),
  worker = `${process.pid}@${hostname()}`,
): void {
  const all = readAll(file);
  const mine = all[worker] ?? { tampering: 0, disagreement: 0 };
  all[worker] = { ...mine, [kind]: count(mine[kind]) + 1, lastAt: at.toISOString(), lastKind: kind };
  writeJsonAtomic(file, all);
}
