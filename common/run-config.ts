// Pure helpers over RunConfig, usable from workflows, the API and the CLI.
import { DEFAULT_RUN_CONFIG, type RunConfig } from './types';

export function resolveRunConfig(partial: Partial<RunConfig> = {}): RunConfig {
  return { ...DEFAULT_RUN_CONFIG, ...partial };
}

/** A short label for a configuration, used as a search attribute and in reports,
 * e.g. `drift+decomp+ill3+rep3+judge` or `monolithic5+ill0+rep0`. */
export function describeConfig(config: RunConfig): string {
  const retrieval = config.retrieval === 'monolithic' ? `monolithic${config.topK}` : config.retrieval;
  const parts = [retrieval];
  if (config.retrieval === 'drift') parts.push(config.decompose ? 'decomp' : 'nodecomp');
  parts.push(config.illustrate ? `ill${config.examples}` : 'ill0');
  parts.push(`rep${config.repairRounds}`);
  if (config.judge) parts.push('judge');
  return parts.join('+');
}

/** The first words of a statement, for the run's memo in the Temporal UI. */
export function statementPreview(statement: string, words = 16): string {
  const all = statement.trim().split(/\s+/);
  return all.slice(0, words).join(' ') + (all.length > words ? ' …' : '');
}
