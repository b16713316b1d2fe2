// The provider's status as a small JSON file (keyed by base URL), written by the main worker
// whenever it learns something and read by the API for /readyz: they are separate processes.
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { ProviderStatus } from './provider';

function readAll(file: string): Record<string, ProviderStatus> {
  try {
    const value = JSON.parse(readFileSync(file, 'utf8')) as unknown;
    return value && typeof value === 'object' ? (value as Record<string, ProviderStatus>) : {};
  } catch {
    return {};
  }
}

/** Replaces this provider's entry; written by rename so a reader never sees half a file. */
export function writeProviderStatus(file: string, status: ProviderStatus): void {
  const all = readAll(file);
  all[status.baseURL] = status;
  mkdirSync(dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(all, null, 2)}\n`);
  renameSync(tmp, file);
}

export function readProviderStatus(file: string, baseURL: string): ProviderStatus | undefined {
  return readAll(file)[baseURL];
}
