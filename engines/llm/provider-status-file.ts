// What the main worker learnt about each LLM provider, as a small JSON file keyed by provider
// name, written whenever it learns something and read by the API for /readyz: they are separate
// processes. Two providers may share a base URL and still differ (another model behind it).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ProviderStatus } from './provider';
import { writeJsonAtomic } from '../status-file';

/** The file in a data directory: the main worker writes it, the API and the CLI read it. */
export function providerStatusFile(dataDir: string): string {
  return join(dataDir, 'llm-provider.json');
}

/** Every provider's last status, by provider name; empty when the worker has not written yet. */
export function readProviderStatuses(file: string): Record<string, ProviderStatus> {
  try {
    const value = JSON.parse(readFileSync(file, 'utf8')) as unknown;
    return value && typeof value === 'object' ? (value as Record<string, ProviderStatus>) : {};
  } catch {
    return {};
  }
}

/** Replaces this provider's entry; written by rename so a reader never sees half a file. */
export function writeProviderStatus(file: string, provider: string, status: ProviderStatus): void {
  const all = readProviderStatuses(file);
  all[provider] = status;
  writeJsonAtomic(file, all);
}
