// Preparing a sweep to start, for every door (the CLI's `sweep start`, the API's POST /v1/sweeps):
// the rules a sweep file must meet on what the stack serves, and what is read before anything
// starts (its items, each predictions file line by line, the index version it pins). The doors
// keep only their I/O (where files may be read from) and their wording of a file's errors.
import type { BenchmarkItem } from '../common/sweep';
import { runProvidersProblem } from '../common/run-config';
import { addLibraryHint } from './start-request';
import { loadBenchmarks } from '../engines/benchmarks/load';
import type { SweepSpec } from '../engines/sweeps/sweep-file';
import { describeProblem, ignoredNote, PredictionsError, readPredictions, type PredictionSet } from '../engines/sweeps/predictions';
import { SweepRequestError } from './sweeps';

/** Why a sweep file cannot start on what is served (its library, a configuration's LLM
 * provider, which would wait on its queue for ever), or null. */
export function sweepStartProblem(
  spec: SweepSpec,
  served: {
    libraries: readonly string[];
    providerNames: readonly string[];
    /** Whether the stack serves batch mode (asked only for a batch-mode sweep; unknown: not checked). */
    batchMode?: boolean;
  },
): string | null {
  if (!served.libraries.includes(spec.library))
    return `library: "${spec.library}" is not configured; known: ${served.libraries.join(', ') || 'none'}. ${addLibraryHint(spec.library)}`;
  if (spec.llm?.batch && served.batchMode === false)
    return (
      'llm.batch: batch mode was asked for, but the stack has no batch-capable LLM provider (no worker serves batch-mode calls); ' +
      'start its workers with DRIFTLINE_LLM_BATCH=1 (or "batch": true for a provider in DRIFTLINE_PROVIDERS)'
    );
  for (const c of spec.configurations) {
    const problem = runProvidersProblem(c.config, [...served.providerNames]);
    if (problem) return `configurations.${c.name}: ${problem}`;
  }
  return null;
}

export interface PreparedSweep {
  items: BenchmarkItem[];
  /** The predictions configurations' files, read and checked, by configuration name. */
  predictions: Map<string, PredictionSet>;
  /** What the caller should be told (nothing is wrong): lines ignored, items without premises. */
  notes: string[];
  /** The version the library's alias names now, when the sweep file pins none. */
  currentIndexVersion?: string;
}

export interface PrepareSources {
  /** The benchmarks to load (the door may have resolved their paths). */
  benchmarks: SweepSpec['benchmarks'];
  /** A configuration's predictions file as the door reads it (default: its path as given). */
  predictionsPath?: (configuration: string, path: string) => Promise<string>;
  /** How the caller names a configuration's predictions file in notes and errors (default: its
   * path, and a file's errors as the engine words them). */
  predictionsName?: (configuration: string, path: string) => string;
  /** The library alias's current version (absent: the sweep pins what its file says). */
  currentIndexVersion?: (library: string) => Promise<string | undefined>;
}

/** Reads everything a sweep needs before it starts. Engine errors (a benchmark's
 * BenchmarkError, a predictions file's PredictionsError) reach the door, which words them. */
export async function prepareSweep(spec: SweepSpec, sources: PrepareSources): Promise<PreparedSweep> {
  const items = await loadBenchmarks(sources.benchmarks);
  if (items.length === 0) throw new SweepRequestError('benchmark: the selection has no items');
  const notes: string[] = [];
  if (spec.configurations.some((c) => c.config.retrieval === 'oracle')) {
    const without = items.filter((i) => i.goldPremises.length === 0).length;
    if (without > 0) notes.push(`${without} items have no gold premises; oracle retrieval gives them none`);
  }
  const predictions = new Map<string, PredictionSet>();
  for (const c of spec.configurations) {
    if (!c.predictions) continue;
    const path = sources.predictionsPath ? await sources.predictionsPath(c.name, c.predictions.path) : c.predictions.path;
    const name = sources.predictionsName?.(c.name, c.predictions.path);
    let set: PredictionSet;
    try {
      set = await readPredictions({ ...c.predictions, path }, { items: items.map((i) => i.id), samples: spec.samples });
    } catch (err) {
      // A door that names files its own way gets the problem under that name, and nothing more.
      if (err instanceof PredictionsError && name !== undefined) throw new SweepRequestError(describeProblem(err.at, name));
      throw err;
    }
    const note = ignoredNote(set, name ?? c.predictions.path);
    if (note) notes.push(note);
    predictions.set(c.name, set);
  }
  const current = spec.indexVersion ? undefined : await sources.currentIndexVersion?.(spec.library).catch(() => undefined);
  return { items, predictions, notes, ...(current ? { currentIndexVersion: current } : {}) };
}
