// What the main worker learnt about each LLM provider, as a small JSON file keyed by provider
// name, written whenever it learns something and read by the API for /readyz: they are separate
// processes. Two providers may share a base URL and still differ (another model behind it).
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { ProviderStatus } from './provider';

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
  mkdirSync(dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(all, null, 2)}\n`);
  renameSync(tmp, file);
}
