// Which libraries the running stack serves, asked of the stack rather than of the caller's own
// environment (DRIFTLINE_LIBRARIES is the workers' setting: they read the corpus files). The main
// worker records its libraries in the data directory as it starts, beside its LLM providers'
// status (engines/llm/provider-status-file.ts); a client that shares the data directory reads
// them here. Temporal cannot be asked: libraries have no task queue of their own.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeJsonAtomic } from '../engines/status-file';

/** What the main worker serves: its libraries, the first being the default one. */
export interface ServedLibraries {
  libraries: string[];
  defaultLibrary: string;
}

/** The file in a data directory: the main worker writes it, the CLI reads it. */
export function servedLibrariesFile(dataDir: string): string {
  return join(dataDir, 'libraries.json');
}

/** Records the libraries a main worker serves (the first is the default); written by rename so
 * a reader never sees half a file. A worker that restarts with other libraries replaces them. */
export function recordServedLibraries(dataDir: string, libraries: readonly string[]): void {
  const file = servedLibrariesFile(dataDir);
  writeJsonAtomic(file, { libraries: [...libraries] });
}

/** The libraries the stack recorded in `dataDir`, or undefined when no main worker has recorded
 * any there (none started with this data directory) or the file is not one it wrote. */
export function readServedLibraries(dataDir: string): ServedLibraries | undefined {
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(servedLibrariesFile(dataDir), 'utf8'));
  } catch {
    return undefined;
  }
  const libraries = (value as { libraries?: unknown } | null)?.libraries;
  if (!Array.isArray(libraries) || !libraries.every((l): l is string => typeof l === 'string' && l.length > 0)) return undefined;
  return { libraries, defaultLibrary: libraries[0] ?? '' };
}
